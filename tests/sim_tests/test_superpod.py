"""An A3 SuperPoD on 2 simulated hosts: each die's SDID read (npu-smi info -t spod-info,
placed by `npu-smi info -m`), written into a 1.2 rank table, checked against it, and a
server index set twice caught before HCCL refuses the job.

The hosts' spod-info and chip map are the fake npu-smi's (tests/sim/target/npu_smi.py), in
the formats of the real samples under tests/data/npu_smi_spod_info/ and npu_smi_map/.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli_invoke import invoke
from tests.sim.fixtures import FleetFactory, SimFleet
from tests.sim_tests.network_doctor import checks_by_host, doctor, ids_by_host

pytestmark = [pytest.mark.sim, pytest.mark.slow]


@pytest.fixture
def pod(sim_fleet_factory: FleetFactory) -> Iterator[SimFleet]:
    fleet = sim_fleet_factory(hosts=2, state="provisioned", chip="910_93", devices=4)
    yield fleet
    fleet.network_fault("sim2", "network-clear")


def test_a_superpod_table_carries_each_dies_sdid(pod: SimFleet, tmp_path: Path) -> None:
    table = tmp_path / "hccl.json"
    written = invoke("ranktable", "--inventory", str(pod.inventory), "-o", str(table))
    assert written.code == 0, written.out + written.err
    document = json.loads(table.read_text())
    assert document["version"] == "1.2"
    servers = document["server_list"]
    assert [len(s["device"]) for s in servers] == [8, 8]  # 4 NPUs x 2 dies each
    sdids = [d["super_device_id"] for s in servers for d in s["device"]]
    assert len(set(sdids)) == 16 and all(sdid.isdigit() for sdid in sdids)
    assert document["super_pod_list"] == [{"super_pod_id": "0", "server_list": [
        {"server_id": s["server_id"]} for s in servers]}]
    code, report = doctor(pod, "--ranktable", str(table))
    assert code == 0, checks_by_host(report)
    passed = ids_by_host(report, ("pass",))
    assert "network.superpod" in passed["sim1"] and "network.superpod" in passed["sim2"]
    assert {"network.super-device-ids", "network.ranktable"} <= set(passed["fleet"])
    # A stale SDID (one no die has) is refused, naming the die; one SDID twice is refused
    # as the table is read.
    servers[1]["device"][3]["super_device_id"] = "4096"
    table.write_text(json.dumps(document))
    code, report = doctor(pod, "--ranktable", str(table), "--only", "network.ranktable")
    assert code == 1
    message = checks_by_host(report)["fleet"][0]["message"]
    assert "sim2 device 3: rank table says super_device_id" in message, message


def test_a_server_index_set_twice_is_named(pod: SimFleet, tmp_path: Path) -> None:
    pod.network_fault("sim2", "server-index-clash", peer="sim1")
    code, report = doctor(pod)
    assert code == 1
    failed = checks_by_host(report)
    assert [c["id"] for c in failed["fleet"]] == ["network.super-device-ids"], failed
    check = failed["fleet"][0]
    assert "server index 0 in pod 0: sim1, sim2" in check["message"], check["message"]
    assert {"sim1 device 0", "sim2 device 0"} <= set(check["involved"])
    refused = invoke("ranktable", "--inventory", str(pod.inventory), "-o",
                     str(tmp_path / "hccl.json"))
    assert refused.code == 1 and "sim1 device 0 and sim2 device 0 have one SDID" in refused.err
    assert not (tmp_path / "hccl.json").exists()


def test_level_2_pings_each_die_over_hccs_and_names_the_pair_that_fails(pod: SimFleet) -> None:
    only = ("--level", "2")  # beside the category: RoCE pings run too
    code, report = doctor(pod, *only)
    assert code == 0, checks_by_host(report)
    check = next(c for c in report["fleet_checks"] if c["id"] == "network.hccs-reachability")
    assert check["status"] == "pass" and check["observed"] == "16 pair(s) answered", check
    pod.network_fault("sim2", "ping-drop", device=3, peer="sim1")
    code, report = doctor(pod, *only)
    assert code == 1
    # The fault drops sim1's pings on sim2's die 3: over RoCE and HCCS alike.
    failing = {c["id"]: c for c in checks_by_host(report)["fleet"]}
    assert set(failing) == {"network.reachability", "network.hccs-reachability"}, failing
    failed = failing["network.hccs-reachability"]
    assert "1 of 16 pair(s) do not reach each other: sim1 device 3 -> sim2 device 3 (SDID " \
        in failed["message"], failed["message"]
    assert failed["involved"] == ["sim1 device 3", "sim2 device 3"]
