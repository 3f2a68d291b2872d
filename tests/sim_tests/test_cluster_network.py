"""Cluster bring-up on 4 simulated hosts: every network fault named by host and device, rank
tables written and checked against the live ports.

The hosts' NPU ports are the fake hccn_tool's (tests/sim/target/hccn_tool.py) over the fleet's
fabric; the faults are tests/sim/network_faults.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli_invoke import invoke
from tests.sim.fixtures import FleetFactory, SimFleet
from tests.sim_tests.network_doctor import SIM_PLAN, checks_by_host, doctor

pytestmark = [pytest.mark.sim, pytest.mark.slow]


@pytest.fixture(scope="module")
def plan(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A spec with the simulated fleet's address plan: without a plan a missing address
    only warns (a host may never run a job across hosts)."""
    spec = tmp_path_factory.mktemp("plan") / "spec.yaml"
    spec.write_text(json.dumps({"extends": "910b", "name": "sim-fleet", "network": SIM_PLAN}))
    return spec


@pytest.fixture(scope="module")
def four(sim_fleet_factory: FleetFactory) -> SimFleet:
    return sim_fleet_factory(hosts=4, state="provisioned")


@pytest.fixture
def clean(four: SimFleet) -> Iterator[SimFleet]:
    yield four
    for host in four.hosts:
        four.network_fault(host, "network-clear")


def test_a_healthy_fleet_passes(clean: SimFleet, plan: Path) -> None:
    code, document = doctor(clean, "--spec", str(plan))
    assert checks_by_host(document) == {} and code == 0
    ids = {c["id"] for c in document["fleet_checks"]}
    assert {"network.unique-addresses", "network.subnets", "network.hccl-env"} <= ids
    passed = {c["id"] for c in document["hosts"][0]["checks"] if c["status"] == "pass"}
    assert {"network.addresses", "network.links", "network.health", "network.conf-matches",
            "network.detect-gateway", "network.hccn-conf", "network.plan"} <= passed


@pytest.mark.parametrize("case", [
    ("link-down", "sim2", 3, "network.links", "device 3: link DOWN"),
    ("link-flapping", "sim3", 1, "network.links", "times (flapping)"),
    ("net-fault", "sim4", 0, "network.health", "device 0: Fault"),
    ("no-address", "sim1", 5, "network.addresses", "device 5 has no address"),
], ids=lambda case: case[0])
def test_each_host_fault_names_host_and_device(
        clean: SimFleet, plan: Path, case: tuple[str, str, int, str, str]) -> None:
    fault, host, device, check, words = case
    clean.network_fault(host, fault, device=device)
    code, document = doctor(clean, "--spec", str(plan))
    found = checks_by_host(document)
    assert code == 1 and set(found) == {host}, found
    messages = {c["id"]: c["message"] for c in found[host]}
    assert check in messages and words in messages[check], messages


@pytest.mark.parametrize("case", [
    ("duplicate-address", "sim2", 4, "sim1", "network.unique-addresses",
     ["sim1 device 4", "sim2 device 4"]),
    ("wrong-subnet", "sim3", 6, None, "network.subnets", ["sim3 device 6"]),
], ids=lambda case: case[0])
def test_each_fleet_fault_names_hosts_and_devices(
        clean: SimFleet, case: tuple[str, str, int, str | None, str, list[str]]) -> None:
    fault, host, device, peer, check, involved = case
    clean.network_fault(host, fault, device=device, peer=peer)
    code, document = doctor(clean)
    fleet_failed = {c["id"]: c for c in checks_by_host(document).get("fleet", [])}
    assert code == 1 and check in fleet_failed, checks_by_host(document)
    assert fleet_failed[check]["involved"] == involved


def test_a_generated_rank_table_validates_and_corruptions_are_named(
        clean: SimFleet, tmp_path: Path) -> None:
    table = tmp_path / "hccl.json"
    written = invoke("ranktable", "--inventory", str(clean.inventory), "-o", str(table),
                     "--json")
    assert written.code == 0, written.out + written.err
    document = json.loads(table.read_text())
    assert document["version"] == "1.0" and document["server_count"] == "4"
    assert document["server_list"][2]["server_id"] == clean.fleet.host("sim3").address
    assert document["server_list"][2]["device"][5] == {
        "device_id": "5", "device_ip": "10.20.5.13", "rank_id": "21"}
    code, report = doctor(clean, "--ranktable", str(table))
    assert code == 0, checks_by_host(report)

    def corrupted(change: Any) -> str:
        bad = json.loads(table.read_text())
        change(bad)
        path = tmp_path / "bad.json"
        path.write_text(json.dumps(bad))
        code, report = doctor(clean, "--ranktable", str(path), "--only", "network.ranktable")
        assert code == 1
        return str(checks_by_host(report)["fleet"][0]["message"])

    def drop(t: Any) -> None:
        del t["server_list"][1]["device"][7]

    def twice(t: Any) -> None:
        t["server_list"][3]["device"][0]["rank_id"] = "0"

    def address(t: Any) -> None:
        t["server_list"][0]["device"][2]["device_ip"] = "10.20.2.99"

    def server(t: Any) -> None:
        t["server_list"][3]["server_id"] = "127.0.0.250"

    assert "device 7 of sim2 is missing" in corrupted(drop)
    assert "rank 0 is listed twice (sim1 device 0, sim4 device 0)" in corrupted(twice)
    assert "sim1 device 2: rank table says 10.20.2.99, the device has 10.20.2.11" in \
        corrupted(address)
    assert "server_id 127.0.0.250 is no host of the fleet" in corrupted(server)


def test_no_rank_table_without_every_address(clean: SimFleet, tmp_path: Path) -> None:
    clean.network_fault("sim4", "no-address", device=2)
    result = invoke("ranktable", "--inventory", str(clean.inventory), "-o",
                    str(tmp_path / "hccl.json"))
    assert result.code == 1
    assert "sim4 device 2 has no address" in result.err
    assert not (tmp_path / "hccl.json").exists()



def test_level_2_names_the_pair_that_cannot_reach_each_other(clean: SimFleet) -> None:
    clean.network_fault("sim2", "ping-drop", device=3, peer="sim4")
    code, document = doctor(clean, "--level", "2", "--only", "network.reachability")
    check = next(c for c in document["fleet_checks"] if c["id"] == "network.reachability")
    assert code == 1 and check["status"] == "fail", check
    assert "1 of 96 pair(s) do not reach each other" in check["message"]
    assert "sim4 device 3 -> sim2 device 3 (10.20.3.12): no reply" in check["message"]
    assert check["involved"] == ["sim4 device 3", "sim2 device 3"]
    cells = check["evidence"]["devices"]["3"]
    assert cells["sim4"]["sim2"] == "no reply" and cells["sim2"]["sim4"] == "ok"
