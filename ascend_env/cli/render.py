"""Terminal and JSON renderings of profiles, specs, validations, the matrix and plans."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ascend_env.core.errors import UsageError

_console = Console(highlight=False, soft_wrap=True)

# Types only, and the spec, matrix, YAML and progress bars imported by the renderings that
# use them: every command imports this module, and fetch (with plan, compat and http.client)
# alone costs ~0.12 s, the matrix and spec models ~0.15 s, that a doctor (a health check)
# should not pay.
if TYPE_CHECKING:
    from rich.progress import TaskID

    from ascend_env.doctor.report import FleetReport, Report
    from ascend_env.doctor.suite import CheckInfo
    from ascend_env.facts.capture import CollectResult
    from ascend_env.image.build import ImageResult
    from ascend_env.image.runargs import RunArgs
    from ascend_env.install.fetch import FetchResult, Progress
    from ascend_env.install.provision import InstallSummary
    from ascend_env.spec.model import EnvSpec
    from ascend_env.spec.plan import Plan
    from ascend_env.spec.validate import ValidationResult

    DoctorDocument = Report | FleetReport


def _print_json(document: dict[str, Any]) -> None:
    print(json.dumps(document, indent=2, ensure_ascii=False))


def render_profiles(*, as_json: bool) -> None:
    """The shipped profiles, one line each."""
    from ascend_env.spec.model import load_spec, profile_names  # noqa: PLC0415

    specs = [load_spec(profile=name) for name in profile_names()]
    if as_json:
        _print_json({"schema": "ascend-env/profiles/v1", "profiles": [
            {"name": s.name, "description": s.description, "chip": s.hardware.chip,
             "arch": s.hardware.arch, "devices": s.hardware.devices,
             "driver": s.driver.version.raw, "cann": s.cann.version.raw,
             "torch_npu": s.frameworks.torch.torch_npu if s.frameworks.torch else None,
             "mindspore": s.frameworks.mindspore.version if s.frameworks.mindspore else None}
            for s in specs]})
        return
    table = Table("profile", "chip", "arch", "devices", "HDK", "CANN", "torch_npu", "MindSpore",
                  box=None)
    for s in specs:
        table.add_row(s.name, s.hardware.chip, s.hardware.arch, str(s.hardware.devices or "-"),
                      s.driver.version.raw, s.cann.version.raw,
                      s.frameworks.torch.torch_npu if s.frameworks.torch else "-",
                      s.frameworks.mindspore.version if s.frameworks.mindspore else "-")
    _console.print(table)


def render_spec(spec: EnvSpec, *, as_json: bool, as_yaml: bool) -> None:
    """A complete spec, defaults filled in."""
    import yaml  # noqa: PLC0415

    from ascend_env.spec.matrix import load_chips  # noqa: PLC0415

    document = spec.model_dump(mode="json")
    if as_json:
        _print_json({"schema": "ascend-env/spec/v1", "digest": spec.digest(), "spec": document})
    elif as_yaml:
        print(yaml.safe_dump(document, sort_keys=False), end="")
    else:
        _console.print(f"[bold]{escape(spec.name)}[/bold]  {escape(spec.description)}")
        chip = load_chips().get(spec.hardware.chip)
        devices = spec.hardware.devices or (chip.devices.default if chip else "?")
        lines = [
            ("hardware", f"{devices} x {chip.family if chip else spec.hardware.chip}, "
                         f"{spec.hardware.arch}"),
            ("os", f"{spec.os.family} {spec.os.version}"),
            ("driver (HDK)", spec.driver.version.raw),
            ("firmware", spec.firmware.version.raw if spec.firmware.version
             else "as shipped with the HDK"),
            ("CANN", f"{spec.cann.version.raw} ({', '.join(spec.cann.packages)})"),
            ("python", f"{spec.python.version} in {spec.python.venv}"),
        ]
        if spec.frameworks.torch:
            lines.append(("torch", f"{spec.frameworks.torch.version} + torch_npu "
                                   f"{spec.frameworks.torch.torch_npu}"))
        if spec.frameworks.mindspore:
            lines.append(("mindspore", spec.frameworks.mindspore.version))
        lines.append(("install", f"{spec.install.path} as {spec.install.user}"))
        for key, value in lines:
            _console.print(f"  {key:<14}{escape(str(value))}")
        _console.print(f"  {'digest':<14}{spec.digest()[:16]}")


def render_validation(result: ValidationResult, *, as_json: bool) -> None:
    """Every problem of a spec file, errors first."""
    if as_json:
        _print_json(result.model_dump(mode="json", by_alias=True))
        return
    errors = [p for p in result.problems if p.severity == "error"]
    warnings = [p for p in result.problems if p.severity == "warning"]
    for problem in errors:
        _console.print(f"[red]error[/red]   {escape(problem.render())}")
    for problem in warnings:
        _console.print(f"[yellow]warning[/yellow] {escape(problem.render())}")
    if result.valid:
        _console.print(f"[green]valid[/green]: {result.file} (spec {result.spec}, "
                       f"{len(warnings)} warning(s))")
    else:
        _console.print(f"[red]invalid[/red]: {result.file}: {len(errors)} error(s), "
                       f"{len(warnings)} warning(s)")


def render_matrix(*, cann: str | None, framework: str | None, as_json: bool) -> None:
    """The matrix tables, optionally for one CANN release and one framework."""
    from ascend_env.core.versions import InvalidVersionError, parse  # noqa: PLC0415
    from ascend_env.spec.matrix import load_matrix  # noqa: PLC0415

    matrix = load_matrix()
    wanted = None
    if cann is not None:
        try:
            wanted = parse(cann)
        except InvalidVersionError as exc:
            raise UsageError(f"--cann: {exc}") from exc
        if matrix.cann_row(wanted) is None:
            raise UsageError(f"--cann {cann}: not a CANN release in the matrix; known: "
                             + ", ".join(row.cann.raw for row in matrix.cann))
    cann_rows = [r for r in matrix.cann if wanted is None or r.cann == wanted.release()]
    torch_rows = matrix.torch_rows(wanted) if framework in (None, "torch") else []
    ms_rows = matrix.mindspore_rows(wanted) if framework in (None, "mindspore") else []
    if as_json:
        _print_json({
            "schema": "ascend-env/matrix/v1",
            "cann": [r.model_dump(mode="json") for r in cann_rows] if framework is None else [],
            "torch": [r.model_dump(mode="json") for r in torch_rows],
            "mindspore": [r.model_dump(mode="json") for r in ms_rows],
            "conflicts": [c.model_dump(mode="json") for c in matrix.conflicts],
        })
        return
    if framework is None:
        table = Table("CANN", "HDK", "also works with", "sources", title="CANN -> HDK")
        for row in cann_rows:
            table.add_row(row.cann.raw, row.hdk.raw if row.hdk else "not confirmed",
                          ", ".join(f"{line}.x" for line in row.hdk_compatible),
                          ", ".join(row.sources))
        _console.print(table)
    if torch_rows:
        table = Table("CANN", "torch_npu", "torch", "Python", "status", "sources",
                      title="torch_npu")
        for t in torch_rows:
            table.add_row(t.cann.raw, t.torch_npu, t.torch, str(t.python),
                          t.status + (f" (#{t.conflict})" if t.conflict else ""),
                          ", ".join(t.sources))
        _console.print(table)
    if ms_rows:
        table = Table("CANN", "MindSpore", "Python", "HDK", "status", "sources",
                      title="MindSpore")
        for m in ms_rows:
            table.add_row(m.cann.raw, m.mindspore, str(m.python) if m.python else "?",
                          m.hdk.raw if m.hdk else "?",
                          m.status + (f" (#{m.conflict})" if m.conflict else ""),
                          ", ".join(m.sources))
        _console.print(table)


def render_plan(plan: Plan, *, as_json: bool) -> None:
    """The install plan: steps, files, digests, then warnings."""
    if as_json:
        _print_json(plan.model_dump(mode="json", by_alias=True))
        return
    _console.print(f"[bold]plan for {plan.spec}[/bold]: {plan.devices} x {plan.chip}, "
                   f"{plan.arch}, into {plan.install_path} (spec digest {plan.digest[:16]})")
    # One block per step rather than a table: file names and digests are long and must be
    # printed whole, also when the output is piped or narrower than the names.
    for item in plan.items:
        _console.print(f"{item.step:>3}  {item.component:<10} {item.version:<12} {item.file}")
        if item.archive:
            _console.print(f"{'':>27}in {item.archive}")
        _console.print(f"{'':>27}sha256 {item.sha256 or '[red]unknown[/red]'}")
    for item in plan.items:
        if item.note:
            _console.print(f"  note {item.step}: {escape(item.note)}")
    for problem in plan.warnings:
        _console.print(f"[yellow]warning[/yellow] {escape(problem.render())}")


@contextmanager
def fetch_progress(enabled: bool) -> Iterator[Progress]:
    """Rich progress bars on stderr, one per file plus a total; silent when disabled."""
    from rich.progress import (  # noqa: PLC0415
        BarColumn,
        DownloadColumn,
        TextColumn,
        TransferSpeedColumn,
    )
    from rich.progress import Progress as Bars  # noqa: PLC0415

    from ascend_env.install.fetch import Progress  # noqa: PLC0415

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
        _print_json(result.model_dump(mode="json", by_alias=True))
        return
    marks = {"present": "[green]ok[/green]", "downloaded": "[green]ok[/green]",
             "imported": "[green]ok[/green]", "failed": "[red]FAILED[/red]",
             "missing": "[red]MISSING[/red]"}
    for item in result.files:
        _console.print(f"{marks[item.status]:<8} {item.status:<10} {item.file}")
        if item.message:
            _console.print(f"         {escape(item.message)}")
    python = result.python
    if python is not None:
        mark = "[green]ok[/green]" if python.complete else "[yellow]PARTIAL[/yellow]"
        whole = " (the whole closure)" if python.complete else ""
        _console.print(f"{mark:<8} python     {len(python.wheels)} wheels for "
                       f"{len(python.requirements)} requirements{whole}")
        for missing in python.missing:
            _console.print(f"         missing: {escape(missing)}")
        if python.message:
            _console.print(f"         {escape(python.message)}")
    state = "complete" if result.complete else "[red]incomplete[/red]"
    _console.print(f"repository {result.dest}: {state} for spec {result.spec}")


@contextmanager
def install_progress(enabled: bool) -> Iterator[Callable[[dict[str, Any]], None]]:
    """A live line per host (its current task and counts) on stderr while Ansible runs."""
    if not enabled:
        yield lambda event: None
        return
    console = Console(stderr=True, highlight=False)
    current: dict[str, str] = {}
    task = ["starting"]

    def on_event(event: dict[str, Any]) -> None:
        if event["event"] == "task":
            task[0] = event["task"]
        elif event["event"] == "result":
            current[event["host"]] = f"{event['status']:<11} {event['task']}"
            if event["status"] in ("failed", "unreachable"):
                console.print(f"[red]{escape(event['host'])}: {event['status']}[/red] "
                              f"{escape(event['task'])}: {escape(event.get('message', ''))}")

    with console.status("ansible") as status:
        def update(event: dict[str, Any]) -> None:
            on_event(event)
            lines = [f"{host:<20} {text}" for host, text in sorted(current.items())]
            status.update("\n".join([f"task: {task[0]}", *lines]))

        yield update


def render_install(summary: InstallSummary, *, as_json: bool) -> None:
    """The per-host summary of an install run."""
    if as_json:
        _print_json(summary.model_dump(mode="json", by_alias=True))
        return
    table = Table("host", "status", "ok", "changed", "failed", "unreachable", "skipped",
                  box=None)
    colours = {"ok": "green", "changed": "green", "failed": "red", "unreachable": "red",
               "reboot required": "yellow", "not run": "yellow"}
    for host in summary.hosts:
        table.add_row(escape(host.host), f"[{colours[host.status]}]{host.status}[/]",
                      str(host.ok),
                      str(host.changed), str(host.failed), str(host.unreachable),
                      str(host.skipped))
    _console.print(table)
    for host in summary.hosts:
        if host.message and host.status not in ("ok", "changed"):
            _console.print(f"  {escape(host.host)}: {escape(host.message)}")
    for note in summary.notes:
        _console.print(f"[yellow]note:[/yellow] {escape(note)}")
    verdict = "[green]every host reached the spec[/green]" if summary.succeeded else \
        "[red]not every host reached the spec[/red]"
    mode = " (check mode: nothing was changed)" if summary.check else ""
    _console.print(f"{verdict}{mode}; full log: {summary.log}")


# -- doctor and collect ------------------------------------------------------------------------

def render_doctor(document: DoctorDocument, *, as_json: bool, junit: Path | None = None,
                  prometheus: Path | None = None, verbose: bool = False) -> None:
    """A doctor report on the terminal or as JSON, plus the JUnit and Prometheus files."""
    import time  # noqa: PLC0415

    from ascend_env.doctor.report import (  # noqa: PLC0415
        FleetReport,
        render_fleet,
        render_json,
        render_junit,
        render_prometheus,
        render_terminal,
        write_atomic,
    )

    reports = document.hosts if isinstance(document, FleetReport) else [document]
    if junit is not None:
        write_atomic(junit, render_junit(reports))
    if prometheus is not None:
        write_atomic(prometheus, render_prometheus(reports, now=time.time()))
    if as_json:
        print(render_json(document), end="")
    elif isinstance(document, FleetReport):
        render_fleet(document, _console)
    else:
        render_terminal(document, _console, verbose=verbose)
    if not as_json:
        for report in reports:
            if report.fixes is not None:
                _console.print(f"[bold]{report.host}[/bold] fixes: {report.fixes.summary()}")


def render_check_list(checks: list[CheckInfo], *, as_json: bool) -> None:
    """The suite's checks: id, category, level and title."""
    if as_json:
        _print_json({"schema": "ascend-env/checks/v1", "checks": [
            {"id": c.id, "title": c.title, "category": c.category, "level": c.level}
            for c in checks]})
        return
    table = Table("id", "category", "level", "checks that", box=None)
    for c in checks:
        table.add_row(c.id, c.category, str(c.level), c.title)
    _console.print(table)


def render_collect(result: CollectResult, *, as_json: bool) -> None:
    """Which hosts were captured into which file."""
    if as_json:
        _print_json(result.model_dump(mode="json", by_alias=True))
        return
    for host in result.hosts:
        mark = "[green]captured[/green]" if host.captured else "[red]not captured[/red]"
        _console.print(f"{mark} {escape(host.name)}"
                       + (f": {escape(host.error)}" if host.error else ""))
    done = sum(1 for h in result.hosts if h.captured)
    _console.print(f"{done} of {len(result.hosts)} host(s) written to {result.output}"
                   + (" (redacted)" if result.redacted else ""))


# -- image -------------------------------------------------------------------------------------

def render_image(result: ImageResult, *, as_json: bool) -> None:
    """An image build or validation: the report, then what was tagged (or why not)."""
    from ascend_env.doctor.report import render_terminal  # noqa: PLC0415

    if as_json:
        _print_json(result.to_json())
        return
    render_terminal(result.report, _console)
    for warning in result.warnings:
        _console.print(f"[yellow]note[/yellow] {escape(warning)}")
    if result.cache is not None and result.build_seconds is not None:
        stages = ", ".join(f"{stage} {cached}/{steps}"
                           for stage, (steps, cached) in result.cache.by_stage.items())
        _console.print(f"built with {result.builder} in {result.build_seconds:.1f} s; "
                       f"layers from cache: {stages}")
    if result.validated and result.tag:
        _console.print(f"[green]validated[/green] {result.tag} ({result.image_id})  "
                       f"report in /etc/ascend-env/validation.json, "
                       f"{result.validation_digest}")
    elif result.validated:
        _console.print(f"[green]valid[/green] {result.image}")
    elif result.action == "build":
        _console.print(f"[red]not validated[/red]: no tag was given; the image is "
                       f"{result.image_id} for inspection (`buildah from {result.image_id}`)")
    else:
        _console.print(f"[red]not valid[/red] {result.image}")


def render_run_args(result: RunArgs, *, as_json: bool, image: str | None = None) -> None:
    """Run arguments: JSON, a whole command line, or one argument per line to paste."""
    if as_json:
        _print_json(result.model_dump(mode="json", by_alias=True))
        return
    if image is not None:
        print(result.command_line(image))
    else:
        import shlex  # noqa: PLC0415

        pairs: list[str] = []
        args = list(result.args)
        while args:
            head = args.pop(0)
            if head.startswith("-") and "=" not in head and args and \
                    not args[0].startswith("-"):
                head += " " + shlex.quote(args.pop(0))
            pairs.append(head)
        print(" \\\n".join(pairs))
    for note in result.notes:
        print(f"# {note}", file=sys.stderr)
