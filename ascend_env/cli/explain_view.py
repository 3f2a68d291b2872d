"""Terminal and JSON renderings of `ascend-env explain`: each log's first cause in full, its
echoes under it, then warnings; `--list` shows the knowledge base by family."""

from __future__ import annotations

import json
from collections import Counter

import typer

from ascend_env.explain.areas import AREA
from ascend_env.explain.confirm import HostChecks, involved_packages, verdict
from ascend_env.explain.match import Hit
from ascend_env.explain.numbers import describe
from ascend_env.explain.origins import ORIGIN
from ascend_env.explain.report import Explanation
from ascend_env.explain.rules import UNPLACED
from ascend_env.explain.signatures import Signature

MAX_UNKNOWN_SHOWN = 20
LIST_SCHEMA = "ascend-env/explain-list/v1"
_MARK = {"error": "x", "warning": "!", "info": "i"}


def _echo(text: str = "") -> None:
    typer.echo(text)


def render_explanation(explanation: Explanation, *, as_json: bool,
                       host: str | None = None, host_asked: bool = False) -> None:
    if as_json:
        typer.echo(json.dumps(explanation.to_json(), indent=2, ensure_ascii=False))
        return
    scan, inputs = explanation.scan, explanation.inputs
    names = len(inputs.sources)
    _echo(f"explain: {len(scan.hits)} known signature(s) in {names} input(s), "
          f"{scan.lines} line(s); {len(scan.unknown)} error-looking line(s) not known")
    for path, reason in inputs.skipped[:10]:
        _echo(f"  skipped {path}: {reason}")
    if len(inputs.skipped) > 10:
        _echo(f"  ... and {len(inputs.skipped) - 10} more skipped")
    for source in inputs.sources:
        if source.note:
            _echo(f"  {source.name}: {source.note}")
    if host_asked and scan.hits and not explanation.hosts:
        _echo("  no cause of these lines is one a host check can confirm; nothing was run")
    for down in explanation.unreachable:
        _echo(f"  {down.host}: not checked: {down.error}")
    for chain in scan.chains:
        _echo()
        label = "first cause" if chain.echoes else "error"
        if not chain.cause_found:
            label = "no cause found: this only reports an error the log does not show"
            if chain.lead.signature.family == UNPLACED:
                label = "a likely cause only: the record names no layer to confirm it in"
        _full(chain.lead, explanation.hosts, label)
        if chain.echoes:
            _echo(f"  echoes of it ({len(chain.echoes)}), reported because of the cause above:")
            for echo in chain.echoes:
                times = f" x{echo.count}" if echo.count > 1 else ""
                family = " (family match)" if echo.kind == "family" else ""
                _echo(f"    - {echo.signature.id}{times}{family} at {echo.source}:"
                      f"{echo.line_number}: {echo.line[:160]}")
    for hit in scan.hits:
        if hit.role is None:
            _echo()
            _full(hit, explanation.hosts, hit.signature.severity)
    _unknown_part(explanation, host)


def _full(hit: Hit, hosts: list[HostChecks], label: str) -> None:
    s = hit.signature
    times = f"  x{hit.count}" if hit.count > 1 else ""
    family = {"family": "  (family match: the code's class, not this code)",
              "rule": "  (rule: read from the record's structure)"}.get(hit.kind, "")
    if s.family == UNPLACED:
        family = "  (rule: read from the record's structure; no layer named)"
    elif s.id.startswith(AREA):
        family = "  (family match: the layer its words name, no cause)"
    elif s.id.startswith(ORIGIN):
        family = "  (family match: the package that raises the message, no cause)"
    _echo(f"{_MARK[s.severity]} {s.id}{times}  [{label}]{family}  at "
          f"{hit.source}:{hit.line_number}")
    _echo(f"    {hit.line[:300]}")
    if hit.numbers:
        _echo(f"  read: {describe(hit.numbers)}")
    _echo(f"  means: {s.meaning}")
    _echo("  likely causes:")
    for number, cause in enumerate(s.causes, start=1):
        checks = f"  (checks: {', '.join(cause.checks)})" if cause.checks else ""
        _echo(f"    {number}. {cause.text}{checks}")
        for checked in hosts:
            result = verdict(cause, checked)
            if result == "not checkable":
                continue
            seen = [checked.results[c] for c in cause.checks if c in checked.results]
            failing = [f"{r.id} {r.status}: {r.message}" for r in seen
                       if r.status in ("fail", "warn")]
            detail = f" - {'; '.join(failing)}" if failing else ""
            mark = "HOLDS" if result == "holds" else result
            _echo(f"       {checked.host}: {mark}{detail}")
    _versions(hit, hosts)
    fix = s.fix
    if fix.id:
        _echo(f"  fix: ascend-env doctor --fix  (fix id {fix.id}); by hand: {fix.command}")
    else:
        _echo(f"  fix: {fix.command}")
    _echo(f"  source: {s.source}")


def _versions(hit: Hit, hosts: list[HostChecks]) -> None:
    """Per host: the installed versions of the packages this hit involves, and whether the
    compatibility matrix pairs them."""
    wanted = set(involved_packages([hit]))
    for checked in hosts:
        installed = [i for i in checked.installed if i.name in wanted]
        if not installed:
            continue
        said = ", ".join(f"{i.name} {i.version}" if i.version else f"{i.name} ({i.state})"
                         for i in installed)
        _echo(f"  on {checked.host}: {said}")
        for pair in checked.pairings:
            if set(pair.packages) <= wanted:
                _echo(f"    {' + '.join(pair.packages)}: {pair.verdict.upper()} by the matrix "
                      f"({pair.message[:200]})")
        alone = [name for name in checked.unpaired if name in wanted]
        if alone:
            _echo(f"    the matrix states no pairing for {', '.join(alone)}")


def _unknown_part(explanation: Explanation, host: str | None) -> None:
    scan = explanation.scan
    if scan.unknown:
        _echo()
        _echo(f"not known ({len(scan.unknown)} line(s) that look like errors):")
        for item in scan.unknown[:MAX_UNKNOWN_SHOWN]:
            times = f" (x{item.count})" if item.count > 1 else ""
            _echo(f"  {item.source}:{item.line_number}{times}  {item.line[:200]}")
        if len(scan.unknown) > MAX_UNKNOWN_SHOWN:
            _echo(f"  ... {len(scan.unknown) - MAX_UNKNOWN_SHOWN} more (--json lists them)")
        target = f"--host {host}" if host else "--host H"
        _echo(f"  for support, capture the host with: ascend-env collect {target} "
              "-o capture.json --redact")
    elif not scan.hits:
        _echo("nothing in the input looks like an error")


def render_list(signatures: tuple[Signature, ...], *, as_json: bool) -> None:
    """The knowledge base by family: counts, then each entry's id, severity and meaning."""
    counts = Counter(s.family for s in signatures)
    families = sorted(counts, key=lambda f: (-counts[f], f))
    if as_json:
        typer.echo(json.dumps({
            "schema": LIST_SCHEMA, "total": len(signatures),
            "families": [{"family": f, "count": counts[f], "entries": [
                {"id": s.id, "severity": s.severity, "meaning": s.meaning, "source": s.source}
                for s in signatures if s.family == f]} for f in families]},
            indent=2, ensure_ascii=False))
        return
    _echo(f"{len(signatures)} entries in {len(families)} families")
    for family in families:
        _echo(f"  {family:<16} {counts[family]:>4}")
    for family in families:
        _echo()
        _echo(f"{family} ({counts[family]})")
        for s in signatures:
            if s.family == family:
                _echo(f"  {_MARK[s.severity]} {s.id:<44} {s.meaning[:90]}")
