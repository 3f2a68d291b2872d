"""Install, then doctor, with the same spec on a simulated host: the doctor is green, its
thread checks included (install writes the settings the doctor computes, one computation)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascend_env.doctor.report import FleetReport, Report
from ascend_env.doctor.run import DoctorOptions, doctor
from ascend_env.install.provision import InstallOptions
from ascend_env.repository.fetch import Source, fetch
from ascend_env.spec.plan import resolve
from ascend_env.workflows.install_checked import install_checked
from tests.install.test_install_sim import ARCH, spec_for
from tests.sim import packages
from tests.sim.fixtures import FleetFactory
from tests.wheels import catalogue_with_frameworks, fill_wheels

pytestmark = [pytest.mark.sim, pytest.mark.slow]


def _one(document: Report | FleetReport) -> Report:
    return document.hosts[0] if isinstance(document, FleetReport) else document


def test_install_then_doctor_is_green_threads_included(sim_private_fleet: FleetFactory,
                                                        tmp_path: Path) -> None:
    fleet = sim_private_fleet(hosts=1, state="bare")
    spec = spec_for("8.5.0")  # the 910b profile on this machine, frameworks included
    vendor, repo = tmp_path / "vendor", tmp_path / "repo"
    packages.build_repo(vendor, chip="910b", cann="8.5.0", hdk="25.5.0", arch=ARCH)
    plan = resolve(spec, catalogue_with_frameworks(vendor, spec))
    assert fetch(plan, repo, Source(from_dir=vendor)).complete
    fill_wheels(repo)
    # No extra vars: the reboot is the simulation's through the inventory's host variables
    # (python -m tests.sim up writes them), as for an operator typing install by hand.
    summary = install_checked(spec, plan, InstallOptions(repo=repo, inventory=fleet.inventory,
                                                 allow_reboot=True, log_dir=tmp_path / "logs"))
    assert summary.succeeded, summary
    assert summary.hosts[0].doctor is not None and summary.hosts[0].doctor["failed"] == []

    report = _one(doctor(DoctorOptions(spec=spec, inventory=fleet.inventory)))
    checks = {check.id: check for check in report.checks}
    assert [c.id for c in report.checks if c.status in ("fail", "error")] == [], \
        [(c.id, c.message) for c in report.checks if c.status in ("fail", "error")]
    assert checks["threads.omp"].status == "pass", checks["threads.omp"]
    assert checks["threads.cpu-affinity"].status == "pass", checks["threads.cpu-affinity"]

    # What install wrote is what the doctor computed for this host (threads.omp compares the
    # login shell's value with plan_threads; its observed value is that shell's).
    host = fleet.hosts[0]
    written = (fleet.root(host) / "etc/profile.d/ascend-env-threads.sh").read_text()
    omp = next(line for line in written.splitlines() if line.startswith("export OMP_"))
    assert omp == f"export {checks['threads.omp'].observed}"
    assert "export CPU_AFFINITY_CONF=1\n" in written
