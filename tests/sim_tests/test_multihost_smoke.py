"""The all-reduce across simulated hosts, for real: CPU torch (gloo) over the hosts' addresses.

Torch comes from one cached layer bind-mounted read-only into every host
(tests/sim/torch_layer.py); each host runs its own coordinator and workers, bound to its own
127.0.0.N address. Hosts that cannot reach each other are made with iptables: sim3's address
takes no inbound connection but ssh. (A rule for one pair of addresses cannot be had here:
the simulated hosts share this machine's network stack, so their outgoing connections all
leave from 127.0.0.1.) sim3 can still connect out, so a pair runs where sim3 only dials its
peer, and fails where the peer must reach sim3: the pair sim3 <-> sim4, whose rendezvous is
on sim3 (pairs run lower host first).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from tests.cli_invoke import invoke
from tests.sim import torch_layer
from tests.sim.fixtures import FleetFactory, SimFleet

pytestmark = [pytest.mark.sim, pytest.mark.slow]


@pytest.fixture(scope="module")
def four(sim_fleet_factory: FleetFactory) -> SimFleet:
    fleet = sim_fleet_factory(hosts=4, state="provisioned")
    layer = torch_layer.ensure_layer()
    for host in fleet.hosts:
        torch_layer.attach(fleet.root(host), layer)
    return fleet


def smoke(fleet: SimFleet, *extra: str) -> tuple[int, dict[str, Any]]:
    result = invoke("smoke", "--framework", "hccl", "--inventory", str(fleet.inventory),
                    "--device", "cpu", "--python", "python3-torch", "--steps", "3",
                    "--timeout", "90", "--json", *extra)
    assert "Traceback" not in result.out + result.err, result.err
    assert result.out.startswith("{"), (result.code, result.out[-1500:], result.err[-1500:])
    return result.code, json.loads(result.out)


@pytest.mark.parametrize("limit", ["sim1,sim2", "all"])
def test_the_all_reduce_across_hosts_is_correct_and_reports_busbw(
        four: SimFleet, limit: str) -> None:
    code, document = smoke(four, "--limit", limit)
    hosts = 2 if limit != "all" else 4
    assert code == 0, document["problems"]
    assert document["schema"] == "ascend-env/smoke/collective/v1"
    assert document["world_size"] == 2 * hosts and document["backend"] == "gloo"
    assert len(document["hosts"]) == hosts
    assert document["master"].startswith(four.fleet.host("sim1").address + ":")
    for row in document["results"]:
        assert row["correct"] and row["ranks_reporting"] == 2 * hosts
        assert row["busbw_gbps"] > 0
        n = 2 * hosts
        assert row["busbw_gbps"] == pytest.approx(row["algbw_gbps"] * 2 * (n - 1) / n)


@pytest.fixture
def cut(four: SimFleet) -> Iterator[str]:
    """sim3 is reached by ssh, by nothing else (its collective's ports are dropped)."""
    rule = ["-d", four.fleet.host("sim3").address, "-p", "tcp", "!", "--dport",
            str(four.fleet.host("sim3").port), "-j", "DROP"]
    subprocess.run(["iptables", "-I", "INPUT", *rule], check=True)
    try:
        yield "sim3"
    finally:
        subprocess.run(["iptables", "-D", "INPUT", *rule], check=False)


def test_pairwise_names_the_pair_that_cannot_reach_each_other(
        four: SimFleet, cut: str) -> None:
    del cut
    code, document = smoke(four, "--pairwise", "--timeout", "30")
    assert code == 1
    assert len(document["pairs"]) == 6
    assert [p["hosts"] for p in document["failing"]] == [["sim3", "sim4"]]
    assert document["problems"][0].startswith("sim3 <-> sim4: ")
    assert document["slowest"]["hosts"] != ["sim3", "sim4"]
    assert all(p["status"] == "ok" and p["busbw_gbps"] > 0
               for p in document["pairs"] if p["hosts"] != ["sim3", "sim4"])
