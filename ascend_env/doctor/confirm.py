"""`explain --host/--inventory`: the doctor restricted to the checks that the matched
signatures' causes name, per host (the verdicts are explain/confirm.py's)."""

from __future__ import annotations

from dataclasses import replace

from ascend_env.doctor.report import Report
from ascend_env.doctor.run import DoctorOptions, doctor
from ascend_env.explain.confirm import HostChecks


def run_checks(options: DoctorOptions, check_ids: tuple[str, ...]) -> list[HostChecks]:
    """The doctor restricted to `check_ids`, per host."""
    document = doctor(replace(options, only=check_ids))
    reports = [document] if isinstance(document, Report) else document.hosts
    return [HostChecks(host=report.host, reachable=report.reachable, error=report.error,
                       results={check.id: check for check in report.checks})
            for report in reports]
