"""Upgrades and rollbacks of a fleet of four simulated hosts, installed from spec-previous.yaml
(`python -m tests.sim repo --with-previous`), through the real command line: a canary whose
NPU does not come back from the driver's reset stops the roll and goes back; a job on an NPU
refuses the driver; a clean roll goes firmware-first, a canary then two hosts at a time; and
`ascend-env rollback` takes the fleet back, after which the doctor passes.

One fleet for the module, the scenarios in order (each starts where the one before left it):
simulated hosts are slow to make on a small shared machine.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from ascend_env.install.provision import InstallOptions
from ascend_env.install.state import HostRecord
from ascend_env.repository.fetch import Source, fetch
from ascend_env.spec.envspec import load_spec
from ascend_env.spec.plan import resolve
from ascend_env.workflows.install_checked import install_checked
from tests.cli_invoke import CliResult, invoke
from tests.install.test_install_sim import tree_digest
from tests.sim import fleet as sim_fleet
from tests.sim.faults import BUSY_PROCESS
from tests.sim.fixtures import PREFIX, FleetFactory, SimFleet
from tests.sim.reboot import prepare_reboots
from tests.wheels import catalogue_with_frameworks, fill_wheels

pytestmark = [pytest.mark.sim, pytest.mark.slow]

COMPONENTS = "user,driver,firmware,cann,env"
INSTALL_LOG = "var/log/ascend_seclog/ascend_install.log"


@dataclass
class World:
    """The fleet, the repository holding both releases, and the two specs."""

    fleet: SimFleet
    vendor: Path
    repo: Path
    overlay: Path
    logs: Path

    @property
    def hosts(self) -> list[str]:
        return self.fleet.hosts

    def install(self, *args: str) -> CliResult:
        return invoke("install", "--spec", str(self.vendor / "spec.yaml"), "--inventory",
                      str(self.fleet.inventory), "--repo", str(self.repo), "--catalogue",
                      str(self.overlay), "--components", COMPONENTS, "--allow-reboot",
                      "--log-dir", str(self.logs), "--json", *args)

    def versions(self, host: str) -> tuple[str, str]:
        """The driver's version.info and the CANN release its links lead to."""
        root = self.fleet.root(host) / "usr/local/Ascend"
        driver = next(line.split("=", 1)[1] for line in
                      (root / "driver/version.info").read_text().splitlines()
                      if line.startswith("Version="))
        latest = root / "ascend-toolkit/latest"
        return driver, latest.resolve().name.removeprefix("cann-")

    def record(self, host: str) -> HostRecord:
        text = (self.fleet.root(host) / "var/lib/ascend-env/installed.json").read_text()
        return HostRecord.model_validate_json(text)


def merged_overlay(vendor: Path, dest: Path) -> Path:
    """The fake vendor files' catalogue and the stand-in framework wheels', as one overlay
    for --catalogue."""
    merged: dict[str, Any] = {"schema": "test", "source": "tests.sim fakes and stand-ins",
                              "components": {}}
    for path in [vendor / "catalogue-overlay.json", *vendor.glob("wheels-overlay-*.json")]:
        for component, versions in json.loads(path.read_text())["components"].items():
            merged["components"].setdefault(component, {}).update(versions)
    dest.write_text(json.dumps(merged))
    return dest


@pytest.fixture(scope="module")
def world(sim_fleet_factory: FleetFactory, tmp_path_factory: pytest.TempPathFactory
          ) -> Iterator[World]:
    del sim_fleet_factory  # for its require_sim() and the reaping of earlier sessions
    root = tmp_path_factory.mktemp("upgrade")
    vendor, repo = root / "vendor", root / "repo"
    done = subprocess.run([sys.executable, "-m", "tests.sim", "repo", "--profile", "910b",
                           "--with-previous", "--dest", str(vendor)],
                          capture_output=True, text=True, check=False, timeout=1800)
    assert done.returncode == 0, done.stderr
    new, old = load_spec(path=vendor / "spec.yaml"), load_spec(path=vendor / "spec-previous.yaml")
    catalogue = catalogue_with_frameworks(vendor, new, old)
    for spec in (old, new):
        assert fetch(resolve(spec, catalogue), repo, Source(from_dir=vendor)).complete
    name = f"{PREFIX}{__import__('os').getpid()}-upgrade"
    made = sim_fleet.up(name=name, hosts=4, state="bare")
    try:
        fleet = SimFleet(made)
        for host in fleet.hosts:
            prepare_reboots(fleet.root(host))
        # With the venv of CANN's Python dependencies (stand-in wheels): the rollback takes
        # it back too, and the doctor judges it.
        fill_wheels(repo)
        first = install_checked(old, resolve(old, catalogue), InstallOptions(
            repo=repo, inventory=fleet.inventory, components=[*COMPONENTS.split(","), "python"],
            allow_reboot=True, log_dir=root / "logs"))
        assert first.succeeded, first
        yield World(fleet, vendor, repo, merged_overlay(vendor, root / "overlay.json"),
                    root / "logs")
    finally:
        sim_fleet.down(name)


def log_lines(world: World, host: str, since: datetime) -> list[tuple[datetime, str]]:
    """The fake installers' `<package> <version> <mode> success` lines since `since`."""
    found = []
    for line in (world.fleet.root(host) / INSTALL_LOG).read_text().splitlines():
        stamp, _, said = line.partition("] ")
        when = datetime.strptime(stamp.lstrip("["), "%Y-%m-%d %H:%M:%S.%f")
        if when >= since and said.endswith(" success"):
            found.append((when, said))
    return found


def test_the_fleet_starts_on_the_previous_release(world: World) -> None:
    for host in world.hosts:
        assert world.versions(host) == ("25.3.rc1", "8.3.RC1")
        record = world.record(host)
        assert record.current.spec is not None
        assert record.current.spec.name == "910b-sim-previous"
        assert record.current.cann.version == "8.3.RC1" and record.previous is None
        assert record.current.venv is not None and record.current.venv.closure


def test_a_canary_that_fails_its_gate_stops_the_roll_and_goes_back(world: World) -> None:
    canary, *others = world.hosts
    untouched = {host: tree_digest(world.fleet.root(host)) for host in others}
    world.fleet.fault(canary, "health-alarm-after-driver")
    result = world.install("--serial", "1,50%", "--gate", "2", "--on-fail", "rollback")
    assert result.code == 1, result.out + result.err
    summary = json.loads(result.out)
    assert f"{canary}: gate (doctor level 2): devices.health" in summary["stopped"], summary
    assert [b["outcome"] for b in summary["batches"]] == ["failed", "not run", "not run"]
    assert summary["batches"][0]["gate"][0].startswith(f"{canary}: devices.health: ")
    assert {h["host"]: h["status"] for h in summary["hosts"]} == {
        canary: "failed", **dict.fromkeys(others, "not run")}
    # Back on what it had: the previous driver and CANN (the older toolkit installed again
    # after the newer one's uninstall), recorded so.
    assert [item["host"] for item in summary["rolled_back"]] == [canary]
    assert summary["rolled_back"][0]["to"].startswith("driver 25.3.rc1, firmware ")
    assert world.versions(canary) == ("25.3.rc1", "8.3.RC1")
    assert not (world.fleet.root(canary) / "usr/local/Ascend/cann-8.5.0").exists()
    record = world.record(canary)
    assert (record.current.driver, record.current.cann.version) == ("25.3.rc1", "8.3.RC1")
    assert record.previous is not None and record.previous.cann.version == "8.5.0"
    # The NPU is still in Alarm: the rollback's own doctor says so, and the host stays failed.
    assert summary["rolled_back"][0]["status"] == "failed"
    assert "devices.health" in summary["rolled_back"][0]["message"]
    for host, digest in untouched.items():
        assert tree_digest(world.fleet.root(host)) == digest, f"{host} was changed"
    world.fleet.fault(canary, "clear")


def test_a_host_with_a_job_on_its_npu_is_refused_naming_the_pid(world: World) -> None:
    busy = world.hosts[0]
    before = {host: tree_digest(world.fleet.root(host)) for host in world.hosts}
    world.fleet.fault(busy, "busy")
    result = world.install("--serial", "1,50%", "--gate", "2", "--on-fail", "rollback")
    world.fleet.fault(busy, "clear")
    assert result.code == 1, result.out + result.err
    summary = json.loads(result.out)
    host = next(h for h in summary["hosts"] if h["host"] == busy)
    assert host["status"] == "failed" and host["changed"] == 0, host
    assert f"pid {BUSY_PROCESS['pid']} ({BUSY_PROCESS['name']}) on NPU 0" in host["message"]
    assert "nothing was changed on this host" in host["message"]
    assert summary["rolled_back"] == []  # nothing of it changed
    assert {h: tree_digest(world.fleet.root(h)) for h in world.hosts} == before
    assert world.versions(busy) == ("25.3.rc1", "8.3.RC1")


def test_check_shows_each_hosts_components_from_to_and_changes_nothing(world: World) -> None:
    before = {host: tree_digest(world.fleet.root(host)) for host in world.hosts}
    result = world.install("--check")
    assert result.code == 0, result.out + result.err
    summary = json.loads(result.out)
    for host in world.hosts:
        found = {item["component"]: (item["before"], item["after"], item["change"])
                 for item in summary["changes"][host]}
        assert found["driver"] == ("25.3.rc1", "25.5.0", "upgrade"), found
        assert found["cann"] == ("8.3.RC1", "8.5.0", "upgrade"), found
        assert found["firmware"][2] == "upgrade" and found["venv"][2] == "unchanged", found
    assert {h: tree_digest(world.fleet.root(h)) for h in world.hosts} == before


def test_a_clean_roll_goes_firmware_first_a_canary_then_two_at_a_time(world: World,
                                                                      tmp_path: Path) -> None:
    since = datetime.now()
    said = tmp_path / "scheduler.log"
    hook = f"sh -c 'echo \"$0 $1\" >> {said}' %s {{host}}"
    result = world.install("--serial", "1,50%", "--gate", "2", "--on-fail", "rollback",
                           "--drain-cmd", hook % "drain", "--undrain-cmd", hook % "undrain")
    assert result.code == 0, result.out + result.err
    summary = json.loads(result.out)
    assert [b["hosts"] for b in summary["batches"]] == [world.hosts[:1], world.hosts[1:3],
                                                       world.hosts[3:]]
    assert [b["outcome"] for b in summary["batches"]] == ["passed"] * 3
    runs = {}
    for host in world.hosts:
        assert world.versions(host) == ("25.5.0", "8.5.0")
        lines = log_lines(world, host, since)
        firmware = [when for when, text in lines if "npu-firmware" in text and "--upgrade" in text]
        driver = [when for when, text in lines if "npu-driver" in text and "--upgrade" in text]
        assert len(firmware) == 1 and len(driver) == 1, lines
        assert firmware[0] < driver[0], f"{host}: the driver went before the firmware"
        runs[host] = (lines[0][0], lines[-1][0])
    canary, second, third, last = world.hosts
    # Batch by batch: each ends before the next begins; the two of batch 2 at once.
    assert runs[canary][1] < min(runs[second][0], runs[third][0])
    assert max(runs[second][1], runs[third][1]) < runs[last][0]
    assert max(runs[second][0], runs[third][0]) < min(runs[second][1], runs[third][1])
    assert said.read_text().split("\n")[:-1] == [
        f"drain {canary}", f"undrain {canary}", f"drain {second}", f"drain {third}",
        f"undrain {second}", f"undrain {third}", f"drain {last}", f"undrain {last}"]


def test_rollback_takes_the_fleet_back_and_the_doctor_passes(world: World) -> None:
    result = invoke("rollback", "--inventory", str(world.fleet.inventory), "--repo",
                    str(world.repo), "--catalogue", str(world.overlay), "--allow-reboot",
                    "--log-dir", str(world.logs), "--json")
    assert result.code == 0, result.out + result.err
    summary = json.loads(result.out)
    assert summary["schema"] == "ascend-env/rollback/v1"
    assert sorted(item["host"] for item in summary["rolled_back"]) == sorted(world.hosts)
    for host in world.hosts:
        assert world.versions(host) == ("25.3.rc1", "8.3.RC1")
        record = world.record(host)
        assert record.previous is not None and record.previous.cann.version == "8.5.0"
        assert record.current.venv is not None
    doctor = invoke("doctor", "--spec", str(world.vendor / "spec-previous.yaml"),
                    "--inventory", str(world.fleet.inventory), "--json")
    report = json.loads(doctor.out)
    failed = [(h["host"], c["id"], c["message"]) for h in report["hosts"]
              for c in [*h["checks"], *report["fleet_checks"]]
              if c["status"] in ("fail", "error")]
    assert failed == []
    assert doctor.code == 0, doctor.err


def test_rollback_names_what_the_repository_lacks_before_anything_changes(
        world: World, tmp_path: Path) -> None:
    """The fleet is on the previous release, its record's previous is the newer one: a
    repository without the newer release's files cannot take it there, and says so."""
    partial = tmp_path / "partial"
    shutil.copytree(world.repo, partial, symlinks=True,
                    ignore=shutil.ignore_patterns("*8.5.0*", "*25.5.0*"))
    before = {host: tree_digest(world.fleet.root(host)) for host in world.hosts}
    result = invoke("rollback", "--inventory", str(world.fleet.inventory), "--repo",
                    str(partial), "--catalogue", str(world.overlay), "--log-dir",
                    str(world.logs))
    assert result.code == 1, result.out + result.err
    assert "nothing was changed on any host" in result.err
    assert "Ascend-hdk-910b-npu-driver_25.5.0" in result.err
    assert {h: tree_digest(world.fleet.root(h)) for h in world.hosts} == before
