"""Terminal and JSON renderings of fetch and install, and their progress on stderr."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, DownloadColumn, TaskID, TextColumn, TransferSpeedColumn
from rich.progress import Progress as Bars
from rich.table import Table

from ascend_env.ansible.stopped import lines
from ascend_env.cli.terminal import console, print_json
from ascend_env.explain.inline import explain_text, explained_lines
from ascend_env.repository.fetch import Progress

if TYPE_CHECKING:
    from ascend_env.ansible.stopped import Interruption
    from ascend_env.install.provision import InstallSummary
    from ascend_env.repository.fetch import FetchResult


@contextmanager
def fetch_progress(enabled: bool) -> Iterator[Progress]:
    """Rich progress bars on stderr, one per file plus a total; silent when disabled."""
    if not enabled:
        yield Progress()
        return
    bars = Bars(TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                TransferSpeedColumn(), console=Console(stderr=True), transient=False)
    tasks: dict[str, TaskID] = {}
    lock = threading.Lock()
    total = bars.add_task("total", total=None)

    def start(name: str, size: int | None) -> None:
        with lock:
            if name not in tasks:
                tasks[name] = bars.add_task(name, total=size)
                if size:
                    known = bars.tasks[total].total or 0
                    bars.update(total, total=known + size)

    def advance(name: str, size: int) -> None:
        with lock:
            bars.advance(tasks[name], size)
            bars.advance(total, size)

    with bars:
        yield Progress(start=start, advance=advance)


def render_fetch(result: FetchResult, *, as_json: bool) -> None:
    """Per-file outcome of a fetch and whether the repository is complete."""
    if as_json:
        print_json(result.model_dump(mode="json", by_alias=True))
        return
    marks = {"present": "[green]ok[/green]", "downloaded": "[green]ok[/green]",
             "imported": "[green]ok[/green]", "failed": "[red]FAILED[/red]",
             "missing": "[red]MISSING[/red]"}
    for item in result.files:
        console.print(f"{marks[item.status]:<8} {item.status:<10} {item.file}")
        if item.message:
            console.print(f"         {escape(item.message)}")
    python = result.python
    if python is not None:
        mark = "[green]ok[/green]" if python.complete else "[yellow]PARTIAL[/yellow]"
        whole = " (the whole closure)" if python.complete else ""
        console.print(f"{mark:<8} python     {len(python.wheels)} wheels for "
                      f"{len(python.requirements)} requirements{whole}")
        for missing in python.missing:
            console.print(f"         missing: {escape(missing)}")
        if python.message:
            console.print(f"         {escape(python.message)}")
    found = result.os_packages
    if found is not None:
        mark = "[green]ok[/green]" if found.complete else "[yellow]PARTIAL[/yellow]"
        kernels = f" and the devel packages of {', '.join(found.kernels)}" \
            if found.kernels else ""
        console.print(f"{mark:<8} os         {len(found.files)} {found.manager} packages for "
                      f"{found.key} in {found.folder}{kernels}")
        if found.message:
            console.print(f"         {escape(found.message)}")
    state = "complete" if result.complete else "[red]incomplete[/red]"
    console.print(f"repository {result.dest}: {state} for spec {result.spec}")


@contextmanager
def install_progress(enabled: bool) -> Iterator[Callable[[dict[str, Any]], None]]:
    """A live line per host (its current task and counts) on stderr while Ansible runs."""
    if not enabled:
        yield lambda event: None
        return
    stderr = Console(stderr=True, highlight=False)
    current: dict[str, str] = {}
    task = ["starting"]

    def on_event(event: dict[str, Any]) -> None:
        if event["event"] == "task":
            task[0] = event["task"]
        elif event["event"] == "result":
            current[event["host"]] = f"{event['status']:<11} {event['task']}"
            if event["status"] in ("failed", "unreachable"):
                stderr.print(f"[red]{escape(event['host'])}: {event['status']}[/red] "
                             f"{escape(event['task'])}: {escape(event.get('message', ''))}")

    with stderr.status("ansible") as status:
        def update(event: dict[str, Any]) -> None:
            on_event(event)
            lines = [f"{host:<20} {text}" for host, text in sorted(current.items())]
            status.update("\n".join([f"task: {task[0]}", *lines]))

        yield update


_NOT_WELL = ("failed", "unreachable", "not run")


def install_json(summary: InstallSummary) -> dict[str, Any]:
    """The summary as JSON; a host that did not end well gains `explained`, the known Ascend
    errors in its failed task's message (the knowledge base of `ascend-env explain`)."""

    document = summary.model_dump(mode="json", by_alias=True)
    for host, item in zip(summary.hosts, document["hosts"], strict=True):
        if host.status in _NOT_WELL:
            item["explained"] = explain_text(host.message, host.output)
    return document


def render_install(summary: InstallSummary, *, as_json: bool) -> None:
    """The per-host summary of an install run."""
    if as_json:
        print_json(install_json(summary))
        return
    table = Table("host", "status", "ok", "changed", "failed", "unreachable", "skipped",
                  box=None)
    colours = {"ok": "green", "changed": "green", "failed": "red", "unreachable": "red",
               "reboot required": "yellow", "not run": "yellow", "locked": "yellow",
               "interrupted": "yellow"}
    for host in summary.hosts:
        table.add_row(escape(host.host), f"[{colours[host.status]}]{host.status}[/]",
                      str(host.ok),
                      str(host.changed), str(host.failed), str(host.unreachable),
                      str(host.skipped))
    console.print(table)

    for host in summary.hosts:
        if host.message and host.status not in ("ok", "changed", "interrupted"):
            console.print(f"  {escape(host.host)}: {escape(host.message)}")
            if host.status in _NOT_WELL:
                for line in explained_lines(explain_text(host.message, host.output),
                                            indent="    "):
                    console.print(escape(line))
    for note in summary.notes:
        console.print(f"[yellow]note:[/yellow] {escape(note)}")
    _print_changes(summary)
    _print_roll(summary)
    if summary.interrupted is not None:
        _print_interrupted(summary.interrupted)
        return
    verdict = "[green]every host reached the spec[/green]" if summary.succeeded else \
        "[red]not every host reached the spec[/red]"
    mode = " (check mode: nothing was changed)" if summary.check else ""
    console.print(f"{verdict}{mode}; full log: {summary.log}")


def _print_changes(summary: InstallSummary) -> None:
    """In check mode, each host's components from -> to, before anything changes."""
    from ascend_env.install.upgrade_plan import describe  # noqa: PLC0415 - install only

    if not summary.check:
        return
    for host, items in summary.changes.items():
        console.print(f"  {escape(host)}: would go: {escape(describe(items))}")


def _print_roll(summary: InstallSummary) -> None:
    """A roll's batches, why it stopped, and what went back to its previous state."""
    from ascend_env.workflows.roll import RollSummary  # noqa: PLC0415 - install commands only

    if not isinstance(summary, RollSummary):
        return
    marks = {"passed": "[green]passed[/green]", "failed": "[red]failed[/red]",
             "not run": "[yellow]not run[/yellow]"}
    for batch in summary.batches:
        console.print(f"batch {batch.number} of {len(summary.batches)}: "
                      f"{escape(', '.join(batch.hosts))}: {marks[batch.outcome]}")
        for line in batch.gate:
            console.print(f"  gate: {escape(line)}")
    if summary.stopped:
        console.print(f"[red]{escape(summary.stopped)}[/red]")
    for item in summary.rolled_back:
        done = item.status in ("ok", "changed")
        mark = "[green]rolled back[/green]" if done else "[red]rollback: " + item.status + "[/]"
        said = "" if done or not item.message else f": {escape(item.message)}"
        console.print(f"{mark} {escape(item.host)} to {escape(item.to)}{said}")


def _print_interrupted(account: Interruption) -> None:
    first, *rest = lines(account)
    console.print(f"[red]{escape(first)}[/red]")
    # Unwrapped: the log's path and the command are copied from here as they are.
    for line in rest:
        console.print(escape(line), soft_wrap=True)


def render_interrupted(account: Interruption, *, as_json: bool) -> None:
    """A stopped playbook run on its own (doctor --fix): where each host was, the log, the
    command that continues; as `ascend-env/interrupted/v1` with --json."""
    if as_json:
        print_json(account.model_dump(mode="json", by_alias=True))
        return
    _print_interrupted(account)
