"""Terminal and JSON renderings of a smoke verdict."""

from __future__ import annotations

import json
from typing import Any

import typer

from ascend_env.explain.inline import explained_lines
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
        typer.echo(f"  {MARKS[check.status]:<4}  {check.id:<16}{where} {check.message}")
    limits = verdict.thresholds
    if limits.chip:
        peaks = ", ".join(f"{k} {v:g} TFLOPS" for k, v in limits.peak_tflops.items()) or "none"
        typer.echo(f"  chip {limits.chip}: peak {peaks} ({limits.peak_source})")

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


def collective_exit(document: dict[str, Any]) -> int:
    """0 ok; 2 when no host could run its part (nothing was measured); 1 otherwise."""
    if document["status"] == "ok":
        return 0
    per_host = document.get("per_host") or {}
    if per_host and all(v.get("status") == "error" for v in per_host.values()):
        return 2
    return 1


def render_collective(document: dict[str, Any], *, as_json: bool) -> int:
    """The all-reduce across hosts (or each pair of them); returns the exit code."""
    if as_json:
        typer.echo(json.dumps(document, indent=2, ensure_ascii=False))
        return collective_exit(document)
    if document.get("mode") == "pairwise":
        typer.echo(f"smoke hccl, every pair of {len(document['hosts'])} hosts: "
                   f"{document['status'].upper()}")
        for pair in document["pairs"]:
            figure = f"busbw {pair['busbw_gbps']:.3f} GB/s at {pair['bytes']} B" \
                if pair["busbw_gbps"] is not None else "no figure"
            typer.echo(f"  {'ok  ' if pair['status'] == 'ok' else 'FAIL'}  "
                       f"{' <-> '.join(pair['hosts'])}: {figure}")
        if document["slowest"]:
            typer.echo(f"  slowest: {' <-> '.join(document['slowest']['hosts'])}")
    else:
        typer.echo(f"smoke hccl across {len(document['hosts'])} hosts, "
                   f"{document['world_size']} {document['backend'] or '?'} rank(s): "
                   f"{document['status'].upper()}")
        for row in document["results"]:
            typer.echo(f"  {row['bytes']:>12} B  algbw {row['algbw_gbps']:9.3f} GB/s  busbw "
                       f"{row['busbw_gbps']:9.3f} GB/s  {'correct' if row['correct'] else 'WRONG'}")
        for taken in document.get("ports_taken") or ():
            typer.echo(f"  rendezvous {taken['master']} was taken on the first host; "
                       f"drawn again")
    for problem in document["problems"]:
        typer.echo(f"  FAIL  {problem}")
    if document.get("failing_hosts"):
        typer.echo(f"  at fault: {', '.join(document['failing_hosts'])} (first failure: "
                   f"{document['first_failure']})")
    return collective_exit(document)
