"""`explain --host/--inventory`: run the checks the matched signatures' causes name, on the
host(s), through the doctor (ascend_env/doctor/run.py, its `--only` selection), and say for
each cause whether it holds there.

A cause holds when one of its checks fails or warns; it is ruled out when all of them pass;
otherwise (skipped, errored, not run) it is undecided. A cause that names no check cannot be
decided on a host (a remote rank, the network between hosts).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from ascend_env.explain.signatures import Cause

if TYPE_CHECKING:
    from ascend_env.doctor.report import CheckResult
    from ascend_env.doctor.run import DoctorOptions

Verdict = Literal["holds", "ruled out", "undecided", "not checkable"]


@dataclass
class HostChecks:
    host: str
    reachable: bool
    error: str | None = None
    results: dict[str, CheckResult] = field(default_factory=dict)


def wanted_checks(causes: list[Cause]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(c for cause in causes for c in cause.checks))


def run_checks(options: DoctorOptions, check_ids: tuple[str, ...]) -> list[HostChecks]:
    """The doctor restricted to `check_ids`, per host."""
    from dataclasses import replace  # noqa: PLC0415

    from ascend_env.doctor.report import Report  # noqa: PLC0415
    from ascend_env.doctor.run import doctor  # noqa: PLC0415

    document = doctor(replace(options, only=check_ids))
    reports = [document] if isinstance(document, Report) else document.hosts
    out = []
    for report in reports:
        out.append(HostChecks(host=report.host, reachable=report.reachable, error=report.error,
                              results={c.id: c for c in report.checks}))
    return out


def verdict(cause: Cause, host: HostChecks) -> Verdict:
    if not cause.checks:
        return "not checkable"
    if not host.reachable:
        return "undecided"
    statuses = [host.results[c].status for c in cause.checks if c in host.results]
    if any(s in ("fail", "warn") for s in statuses):
        return "holds"
    if len(statuses) == len(cause.checks) and all(s == "pass" for s in statuses):
        return "ruled out"
    return "undecided"
