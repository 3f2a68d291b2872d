"""The all-reduce across simulated hosts, for real: CPU torch (gloo) over the hosts' addresses.

Torch comes from one cached layer bind-mounted read-only into every host
(tests/sim/torch_layer.py); each host runs its own coordinator and workers, bound to its own
127.0.0.N address. Two hosts that cannot reach each other: the simulated hosts share this
machine's network stack (their connections all leave from 127.0.0.1), so a rule on addresses
alone cannot tell them apart. Their processes can be: sim3's and sim4's sshd, with every
session and command under them, are moved into cgroups of their own, and iptables refuses
TCP from sim3's cgroup to sim4's address and from sim4's to sim3's (`-m cgroup --path`).
Every other pair, and each host with itself, still connects.
"""

from __future__ import annotations

import json
import random
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ascend_env.smoke import fleet_collective
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


def test_a_rendezvous_port_the_first_host_already_holds_is_drawn_again(
        four: SimFleet, monkeypatch: pytest.MonkeyPatch) -> None:
    # A service of sim1 listens on the first port drawn: torch's store cannot listen there,
    # and the run is tried again on a port drawn anew.
    with socket.socket() as held:
        held.bind(("", 0))
        held.listen()
        taken = held.getsockname()[1]
        draws = iter([taken])
        monkeypatch.setattr(fleet_collective, "draw_port",
                            lambda: next(draws, None) or random.randint(*fleet_collective.PORTS))
        result = invoke("smoke", "--framework", "hccl", "--inventory", str(four.inventory),
                        "--limit", "sim1,sim2", "--device", "cpu", "--python", "python3-torch",
                        "--steps", "3", "--timeout", "45", "--json")
    document = json.loads(result.out)
    assert result.code == 0, document["problems"]
    address = four.fleet.host("sim1").address
    (refused,) = document["ports_taken"]
    assert refused["master"] == f"{address}:{taken}"
    assert refused["reason"].startswith("sim1") and "EADDRINUSE" in refused["reason"]
    assert document["master"] != refused["master"]


CGROUP2 = Path("/sys/fs/cgroup/unified")


def tree(pid: int) -> list[int]:
    """`pid` and every process below it (sshd, its sessions, what they run)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended meanwhile
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        found.append(todo.pop())
        todo.extend(children.get(found[-1], []))
    return found


def move(pids: list[int], group: Path) -> None:
    for pid in pids:
        try:
            (group / "cgroup.procs").write_text(f"{pid}\n")
        except ProcessLookupError:
            continue  # ended meanwhile


@pytest.fixture
def cut(four: SimFleet) -> Iterator[tuple[str, str]]:
    """sim3 and sim4 cannot open TCP connections to each other; the rest of the fleet can."""
    if not (CGROUP2 / "cgroup.procs").exists():
        pytest.skip(f"no cgroup v2 hierarchy at {CGROUP2} for iptables' cgroup match")
    a, b = four.fleet.host("sim3"), four.fleet.host("sim4")
    groups = {h.name: CGROUP2 / f"ascend-smoke-cut-{four.fleet.name}-{h.name}" for h in (a, b)}
    rules = [["OUTPUT", "-m", "cgroup", "--path", groups[src.name].name, "-d", dst.address,
              "-p", "tcp", "-j", "REJECT", "--reject-with", "tcp-reset"]
             for src, dst in ((a, b), (b, a))]
    added: list[list[str]] = []
    try:
        for h in (a, b):
            groups[h.name].mkdir(exist_ok=True)
            assert h.pid > 0, f"{h.name}: no sshd pid recorded"
            move(tree(h.pid), groups[h.name])
        for rule in rules:
            done = subprocess.run(["iptables", "-I", *rule], capture_output=True, text=True,
                                  check=False)
            if done.returncode != 0:
                pytest.skip(f"iptables has no cgroup match here: {done.stderr.strip()}")
            added.append(rule)
        yield "sim3", "sim4"
    finally:
        for rule in added:
            subprocess.run(["iptables", "-D", *rule], check=False)
        for group in groups.values():
            if group.exists():
                move([int(p) for p in (group / "cgroup.procs").read_text().split()], CGROUP2)
                group.rmdir()


def test_pairwise_names_the_pair_that_cannot_reach_each_other(
        four: SimFleet, cut: tuple[str, str]) -> None:
    code, document = smoke(four, "--pairwise", "--timeout", "90")
    assert code == 1
    assert document["mode"] == "pairwise" and len(document["pairs"]) == 6
    assert [p["hosts"] for p in document["failing"]] == [list(cut)]
    assert document["problems"][0].startswith("sim3 <-> sim4: ")
    assert document["slowest"]["hosts"] != list(cut)
    assert all(p["status"] == "ok" and p["busbw_gbps"] > 0
               for p in document["pairs"] if p["hosts"] != list(cut))
