"""Terminal and JSON renderings of a smoke verdict."""

from __future__ import annotations

import json
from typing import Any

import typer

from ascend_env.smoke.evidence import explained
from ascend_env.smoke.verdict import Verdict

MARKS = {"pass": "pass", "warn": "WARN", "fail": "FAIL", "skip": "skip"}


def verdict_json(verdict: Verdict) -> dict[str, Any]:
    """The verdict as JSON; the evidence gains `explained`, the known Ascend errors of its
    log tails (the knowledge base of `ascend-env explain`)."""
    document = verdict.model_dump(mode="json", by_alias=True)
    if isinstance(document.get("evidence"), dict):
        document["evidence"]["explained"] = explained(document["evidence"])
    return document


def render_verdict(verdict: Verdict, *, as_json: bool) -> None:
    """The verdict: JSON with the evidence inside, or one line per check."""
    if as_json:
        typer.echo(json.dumps(verdict_json(verdict), indent=2, ensure_ascii=False))
        return
    outcome = verdict.outcome.upper()
    typer.echo(f"smoke {verdict.framework} on {verdict.requested_device}: {outcome}")
    if verdict.outcome in ("pass", "cpu"):  # a failure's reasons are the check lines below
        typer.echo(f"  {verdict.summary}")
    for check in verdict.checks:
        where = f" [{check.device}]" if check.device else ""
        typer.echo(f"  {MARKS[check.status]:<4}  {check.id:<13}{where} {check.message}")
    limits = verdict.thresholds
    if limits.chip:
        peaks = ", ".join(f"{k} {v:g} TFLOPS" for k, v in limits.peak_tflops.items()) or "none"
        typer.echo(f"  chip {limits.chip}: peak {peaks} ({limits.peak_source})")
    from ascend_env.explain.inline import explained_lines  # noqa: PLC0415

    for line in explained_lines(explained(verdict.evidence)):
        typer.echo(line)


def render_fleet(results: dict[str, Verdict | Exception], *, as_json: bool) -> int:
    """One verdict per host (or why it could not run); returns the worst exit code."""
    codes = {name: r.exit_code if isinstance(r, Verdict) else getattr(r, "exit_code", 2)
             for name, r in results.items()}
    if as_json:
        typer.echo(json.dumps({
            "schema": "ascend-env/smoke/fleet/v1",
            "hosts": {name: verdict_json(r) if isinstance(r, Verdict)
                      else {"error": str(r)} for name, r in results.items()}},
            indent=2, ensure_ascii=False))
    else:
        for name, result in results.items():
            typer.echo(f"== {name}")
            if isinstance(result, Verdict):
                render_verdict(result, as_json=False)
            else:
                typer.echo(f"  could not run: {result}")
    return max(codes.values(), default=0)
