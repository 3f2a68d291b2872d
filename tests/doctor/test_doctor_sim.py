"""`ascend-env doctor` against simulated Ascend hosts: real ssh, real probe, real Ansible.

One fleet of ready hosts (vendor packages plus what `install` adds), each broken by one
fault, is checked in a single fleet run; every fault must be caught by its own check and by
no other. Fixes get a private host with every fixable fault at once.
"""

from __future__ import annotations

import json
import platform
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ascend_env.ansible.runner import PlaybookRun, run_playbook
from ascend_env.doctor.fix import host_vars
from ascend_env.doctor.report import FleetReport, Report
from ascend_env.doctor.run import DoctorOptions, doctor
from ascend_env.spec.envspec import build_spec
from tests.cli_invoke import invoke
from tests.doctor import hosts as h
from tests.sim import fleet as sim_fleet
from tests.sim.fixtures import FleetFactory, SimFleet

pytestmark = [pytest.mark.sim, pytest.mark.slow]

SPEC = {"extends": "910b", "name": "sim-doctor", "hardware": {"arch": platform.machine(),
        "devices": 2}, "os": {"family": "debian", "version": "12"},
        "frameworks": {"torch": None, "mindspore": None}}

# host -> (fault, checks that must fail, checks that must warn, a phrase of the message)
FAULTS: dict[str, tuple[h.Fault | None, set[str], set[str], str]] = {
    "sim1": (None, set(), set(), ""),
    "sim2": (None, set(), set(), ""),
    "sim3": (h.driver_firmware_mismatch, {"firmware.compatible"}, set(),
             "npu-smi reports driver and firmware incompatible"),
    "sim4": (h.cann_too_new, {"driver.version", "driver.supports-cann"}, set(),
             "CANN 8.5.0 and driver 24.1.0 are not a pair by the vendor's own "
             "compatibility lists"),
    "sim5": (h.torch_npu_other_cann, {"frameworks.torch-npu-cann"}, set(),
             "torch_npu 2.1.0.post8 is built for CANN 8.0.RC3, CANN 8.5.0 is installed"),
    "sim6": (h.ops_other_version, {"cann.ops"}, set(),
             "the ops package is 8.3.RC1, the toolkit is 8.5.0"),
    "sim7": (h.no_library_path, {"env.driver-libraries"}, set(),
             "libascend_hal.so does not resolve"),
    "sim8": (h.set_env_never_sourced, {"env.set-env"}, set(),
             "login shells do not source set_env.sh"),
    "sim9": (h.device_node_mode, {"permissions.device-nodes"}, set(),
             "1 device node(s) not HwHiAiUser:HwHiAiUser 0660: /dev/davinci1"),
    "sim10": (h.user_not_in_group, {"permissions.run-users"}, set(),
              "user(s) alice not in the HwHiAiUser group"),
    "sim11": (h.health_alarm, {"devices.health"}, set(),
              "NPU 1 report a health alarm: NPU 1: Alarm, error codes A4025021"),
    "sim12": (h.device_busy, set(), {"devices.free"},
              "NPU 0 held by another process: NPU 0: pid 436712 python3"),
    "sim13": (h.not_started, {"devices.started"}, set(),
              "NPU 1 did not start (npu-smi Health UNKNOWN)"),
    "sim14": (h.threads_wrong, {"threads.omp"}, set(), "OMP_NUM_THREADS is 64, 1 fits"),
    "sim15": (h.threads_unset, {"threads.omp"}, set(), "OMP_NUM_THREADS is unset"),
    "sim16": (h.python_deps_missing, {"python.cann-deps"}, set(),
              "missing from /usr/bin/python3: decorator, sympy, absl-py"),
}


@pytest.fixture(scope="module")
def spec_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import yaml  # noqa: PLC0415

    path = tmp_path_factory.mktemp("spec") / "sim.yaml"
    path.write_text(yaml.safe_dump(SPEC))
    return path


@pytest.fixture(scope="module")
def faulty(sim_fleet_factory: FleetFactory) -> Iterator[SimFleet]:
    """Ready hosts sim1..sim16, each (but two) with one fault."""
    del sim_fleet_factory  # require_sim and leftovers
    name = f"pytest-doctor-{id(FAULTS)}"
    fleet = SimFleet(sim_fleet.up(name=name, hosts=len(FAULTS), state="provisioned",
                                  devices=2))
    try:
        for host, (fault, *_rest) in FAULTS.items():
            h.make_ready(fleet.root(host))
            if fault is not None:
                fault(fleet, host)
        yield fleet
    finally:
        sim_fleet.down(name)


@pytest.fixture(scope="module")
def live(faulty: SimFleet) -> FleetReport:
    spec = build_spec(SPEC, "test")
    report = doctor(DoctorOptions(spec=spec, inventory=faulty.inventory,
                                  run_users=(h.RUN_USER,)))
    assert isinstance(report, FleetReport)
    return report


def _by_status(report: Report, status: str) -> set[str]:
    return {c.id for c in report.checks if c.status == status}


@pytest.mark.parametrize("host", [f"sim{n}" for n in range(1, len(FAULTS) + 1)])
def test_each_fault_is_caught_by_its_own_check(live: FleetReport, host: str) -> None:
    _, failing, warning, phrase = FAULTS[host]
    report = next(r for r in live.hosts if r.host == host)
    assert report.reachable, report.error
    assert _by_status(report, "error") == set(), [c.message for c in report.checks
                                                 if c.status == "error"]
    assert _by_status(report, "fail") == failing, [
        f"{c.id}: {c.message}" for c in report.checks if c.status == "fail"]
    assert _by_status(report, "warn") == warning
    if phrase:
        messages = [c.message for c in report.checks if c.id in failing | warning]
        assert any(phrase in m for m in messages), messages
        for check in report.checks:
            if check.id in failing | warning:
                assert check.observed and check.expected and check.why, check
                assert check.fix is not None and check.fix.command, check


def test_ready_host_passes_every_level1_check_that_applies(live: FleetReport) -> None:
    report = next(r for r in live.hosts if r.host == "sim1")
    assert report.exit_code() == 0
    skipped = {c.id: c.message for c in report.checks if c.status == "skip"}
    # What cannot apply to this host says why; nothing is skipped for want of data.
    assert set(skipped) == {"frameworks.torch-npu-cann", "frameworks.torch-pair",
                            "frameworks.mindspore-cann", "frameworks.versions",
                            "threads.cpu-affinity", "selinux.labels", "containers.driver",
                            "network.plan", "network.superpod"}, \
        skipped
    assert report.summary["pass"] == len(report.checks) - len(skipped)


def test_bare_host_gets_one_failure_and_reasons(sim_bare: SimFleet, tmp_path: Path) -> None:
    done = invoke("doctor", "--inventory", str(sim_bare.inventory), "--limit", "sim1",
                  "--json")
    assert done.code == 1, done.err
    doc = json.loads(done.out)
    assert doc["schema"] == "ascend-env/fleet-report/v1"
    report = doc["hosts"][0]
    failing = {c["id"] for c in report["checks"] if c["status"] == "fail"}
    assert failing == {"driver.installed"}
    skips = [c for c in report["checks"] if c["status"] == "skip"]
    assert all("driver is not installed" in c["message"] or "no spec" in c["message"]
               or "not installed" in c["message"] or "container" in c["message"]
               for c in skips), skips
    assert next(c for c in report["checks"] if c["id"] == "hardware.cards")["status"] == "pass"


def test_this_machine_gets_a_clean_report() -> None:
    done = invoke("doctor", "--json")
    assert done.code in (0, 1), done.err
    assert "Traceback" not in done.err
    doc = json.loads(done.out)
    assert doc["schema"] == "ascend-env/report/v1"
    assert {c["status"] for c in doc["checks"]} <= {"pass", "fail", "skip", "warn"}


def test_collect_then_from_gives_the_live_verdicts(faulty: SimFleet, live: FleetReport,
                                                   spec_file: Path, tmp_path: Path) -> None:
    capture = tmp_path / "fleet.json.gz"
    done = invoke("collect", "--inventory", str(faulty.inventory), "-o", str(capture),
                  "--run-user", h.RUN_USER, "--spec", str(spec_file))
    assert done.code == 0, done.err
    again = invoke("doctor", "--from", str(capture), "--spec", str(spec_file), "--json",
                   "--run-user", h.RUN_USER)
    assert again.code == 1, again.err
    doc = json.loads(again.out)
    offline = {(r["host"], c["id"]): c["status"] for r in doc["hosts"] for c in r["checks"]}
    online = {(r.host, c.id): c.status for r in live.hosts for c in r.checks}
    assert offline == online
    assert {r["source"] for r in doc["hosts"]} == {str(capture)}


def test_fleet_table_with_broken_and_unreachable_host(faulty: SimFleet, spec_file: Path,
                                                      tmp_path: Path) -> None:
    inventory = h.inventory_with(faulty, tmp_path / "inv.ini", ghosts=("ghost",))
    junit, prom = tmp_path / "doctor.xml", tmp_path / "doctor.prom"
    done = invoke("doctor", "--inventory", str(inventory), "--limit", "sim1:sim2:sim11:ghost",
                  "--spec", str(spec_file), "--run-user", h.RUN_USER, "--junit", str(junit),
                  "--prometheus", str(prom))
    assert done.code == 2, done.out + done.err
    rows = {line.split()[0]: line.split() for line in done.out.splitlines()
            if line.split() and line.split()[0] in ("sim1", "sim2", "sim11", "ghost")}
    assert rows["sim1"][-1] == "ok" and rows["sim2"][-1] == "ok"
    assert rows["sim11"][-1] == "failed" and "✗" in rows["sim11"]
    assert rows["ghost"][-1] == "unreachable"
    assert "sim11 devices.health: NPU 1 report a health alarm" in done.out
    assert "4 host(s): 2 ok, 1 failed, 1 unreachable" in done.out
    assert 'ascend_env_doctor_up{host="ghost"} 0' in prom.read_text()
    assert 'testsuite name="ghost"' in junit.read_text()


# -- fixes ------------------------------------------------------------------------------------

FIXABLE = (h.no_library_path, h.set_env_never_sourced, h.device_node_mode,
           h.user_not_in_group, h.threads_wrong, h.python_deps_missing)


@pytest.fixture
def broken(sim_private_fleet: FleetFactory, tmp_path: Path) -> tuple[SimFleet, Path]:
    fleet = sim_private_fleet(hosts=1, state="provisioned", devices=2)
    root = fleet.root("sim1")
    h.make_ready(root)
    for fault in FIXABLE:
        fault(fleet, "sim1")
    h.give_pip_and_wheels(root, ("sympy", "decorator", "absl-py"))
    inventory = h.inventory_with(fleet, tmp_path / "inv.ini", extra_vars={
        "fix_python_deps_pip_args": f"--no-index --find-links {h.WHEELHOUSE} "
                               "--break-system-packages"})
    return fleet, inventory


def _doctor(inventory: Path, spec_file: Path, tmp_path: Path, *flags: str) -> tuple[int,
                                                                                     Any]:
    done = invoke("doctor", "--inventory", str(inventory), "--spec", str(spec_file), "--json",
                  "--run-user", h.RUN_USER, "--log-dir", str(tmp_path / "logs"), *flags)
    assert "Traceback" not in done.err, done.err
    return done.code, json.loads(done.out)["hosts"][0]


def test_fix_dry_run_then_fix_then_nothing_left(broken: tuple[SimFleet, Path],
                                                spec_file: Path, tmp_path: Path) -> None:
    fleet, inventory = broken
    root = fleet.root("sim1")
    code, before = _doctor(inventory, spec_file, tmp_path)
    assert code == 1
    failing = {c["id"] for c in before["checks"] if c["status"] == "fail"}
    assert failing == {"env.driver-libraries", "env.set-env", "env.cann-libraries",
                       "permissions.device-nodes",
                       "permissions.run-users", "threads.omp", "python.cann-deps"}

    code, dry = _doctor(inventory, spec_file, tmp_path, "--fix", "--check")
    assert code == 1
    assert dry["fixes"]["mode"] == "dry-run"
    assert dry["fixes"]["ids"] == ["ld-library-path", "device-permissions", "python-deps",
                                   "aicpu-threads"]
    assert dry["fixes"]["changed"], dry["fixes"]
    assert not (root / "etc/profile.d/ascend-env.sh").exists()  # nothing changed
    assert (root / "etc/profile.d/ascend-env-threads.sh").read_text().startswith(
        "export OMP_NUM_THREADS=64")

    code, fixed = _doctor(inventory, spec_file, tmp_path, "--fix")
    assert code == 0, [(c["id"], c["message"]) for c in fixed["checks"]
                       if c["status"] == "fail"] + [fixed["fixes"]]
    assert fixed["fixes"]["status"] == "changed" and not fixed["fixes"]["failed"]
    applied = {c["id"] for c in fixed["checks"] if c["fix"] and c["fix"]["applied"]}
    assert applied == failing
    assert all(c["status"] == "pass" for c in fixed["checks"] if c["id"] in failing)
    # Managed files keep the previous version beside them.
    backups = list((root / "etc/profile.d").glob("ascend-env-threads.sh.*~"))
    assert backups and "OMP_NUM_THREADS=64" in backups[0].read_text()

    code, second = _doctor(inventory, spec_file, tmp_path, "--fix")
    assert code == 0 and second["fixes"] is None

    # Idempotence of the playbook itself (molecule's test): every tag again, no change.
    facts_report = doctor(DoctorOptions(spec=build_spec(SPEC, "t"), inventory=inventory,
                                        run_users=(h.RUN_USER,)))
    assert isinstance(facts_report, FleetReport)
    from ascend_env.doctor.run import probe_options  # noqa: PLC0415
    from ascend_env.facts.assemble import facts_from_capture  # noqa: PLC0415
    from ascend_env.targets.collect import capture_hosts, resolve_hosts  # noqa: PLC0415

    options = DoctorOptions(spec=build_spec(SPEC, "t"), inventory=inventory,
                            run_users=(h.RUN_USER,))
    captured = capture_hosts(resolve_hosts(inventory=inventory), probe_options(options))
    assert captured[0].capture is not None
    variables = {"sim1": host_vars(facts_from_capture(captured[0].capture), options.spec,
                                   options.run_users, facts_report.hosts[0])}
    rc, log, events = run_playbook({"ascend_fix_hosts": variables}, PlaybookRun(
        inventory=inventory, log_dir=tmp_path / "idem",
        tags=["ld-library-path", "device-permissions", "python-deps", "aicpu-threads",
                    "selinux-context"]), playbook="fix.yml")
    assert rc == 0, log.read_text()[-3000:]
    changed = [e["task"] for e in events if e.get("event") == "result" and e.get("changed")]
    assert changed == [], changed
