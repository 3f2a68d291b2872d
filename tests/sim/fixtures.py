"""pytest fixtures for simulated Ascend hosts.

Wire into a conftest with `from tests.sim.fixtures import *  # noqa: F403`. Fleets are
session-scoped and shared by parameters; teardown runs as a finalizer, again at exit, and
leftovers of a killed session are reaped when the next one starts.
"""

from __future__ import annotations

import atexit
import importlib
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.sim import faults, fleet, hardware, network, network_faults, provision, rootfs
from tests.sim.chips import get_chip
from tests.sim.layout import FleetPaths, SimError, state_dir

APT_PACKAGES = ("debootstrap", "openssh-server", "makeself", "gcc")
PREFIX = "pytest-"


@dataclass
class SimFleet:
    """A running fleet as tests use it."""

    fleet: fleet.Fleet

    @property
    def inventory(self) -> Path:
        return self.fleet.inventory

    @property
    def ssh_config(self) -> Path:
        return self.fleet.ssh_config

    @property
    def hosts(self) -> list[str]:
        return [h.name for h in self.fleet.hosts]

    def root(self, host: str) -> Path:
        return Path(self.fleet.host(host).root)

    def ssh(self, host: str, command: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """Run `command` on `host` over real ssh (as Ansible and testinfra do)."""
        return subprocess.run(["ssh", "-F", str(self.ssh_config), host, command],
                              capture_output=True, text=True, timeout=timeout, check=False)

    def testinfra(self, host: str) -> Any:
        # Imported by name: testinfra ships no type information.
        testinfra = importlib.import_module("testinfra")
        return testinfra.get_host(f"ssh://{host}", ssh_config=str(self.ssh_config))

    def fault(self, host: str, name: str, device: int | None = None) -> str:
        return faults.apply(self.root(host), name, device)

    def network_fault(self, host: str, name: str, device: int = 0,
                      peer: str | None = None) -> str:
        """A fault of the NPU network (tests/sim/network_faults.py) on one device's port."""
        fabric = network.fabric_dir(FleetPaths.for_fleet(self.fleet.name).base)
        return network_faults.apply(fabric, self.root(host), host, name, device=device, peer=peer)


@dataclass
class ScratchRoots:
    """Host roots without sshd, for running installers with chroot (fast, per test)."""

    name: str
    made: list[Path] = field(default_factory=list)

    def new(self, chip: str = "910b", devices: int = 2, kernel_headers: bool = True) -> Path:
        fp = FleetPaths.for_fleet(self.name)
        hp = fp.host(f"scratch{len(self.made) + 1}")
        rootfs.create_host_root(rootfs.ensure_base(), hp)
        hardware.install(hp.root, get_chip(chip), devices, kernel_headers=kernel_headers)
        self.made.append(hp.root)
        return hp.root

    def cleanup(self) -> None:
        fleet.down(self.name)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def reap_leftovers() -> list[str]:
    """Remove fleets of earlier pytest sessions whose process is gone."""
    d = state_dir() / "fleets"
    out: list[str] = []
    if not d.is_dir():
        return out
    for f in d.iterdir():
        if not f.name.startswith(PREFIX):
            continue
        pid = f.name[len(PREFIX):].split("-")[0]
        if pid.isdigit() and not _pid_alive(int(pid)):
            out += fleet.down(f.name)
    return out


def require_sim() -> None:
    """Skip unless this machine can run simulated hosts; install the tools if possible."""
    if os.geteuid() != 0:
        pytest.skip("simulated hosts need root (mounts, mknod, sshd chroot)")
    missing = [t for t in ("debootstrap", "makeself", "gcc") if shutil.which(t) is None]
    if missing or not Path("/usr/sbin/sshd").exists():
        res = subprocess.run(["apt-get", "install", "-y", *APT_PACKAGES],
                             capture_output=True, text=True, check=False)
        if res.returncode != 0 or shutil.which("debootstrap") is None:
            pytest.skip(f"debootstrap could not be installed: {res.stderr.strip()[-300:]}")


FleetFactory = Callable[..., SimFleet]


@pytest.fixture(scope="session")
def sim_fleet_factory(request: pytest.FixtureRequest) -> Iterator[FleetFactory]:
    """Factory: `sim_fleet_factory(hosts=2, state="bare", chip="910b", devices=8)`.

    Calls with the same arguments share one fleet for the whole session, so a test that
    switches faults on should clear them (`fleet.fault(host, "clear")`).
    """
    require_sim()
    reap_leftovers()
    fleets: dict[tuple[Any, ...], SimFleet] = {}

    def teardown() -> None:
        for sf in list(fleets.values()):
            fleet.down(sf.fleet.name)
        fleets.clear()

    request.addfinalizer(teardown)
    atexit.register(teardown)

    def make(*, hosts: int = 2, state: str = "bare", chip: str = "910b", devices: int = 8,
             cann: str = "8.5.0", hdk: str = "25.5.0") -> SimFleet:
        key = (hosts, state, chip, devices, cann, hdk)
        if key not in fleets:
            name = f"{PREFIX}{os.getpid()}-{len(fleets) + 1}"
            try:
                f = fleet.up(name=name, hosts=hosts, state=state, chip=chip, devices=devices,
                             versions=fleet.Versions(cann=cann, hdk=hdk))
            except SimError as exc:
                pytest.fail(f"simulated hosts did not come up: {exc}")
            fleets[key] = SimFleet(f)
        return fleets[key]

    yield make
    teardown()


@pytest.fixture(scope="session")
def sim_bare(sim_fleet_factory: FleetFactory) -> SimFleet:
    """Two bare 910B hosts (OS only, 8 NPUs each)."""
    return sim_fleet_factory(hosts=2, state="bare")


@pytest.fixture(scope="session")
def sim_provisioned(sim_fleet_factory: FleetFactory) -> SimFleet:
    """Two 910B hosts with fake driver, firmware, CANN 8.5.0, ops and NNAL installed."""
    return sim_fleet_factory(hosts=2, state="provisioned")


@pytest.fixture
def sim_private_fleet(sim_fleet_factory: FleetFactory) -> Iterator[FleetFactory]:
    """Factory of fleets that belong to one test and are torn down after it.

    For tests that change their hosts (installs, fixes): shared session fleets would carry
    one test's changes into the next.
    """
    made: list[str] = []
    counter = iter(range(1, 1000))

    def make(*, hosts: int = 1, state: str = "bare", chip: str = "910b", devices: int = 8,
             cann: str = "8.5.0", hdk: str = "25.5.0", os_name: str | None = None,
             arch: str | None = None) -> SimFleet:
        name = f"{PREFIX}{os.getpid()}-private-{next(counter)}"
        try:
            f = fleet.up(name=name, hosts=hosts, state=state, chip=chip, devices=devices,
                         versions=fleet.Versions(cann=cann, hdk=hdk), os_name=os_name,
                         arch=arch)
        except SimError as exc:
            pytest.fail(f"simulated hosts did not come up: {exc}")
        made.append(name)
        return SimFleet(f)

    yield make
    for name in made:
        fleet.down(name)


@pytest.fixture
def sim_scratch() -> Iterator[ScratchRoots]:
    """Fresh host roots (no sshd) for one test; run installers with `provision.in_root`."""
    require_sim()
    sr = ScratchRoots(f"{PREFIX}{os.getpid()}-scratch")
    yield sr
    sr.cleanup()


__all__ = ["ScratchRoots", "SimFleet", "provision", "require_sim", "sim_bare",
           "sim_fleet_factory", "sim_private_fleet", "sim_provisioned", "sim_scratch"]
