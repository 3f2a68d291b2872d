"""`install`, then the doctor: level 1, narrowed to what install controls, on the hosts that
reached the spec; a failed check fails the host in the install's summary. Composed here so
that neither install nor the doctor imports the other."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ascend_env.ansible.runner import Event, HostResult
from ascend_env.doctor.report import FleetReport
from ascend_env.doctor.run import DoctorOptions, doctor
from ascend_env.install.gate import INSTALL_CATEGORIES
from ascend_env.install.provision import InstallOptions, InstallSummary, install
from ascend_env.spec.envspec import EnvSpec
from ascend_env.spec.plan import Plan

# What install controls, so what its doctor run judges (the full doctor is `ascend-env
# doctor`); a roll's gate 1 is the same list (install/gate.py). The python role adds the
# frameworks and their dependencies, the env role the thread settings.
POST_INSTALL_CATEGORIES = INSTALL_CATEGORIES
PYTHON_CATEGORIES = ("frameworks", "python")


def post_install_doctor(spec: EnvSpec, results: list[HostResult], *,
                        inventory: Path | None, host: str | None,
                        python: bool = False, threads: bool = False) -> None:
    """Run the level-1 doctor on the hosts that reached the spec; a failed check fails them."""
    done = [result for result in results if result.status in ("ok", "changed")]
    if not done:
        return
    local = inventory is None and host is None
    document = doctor(DoctorOptions(
        spec=spec, inventory=inventory, target=host,
        limit=",".join(result.host for result in done) if inventory else None,
        only=POST_INSTALL_CATEGORIES + (PYTHON_CATEGORIES if python else ())
        + (("threads",) if threads else ())))
    reports = document.hosts if isinstance(document, FleetReport) else [document]
    by_name = {report.host: report for report in reports}
    for result in done:
        # Ansible calls this machine `localhost`; the doctor uses its host name.
        report = by_name.get(result.host) or (reports[0] if local or len(reports) == 1
                                              else None)
        if report is None:
            continue
        failed = [check for check in report.checks if check.status in ("fail", "error")]
        result.doctor = {"summary": dict(report.summary),
                         "failed": [check.id for check in failed]}
        if not report.reachable:
            result.status, result.message = "failed", f"post-install doctor: {report.error}"
        elif failed:
            result.status = "failed"
            result.message = "post-install doctor: " + "; ".join(
                f"{check.id}: {check.message}" for check in failed)


def install_checked(spec: EnvSpec, plan: Plan, options: InstallOptions, *, check_after: bool = True,
                    on_event: Callable[[Event], None] = lambda event: None) -> InstallSummary:
    """Install to the spec, then (unless in check mode or told not to) doctor the hosts."""
    summary = install(spec, plan, options, on_event=on_event)
    if check_after and not options.check:
        wanted = options.wanted()
        post_install_doctor(spec, summary.hosts, inventory=options.inventory, host=options.host,
                            python="python" in wanted and bool(spec.framework_pins()),
                            threads="env" in wanted)
    return summary
