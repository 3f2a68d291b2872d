"""Terminal and JSON renderings of doctor reports, the check list and collect results."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from rich.markup import escape
from rich.table import Table

from ascend_env.cli.doctor_glance import render_glance
from ascend_env.cli.terminal import console, print_json
from ascend_env.core.outputs import OutputError
from ascend_env.doctor.report import (
    FleetReport,
    Report,
    render_fleet,
    render_json,
    render_junit,
    render_prometheus,
    render_terminal,
    write_atomic,
)

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from ascend_env.doctor.suite import CheckInfo
    from ascend_env.facts.capture import CollectResult


def render_doctor(document: Report | FleetReport, *, as_json: bool, junit: Path | None = None,
                  prometheus: Path | None = None, verbose: bool = False) -> None:
    """A doctor report on the terminal or as JSON, plus the JUnit and Prometheus files."""
    reports = document.hosts if isinstance(document, FleetReport) else [document]
    if as_json:
        print(render_json(document), end="")
    elif isinstance(document, FleetReport):
        render_fleet(document, console)
    elif verbose:
        render_terminal(document, console, verbose=True)
    else:
        render_glance(document, console)
    if not as_json:
        for report in reports:
            if report.fixes is not None:
                console.print(f"[bold]{report.host}[/bold] fixes: {report.fixes.summary()}")
    # The side files after the report: one that cannot be written (exit 2, docs/doctor.md)
    # still leaves the report on stdout.
    side: list[tuple[Path | None, str, Callable[[], str]]] = [
        (junit, "--junit", lambda: render_junit(reports)),
        (prometheus, "--prometheus", lambda: render_prometheus(reports, now=time.time()))]
    unwritten: list[str] = []
    for path, what, render in side:
        if path is not None:
            try:
                write_atomic(path, render(), what=what)
            except OutputError as error:  # the other file is still written
                unwritten.append(str(error))
    if unwritten:
        raise OutputError("; ".join(unwritten))


def render_check_list(checks: list[CheckInfo], *, as_json: bool) -> None:
    """The suite's checks: id, category, level and title."""
    if as_json:
        print_json({"schema": "ascend-env/checks/v1", "checks": [
            {"id": c.id, "title": c.title, "category": c.category, "level": c.level}
            for c in checks]})
        return
    table = Table("id", "category", "level", "checks that", box=None)
    for c in checks:
        table.add_row(c.id, c.category, str(c.level), c.title)
    console.print(table)


def render_collect(result: CollectResult, *, as_json: bool) -> None:
    """Which hosts were captured into which file."""
    if as_json:
        print_json(result.model_dump(mode="json", by_alias=True))
        return
    for host in result.hosts:
        mark = "[green]captured[/green]" if host.captured else "[red]not captured[/red]"
        console.print(f"{mark} {escape(host.name)}"
                      + (f": {escape(host.error)}" if host.error else ""))
    done = sum(1 for h in result.hosts if h.captured)
    console.print(f"{done} of {len(result.hosts)} host(s) written to {result.output}"
                  + (" (redacted)" if result.redacted else ""))
