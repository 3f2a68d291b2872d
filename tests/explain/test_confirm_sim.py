"""`explain --host/--inventory` on simulated hosts with an injected fault: the confirming
checks run there and the cause that holds is named (the others ruled out)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli_invoke import invoke
from tests.doctor import hosts as h
from tests.sim import fleet as sim_fleet
from tests.sim.fixtures import FleetFactory, SimFleet

pytestmark = [pytest.mark.sim, pytest.mark.slow]

HAL = ("ImportError: libascend_hal.so: cannot open shared object file: No such file or "
       "directory\n")
# The open-device failure of https://github.com/hw-native-sys/PTOAS/pull/948.
BUSY = ("[drv api] halDeviceOpen failed. device_id=1, drvRetCode=7.[FUNC:DeviceOpen]"
        "[FILE:npu_driver.cc][LINE:438]\n")


@pytest.fixture(scope="module")
def broken(sim_fleet_factory: FleetFactory) -> Iterator[SimFleet]:
    """sim1: the driver's libraries off the loader path; sim2: NPU 0 held by a process."""
    del sim_fleet_factory  # require_sim and leftovers
    name = "pytest-explain-confirm"
    fleet = SimFleet(sim_fleet.up(name=name, hosts=2, state="provisioned", devices=2))
    try:
        for host in fleet.hosts:
            h.make_ready(fleet.root(host))
        h.no_library_path(fleet, "sim1")
        h.device_busy(fleet, "sim2")
        yield fleet
    finally:
        sim_fleet.down(name)


def _causes(match: dict[str, Any], host: str) -> dict[str, str]:
    return {c["text"]: c["verdict"][host] for c in match["causes"]}


def test_host_names_the_missing_library_path(broken: SimFleet, tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    log.write_text(HAL)
    done = invoke("explain", str(log), "--host", "ssh://sim1", "--ssh-config",
                  str(broken.ssh_config), "--json")
    assert done.code == 0, done.err
    (match,) = json.loads(done.out)["matches"]
    host = match["checks"][0]["host"]
    verdicts = _causes(match, host)
    assert verdicts["driver/lib64 and its common/ and driver/ folders are not on the loader "
                    "path"] == "holds"
    assert verdicts["the NPU driver is not installed"] == "ruled out"
    statuses = {c["id"]: c["status"] for c in match["checks"]}
    assert statuses["env.driver-libraries"] == "fail"
    assert statuses["driver.installed"] == "pass"


def test_inventory_names_the_busy_device_on_its_host_only(broken: SimFleet,
                                                          tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    log.write_text(BUSY)
    done = invoke("explain", str(log), "--inventory", str(broken.inventory))
    assert done.code == 0, done.err
    assert "sim2: HOLDS - devices.free warn" in done.out, done.out
    done = invoke("explain", str(log), "--inventory", str(broken.inventory), "--json")
    (match,) = json.loads(done.out)["matches"]
    busy = _causes(match, "sim2")
    assert busy["another process holds the device"] == "holds"
    assert busy["the device has not started or reports a fault"] == "ruled out"
    assert _causes(match, "sim1")["another process holds the device"] == "ruled out"


def test_an_unreachable_host_is_exit_2(tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    log.write_text(HAL)
    done = invoke("explain", str(log), "--host", "ssh://root@127.255.255.254", "--json")
    assert done.code == 2
    document = json.loads(done.out)
    assert document["hosts"][0]["reachable"] is False
