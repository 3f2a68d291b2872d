"""The doctor's Report (schema ascend-env/report/v1) and its renderings.

One Report per host; a fleet is a FleetReport holding one per host. Renderings: a terminal
view grouped by category (one host) or a hosts x categories table (a fleet), JSON, JUnit XML
and a Prometheus textfile for node_exporter's textfile collector.
"""

from __future__ import annotations

import json
import shlex
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from rich.cells import cell_len
from rich.console import Console
from rich.markup import escape
from rich.text import Text

from ascend_env.core.errors import EXIT_CANNOT_RUN, EXIT_NOT_RIGHT
from ascend_env.core.outputs import write_output

REPORT_SCHEMA = "ascend-env/report/v1"
FLEET_SCHEMA = "ascend-env/fleet-report/v1"
CHECKS_SCHEMA = "ascend-env/checks/v1"

Status = Literal["pass", "warn", "fail", "skip", "error"]
STATUSES: tuple[Status, ...] = ("pass", "warn", "fail", "skip", "error")
# Category order of the terminal view: the order an operator fixes things in.
CATEGORIES = ("system", "hardware", "driver", "firmware", "devices", "cann", "env", "frameworks",
              "python", "permissions", "threads", "selinux", "containers", "smoke")
MARKS: dict[Status, str] = {"pass": "[✓]", "warn": "[!]", "fail": "[✗]", "skip": "[-]",
                            "error": "[✗]"}
_COLOURS: dict[Status, str] = {"pass": "green", "warn": "yellow", "fail": "red", "skip": "dim",
                               "error": "red"}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class FixRef(_Model):
    """How to fix a failure: a fix id of playbooks/fix.yml (or None) and the manual command."""

    id: str | None = None
    command: str | None = Field(None, description="what to run by hand")
    applied: bool | None = Field(None, description="set by doctor --fix: was it applied")


class CheckResult(_Model):
    """One check on one host."""

    id: str
    title: str
    category: str
    level: int = 1
    status: Status
    observed: str | None = None
    expected: str | None = None
    message: str = ""
    why: str | None = None
    fix: FixRef | None = None
    evidence: dict[str, Any] | None = None
    duration_s: float = 0.0
    involved: list[str] = Field(default_factory=list, description="fleet-wide checks: the "
                                "hosts and devices a finding is about")

    def fix_command(self) -> str | None:
        """The ascend-env command that applies this check's fix, if it has one."""
        if self.fix is None or self.fix.id is None:
            return None
        return shlex.join(["ascend-env", "doctor", "--fix", "--only", self.id])


class SpecRef(_Model):
    name: str
    digest: str


class FixRun(_Model):
    """What `doctor --fix` did on one host: the fix ids it ran and what changed."""

    mode: Literal["apply", "dry-run"]
    ids: list[str]
    status: str = Field(description="ok, changed, failed, unreachable (Ansible's view)")
    changed: list[str] = Field(default_factory=list, description="tasks that changed "
                               "(or would, in a dry run)")
    failed: list[str] = Field(default_factory=list)
    log: str = ""

    def summary(self) -> str:
        verb = "would change" if self.mode == "dry-run" else "changed"
        text = f"{', '.join(self.ids)}: {self.status}"
        if self.changed:
            text += f"; {verb}: {'; '.join(self.changed)}"
        if self.failed:
            text += f"; FAILED: {'; '.join(self.failed)}"
        return text + (f" (log {self.log})" if self.log else "")


class Report(_Model):
    """The doctor's verdict on one host."""

    schema_: str = Field(REPORT_SCHEMA, alias="schema")
    host: str
    reachable: bool = True
    error: str | None = Field(None, description="why the host could not be checked")
    source: str = Field("live", description="live, or the capture file it was read from")
    captured_at: str | None = None
    spec: SpecRef | None = None
    level: int = 1
    started: str = ""
    duration_s: float = 0.0
    summary: dict[Status, int] = Field(default_factory=dict)
    checks: list[CheckResult] = Field(default_factory=list)
    fixes: FixRun | None = None

    def summarize(self) -> Report:
        counts = Counter(c.status for c in self.checks)
        self.summary = {s: counts.get(s, 0) for s in STATUSES}
        return self

    @property
    def failed(self) -> list[CheckResult]:
        return [c for c in self.checks if c.status in ("fail", "error")]

    @property
    def verdict(self) -> Literal["ok", "failed", "unreachable"]:
        if not self.reachable:
            return "unreachable"
        return "failed" if self.failed else "ok"

    def exit_code(self) -> int:
        """DESIGN.md: 0 right (warnings allowed), 1 not right, 2 could not run."""
        if not self.reachable:
            return EXIT_CANNOT_RUN
        return EXIT_NOT_RIGHT if self.failed else 0

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)


class FleetReport(_Model):
    """The doctor's verdict on several hosts."""

    schema_: str = Field(FLEET_SCHEMA, alias="schema")
    spec: SpecRef | None = None
    level: int = 1
    started: str = ""
    duration_s: float = 0.0
    summary: dict[str, int] = Field(default_factory=dict)
    hosts: list[Report] = Field(default_factory=list)
    fleet_checks: list[CheckResult] = Field(
        default_factory=list, description="checks that judge the hosts together (device "
        "addresses unique, HCCL settings equal...): each once, naming hosts and devices")

    @property
    def fleet_failed(self) -> list[CheckResult]:
        return [c for c in self.fleet_checks if c.status in ("fail", "error")]

    def summarize(self) -> FleetReport:
        counts = Counter(r.verdict for r in self.hosts)
        self.summary = {"hosts": len(self.hosts), **{v: counts.get(v, 0) for v in
                                                      ("ok", "failed", "unreachable")},
                        "fleet_failed": len(self.fleet_failed)}
        return self

    def exit_code(self) -> int:
        """An unreachable host means the fleet could not be fully checked: 2 before 1."""
        codes = [r.exit_code() for r in self.hosts]
        if EXIT_CANNOT_RUN in codes:
            return EXIT_CANNOT_RUN
        return max([*codes, EXIT_NOT_RIGHT if self.fleet_failed else 0])

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)


# -- terminal ---------------------------------------------------------------------------------

def _category_order(category: str) -> tuple[int, str]:
    return (CATEGORIES.index(category) if category in CATEGORIES else len(CATEGORIES), category)


def summary_line(report: Report) -> str:
    """`sim1: 40 passed, 1 warning, 2 failed, 5 skipped in 0.81s` (or why it was not checked)."""
    if not report.reachable:
        return f"{report.host}: not checked: {report.error}"
    s = report.summary or report.summarize().summary
    parts = [f"{s.get('pass', 0)} passed"]
    for key, word in (("warn", "warning"), ("fail", "failed"), ("error", "error"),
                      ("skip", "skipped")):
        count = s.get(key, 0)  # type: ignore[call-overload]
        if count:
            parts.append(f"{count} {word}{'s' if key in ('warn', 'error') and count > 1 else ''}")
    return f"{report.host}: {', '.join(parts)} in {report.duration_s:.2f}s"


def detail_lines(check: CheckResult, *, why: bool = True) -> list[str]:
    """What is shown under a check: observed, expected, why (unless left out), the fix."""
    lines = []
    if check.involved:
        lines.append(f"involved: {', '.join(check.involved)}")
    if check.observed is not None:
        lines.append(f"observed: {check.observed}")
    if check.expected is not None:
        lines.append(f"expected: {check.expected}")
    if check.why and why:
        lines.append(f"why: {check.why}")
    auto = check.fix_command()
    if auto:
        lines.append(f"fix: {auto}")
    if check.fix is not None and check.fix.command:
        lines.append(f"{'or by hand' if auto else 'fix by hand'}: {check.fix.command}")
    if check.fix is not None and check.fix.applied is not None:
        lines.append("fix applied" if check.fix.applied else "fix NOT applied")
    return lines


def _print_details(console: Console, check: CheckResult, *, indent: int) -> None:
    """The lines under a check, never wrapped (a fix command stays one line to copy)."""
    details = "\n".join(" " * indent + line for line in detail_lines(check))
    if details:
        console.print(escape(details), soft_wrap=True)


def title_line(report: Report) -> str:
    """The first line of a host's view (rich markup): host, spec or none, capture source."""
    title = f"[bold]{escape(report.host)}[/bold]"
    if report.spec:
        title += f"  spec {escape(report.spec.name)} ({report.spec.digest[:12]})"
    elif report.reachable:
        title += "  no spec: consistency with itself and the matrix"
    if report.source != "live":
        title += f"  from {escape(report.source)}"
    return title


def render_terminal(report: Report, console: Console, *, verbose: bool = False) -> None:
    """One host: checks grouped by category, details under each failure and warning."""
    console.print(title_line(report))
    if not report.reachable:
        console.print(f"  [red]{MARKS['fail']}[/red] not checked: {escape(report.error or '')}")
    by_category: dict[str, list[CheckResult]] = {}
    for check in report.checks:
        by_category.setdefault(check.category, []).append(check)
    for category in sorted(by_category, key=_category_order):
        console.print(f"  [bold]{category}[/bold]")
        for check in by_category[category]:
            colour = _COLOURS[check.status]
            text = check.title if check.status == "pass" else (check.message or check.title)
            if check.status == "pass" and check.observed:
                text += f" ({check.observed})"
            console.print(f"    [{colour}]{MARKS[check.status]}[/{colour}] {check.id}: "
                          f"{escape(text)}")
            if check.status in ("fail", "error", "warn") or verbose:
                _print_details(console, check, indent=10)
    colour = "red" if report.exit_code() else "green"
    console.print(f"[{colour}]{escape(summary_line(report))}[/{colour}]")


def _cell(checks: list[CheckResult]) -> tuple[str, str]:
    """A category's cell of the fleet table: its text and style."""
    statuses = {c.status for c in checks}
    failed = sum(1 for c in checks if c.status in ("fail", "error"))
    if failed:
        return f"✗ {failed}", "red"
    if "warn" in statuses:
        return "!", "yellow"
    if "pass" in statuses:
        return "✓", "green"
    return "-", "dim"


def _grid(rows: list[list[tuple[str, str]]]) -> Text:
    """Columns of (text, style) cells, two spaces apart, as one Text: rich's Table measured
    and rendered each cell on its own (~0.1 ms a cell, 14 columns a host)."""
    widths = [max(cell_len(row[i][0]) for row in rows) for i in range(len(rows[0]))]
    out = Text()
    for row in rows:
        for i, (text, style) in enumerate(row):
            out.append(text, style=style or None)
            if i < len(row) - 1:
                out.append(" " * (widths[i] - cell_len(text) + 2))
        out.append("\n")
    out.rstrip()
    return out


def _host_list(hosts: list[str], checked: int, shown: int = 8) -> str:
    """`sim1`, `sim1, sim2`, `all 12 hosts` (of those checked), or the first few and how many
    more (the table names them all)."""
    if len(hosts) == checked > 1:
        return f"all {checked} hosts"
    if len(hosts) <= shown:
        return ", ".join(hosts)
    return f"{', '.join(hosts[:shown - 2])} and {len(hosts) - shown + 2} more hosts"


def render_fleet(fleet: FleetReport, console: Console) -> None:
    """Hosts x categories, the unreachable hosts, each distinct failure and warning once
    with its hosts and fix, then the fleet's summary line."""
    categories = sorted({c.category for r in fleet.hosts for c in r.checks},
                        key=_category_order)
    rows = [[(name, "bold") for name in ("host", *categories, "verdict")]]
    for report in fleet.hosts:
        if not report.reachable:
            rows.append([(report.host, ""), *[("?", "dim")] * len(categories),
                         ("unreachable", "red")])
            continue
        cells = [_cell([c for c in report.checks if c.category == cat]) for cat in categories]
        rows.append([(report.host, ""), *cells,
                     ("failed", "red") if report.failed else ("ok", "green")])
    # Never wrapped into a narrow (or piped) terminal: a folded table reads badly.
    console.print(_grid(rows), soft_wrap=True)
    # A finding shared by several hosts (same check, message and details: hosts installed
    # alike) is written once, with its hosts: a fleet's report stays as long as its distinct
    # problems, not hosts x problems. --json keeps every host's own results.
    findings: dict[tuple[str, ...], tuple[CheckResult, list[str]]] = {}
    for report in fleet.hosts:
        if not report.reachable:
            console.print(f"[red]{escape(report.host)}: unreachable[/red]: "
                          f"{escape(report.error or '')}")
            continue
        for check in report.failed + [c for c in report.checks if c.status == "warn"]:
            key = (check.status, check.id, check.message, *detail_lines(check))
            findings.setdefault(key, (check, []))[1].append(report.host)
    checked = sum(1 for report in fleet.hosts if report.reachable)
    # Failures first, warnings after; each in the order the hosts and checks came.
    for check, hosts in sorted(findings.values(), key=lambda found: found[0].status == "warn"):
        colour = _COLOURS[check.status]
        who = escape(_host_list(hosts, checked))
        console.print(f"[{colour}]{MARKS[check.status]}[/{colour}] {who} {check.id}: "
                      f"{escape(check.message)}")
        _print_details(console, check, indent=6)
    for check in fleet.fleet_checks:
        if check.status in ("fail", "error", "warn"):
            colour = _COLOURS[check.status]
            console.print(f"[{colour}]{MARKS[check.status]}[/{colour}] fleet {check.id}: "
                          f"{escape(check.message)}")
            _print_details(console, check, indent=6)
    counts = fleet.summary or fleet.summarize().summary
    colour = "red" if fleet.exit_code() else "green"
    console.print(f"[{colour}]{counts.get('hosts', 0)} host(s): {counts.get('ok', 0)} ok, "
                  f"{counts.get('failed', 0)} failed, {counts.get('unreachable', 0)} "
                  f"unreachable in {fleet.duration_s:.2f}s[/{colour}]")


# -- JUnit XML --------------------------------------------------------------------------------

def _junit_suite(report: Report) -> ET.Element:
    suite = ET.Element("testsuite", name=report.host, timestamp=report.started,
                       time=f"{report.duration_s:.3f}")
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", name="level", value=str(report.level))
    ET.SubElement(props, "property", name="source", value=report.source)
    if report.spec:
        ET.SubElement(props, "property", name="spec", value=report.spec.name)
        ET.SubElement(props, "property", name="spec_digest", value=report.spec.digest)
    counts = Counter[str]()
    if not report.reachable:
        case = ET.SubElement(suite, "testcase", classname="ascend-env.host", name="host.reachable",
                             time="0")
        ET.SubElement(case, "error", message=report.error or "unreachable", type="unreachable")
        counts.update(["tests", "errors"])
    for check in report.checks:
        case = ET.SubElement(suite, "testcase", classname=f"ascend-env.{check.category}",
                             name=check.id, time=f"{check.duration_s:.3f}")
        counts["tests"] += 1
        detail = "\n".join(detail_lines(check))
        if check.status == "fail":
            ET.SubElement(case, "failure", message=check.message, type="fail").text = detail
            counts["failures"] += 1
        elif check.status == "error":
            ET.SubElement(case, "error", message=check.message, type="error").text = detail
            counts["errors"] += 1
        elif check.status == "skip":
            ET.SubElement(case, "skipped", message=check.message)
            counts["skipped"] += 1
        elif check.status == "warn":
            # JUnit has no warning: a pass with the warning in its output.
            ET.SubElement(case, "system-out").text = f"WARNING: {check.message}\n{detail}"
    for key in ("tests", "failures", "errors", "skipped"):
        suite.set(key, str(counts[key]))
    return suite


def render_junit(reports: Iterable[Report]) -> str:
    """A <testsuites> document: one suite per host, one testcase per check."""
    root = ET.Element("testsuites", name="ascend-env doctor")
    totals = Counter[str]()
    for report in reports:
        suite = _junit_suite(report)
        root.append(suite)
        for key in ("tests", "failures", "errors", "skipped"):
            totals[key] += int(suite.get(key, "0"))
    for key in ("tests", "failures", "errors", "skipped"):
        root.set(key, str(totals[key]))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") \
        + "\n"


# -- Prometheus textfile ----------------------------------------------------------------------

def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _series(name: str, labels: dict[str, str], value: float) -> str:
    inner = ",".join(f'{key}="{_label(val)}"' for key, val in labels.items())
    number = repr(float(value)) if not float(value).is_integer() else str(int(value))
    return f"{name}{{{inner}}} {number}"


def render_prometheus(reports: Iterable[Report], now: float) -> str:
    """node_exporter textfile format: per host up/duration/timestamp, counts, per-check state."""
    reports = list(reports)
    metrics: list[tuple[str, str, str, list[str]]] = [
        ("ascend_env_doctor_up", "gauge",
         "1 if the doctor reached and evaluated the host, 0 if it could not", []),
        ("ascend_env_doctor_last_run_timestamp_seconds", "gauge",
         "Unix time of the doctor run", []),
        ("ascend_env_doctor_duration_seconds", "gauge", "Seconds the doctor took for the host",
         []),
        ("ascend_env_doctor_checks", "gauge", "Checks of the last run by status", []),
        ("ascend_env_check_status", "gauge",
         "1 for the status a check has, 0 for the others (one series per status)", []),
    ]
    lines_of = {name: lines for name, _, _, lines in metrics}
    for report in reports:
        host = {"host": report.host}
        lines_of["ascend_env_doctor_up"].append(
            _series("ascend_env_doctor_up", host, 1 if report.reachable else 0))
        lines_of["ascend_env_doctor_last_run_timestamp_seconds"].append(
            _series("ascend_env_doctor_last_run_timestamp_seconds", host, round(now, 3)))
        lines_of["ascend_env_doctor_duration_seconds"].append(
            _series("ascend_env_doctor_duration_seconds", host, round(report.duration_s, 3)))
        summary = report.summary or report.summarize().summary
        for status in STATUSES:
            lines_of["ascend_env_doctor_checks"].append(_series(
                "ascend_env_doctor_checks", {**host, "status": status}, summary.get(status, 0)))
        for check in report.checks:
            for status in STATUSES:
                lines_of["ascend_env_check_status"].append(_series(
                    "ascend_env_check_status", {**host, "check": check.id,
                                                "category": check.category, "status": status},
                    1 if check.status == status else 0))
    out: list[str] = []
    for name, kind, help_text, lines in metrics:
        out += [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}", *lines]
    return "\n".join(out) + "\n"


# -- JSON and files ---------------------------------------------------------------------------

def render_json(document: Report | FleetReport) -> str:
    return json.dumps(document.to_json(), indent=2, ensure_ascii=False) + "\n"


def write_atomic(path: Path, text: str, *, what: str = "output") -> None:
    """Write whole or not at all (node_exporter never reads half a file), only over a regular
    file or a new name: core/outputs.py, whose OutputError ends the command with exit 2."""
    write_output(path, text, what=what)
