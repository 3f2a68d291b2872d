"""The all-reduce across hosts: one coordinator per host, every device a rank, one world.

`ascend-env smoke --framework hccl --inventory F` with several hosts ships the collective
workload (remote/hccl_workload.py) to every host and starts each host's coordinator with the
first host as rendezvous; each coordinator starts one worker per device. Every rank's
per-size results come back; here they are merged: correct on every rank, the slowest rank's
time, algbw = bytes / time and busbw = algbw x 2(n-1)/n over the whole world (nccl-tests'
convention). A host that fails does not hang the run: every coordinator and worker is bounded
by --timeout, and the host whose rank failed first is named (`failing_hosts`). `--pairwise`
runs every host pair on its own, disjoint pairs at once (round robin), and names the slowest
pair and every pair that fails.
"""

from __future__ import annotations

import random
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ascend_env.core.errors import AscendEnvError
from ascend_env.remote.hccl_workload import merge_results
from ascend_env.smoke.runner import HostTarget, SmokeRequest, last_evidence, workload_path
from ascend_env.targets.collect import resolve_hosts
from ascend_env.targets.inventory import read_inventory

SCHEMA = "ascend-env/smoke/collective/v1"
GRACE_S = 30.0
# Rendezvous ports are picked at random in this range (no way to ask a remote host for a
# free one before its coordinator starts). The range ends below Linux's default ephemeral range
# (ip_local_port_range, 32768-60999), where any outgoing connection of the coordinator's host
# may hold the port already.
PORTS = (20000, 32767)
# A drawn port that a service of the first host already listens on fails the run at once
# (torch's store: "failed to listen ... EADDRINUSE"): the run is tried again on a port drawn
# anew, this many times in all, and the ports refused are reported. A port the caller chose is
# tried once.
PORT_TRIES = 3
PORT_TAKEN = re.compile(r"EADDRINUSE|[Aa]ddress already in use|failed to listen")


@dataclass(frozen=True)
class FleetHost:
    """A host of the run: inventory name, the address peers reach it at, its transport."""

    name: str
    address: str
    host: Any


def hosts_of(inventory: Path, limit: str | None) -> list[FleetHost]:
    """The inventory's hosts with their ansible_host addresses."""

    variables = read_inventory(inventory, limit)
    found = [FleetHost(name, str(variables.get(name, {}).get("ansible_host") or name), host)
             for name, host in resolve_hosts(inventory=inventory, limit=limit)]
    where: dict[str, str] = {}
    for h in found:
        if h.address in where:
            raise AscendEnvError(f"{inventory}: {where[h.address]} and {h.name} resolve to one "
                                 f"address ({h.address}): a collective needs each host once")
        where[h.address] = h.name
    return found


@dataclass(frozen=True)
class World:
    """Where a run meets: the rendezvous, the hosts in rank order, ranks on each."""

    master: str
    members: list[FleetHost]
    nprocs: int

    def coordinator(self, request: SmokeRequest, script: str, index: int) -> list[str]:
        """Host `index`'s coordinator command line."""
        kind = "npu" if request.device == "all" else request.device
        return [request.python, script, "--device", kind, "--nprocs", str(self.nprocs),
                "--steps", str(request.steps), "--timeout", f"{request.timeout_s:g}",
                "--master", self.master, "--node-rank", str(index),
                "--nnodes", str(len(self.members)), "--bind", self.members[index].address,
                *request.extra]


def draw_port() -> int:
    return random.randint(*PORTS)  # a port number, not a secret


def run_world(request: SmokeRequest, members: list[FleetHost], nprocs: int,
              port: int | None = None) -> dict[str, Any]:
    """One all-reduce over every device of `members`; the merged document. Where the first
    host already holds a drawn rendezvous port, the run is tried again on another
    (`ports_taken` lists each refusal)."""
    taken: list[dict[str, str]] = []
    for _ in range(1 if port else PORT_TRIES):
        document = _run_once(request, members, nprocs, port or draw_port())
        first = document["first_failure"] or ""  # `host: ...` or `host rank N ...`
        on_first_host = first.startswith((f"{members[0].name}:", f"{members[0].name} "))
        if document["status"] == "ok" or not (on_first_host and PORT_TAKEN.search(first)):
            break
        taken.append({"master": document["master"], "reason": first})
    document["ports_taken"] = taken
    return document


def _run_once(request: SmokeRequest, members: list[FleetHost], nprocs: int,
              port: int) -> dict[str, Any]:
    world = World(f"{members[0].address}:{port}", members, nprocs)
    targets = [HostTarget(m.name, host=m.host) for m in members]

    def one(index: int) -> dict[str, Any]:
        target, member = targets[index], members[index]
        try:
            script = target.install(workload_path("hccl"))
            done = target.run(world.coordinator(request, script, index),
                              request.timeout_s + GRACE_S)
        except AscendEnvError as exc:
            return {"host": member.name, "status": "error", "reason": str(exc)}
        evidence = last_evidence(done.stdout)
        if evidence is None:
            tail = (done.stderr or done.stdout).strip()[-800:]
            return {"host": member.name, "status": "error",
                    "reason": f"no evidence (exit {done.rc}): {tail}"}
        evidence["host"] = member.name
        return evidence

    with ThreadPoolExecutor(max_workers=len(members)) as pool:
        documents = list(pool.map(one, range(len(members))))
    return merge_hosts(documents, nprocs * len(members), request.min_busbw_gbps, world.master)


def merge_hosts(documents: list[dict[str, Any]], world: int, floor: float | None,
                master: str) -> dict[str, Any]:
    """Every host's coordinator document as one fleet result."""
    ranks = [dict(r, host=d["host"]) for d in documents for r in d.get("ranks") or []]
    results = merge_results(ranks, world)
    problems = [f"{d['host']}: {d.get('reason') or d.get('status')}" for d in documents
                if d.get("status") != "ok"]
    problems += [f"{r['bytes']} bytes: {r['wrong_elements']} wrong element(s), "
                 f"{r['ranks_reporting']} of {world} rank(s) reporting"
                 for r in results if not r["correct"]]
    largest = results[-1] if results else None
    if not problems and floor is not None and largest is not None and \
            largest["busbw_gbps"] < floor:
        problems.append(f"busbw {largest['busbw_gbps']:.3f} GB/s at {largest['bytes']} bytes, "
                        f"below the spec's floor {floor:g} GB/s")
    backend = next((d.get("backend") for d in documents if d.get("backend")), None)
    failing, first = at_fault(documents)
    return {"schema": SCHEMA, "hosts": [d["host"] for d in documents], "master": master,
            "world_size": world, "backend": backend, "results": results,
            "busbw_floor_gbps": floor,
            "status": "failed" if problems else "ok", "problems": problems,
            "failing_hosts": failing, "first_failure": first,
            "per_host": {d["host"]: {"status": d.get("status"), "reason": d.get("reason")}
                         for d in documents}}


def at_fault(documents: list[dict[str, Any]]) -> tuple[list[str], str | None]:
    """The hosts to blame for a failed run, and the first failure seen.

    One host that fails leaves every other rank waiting in the rendezvous or a collective
    until the time limit, so every host reports a failure. Blamed are the hosts that could
    not run their part at all; else the host of the rank that failed first for a reason of
    its own (not the time limit); else, when every rank only reached the time limit, every
    host that failed (nothing tells them apart)."""
    broken = [d["host"] for d in documents if d.get("status") in ("error", "unavailable")]
    if broken:
        return broken, next(f"{d['host']}: {d.get('reason')}" for d in documents
                            if d["host"] == broken[0])
    failed = [dict(r, host=d["host"]) for d in documents for r in d.get("ranks") or []
              if r.get("status") != "ok"]
    own = sorted((r for r in failed if r.get("status") != "timeout"),
                 key=lambda r: float(r.get("duration_s") or 1e12))
    if own:
        first = own[0]
        after = f" after {first['duration_s']:g} s" if first.get("duration_s") else ""
        return [first["host"]], (f"{first['host']} rank {first.get('rank')}{after}: "
                                 f"{first.get('reason') or first.get('status')}")
    hosts = [d["host"] for d in documents if d.get("status") != "ok"]
    return hosts, (f"{failed[0]['host']} rank {failed[0].get('rank')}: "
                   f"{failed[0].get('reason')}" if failed else None)


def round_robin(count: int) -> list[list[tuple[int, int]]]:
    """Every pair of `count` hosts once, in rounds of disjoint pairs (the circle method)."""
    order = list(range(count)) + ([None] if count % 2 else [])
    rounds = []
    for _ in range(len(order) - 1):
        half = len(order) // 2
        pairs = [(a, b) for a, b in zip(order[:half], reversed(order[half:]), strict=True)
                 if a is not None and b is not None]
        if pairs:  # one host alone plays no round
            rounds.append([(min(a, b), max(a, b)) for a, b in pairs])
        order = [order[0], order[-1], *order[1:-1]]
    return rounds


def run_pairwise(request: SmokeRequest, members: list[FleetHost], nprocs: int
                 ) -> dict[str, Any]:
    """Each host pair's own all-reduce; the slowest and the failing pairs named."""
    pairs: list[dict[str, Any]] = []
    for pairs_of_round in round_robin(len(members)):
        with ThreadPoolExecutor(max_workers=max(1, len(pairs_of_round))) as pool:
            runs = pool.map(lambda p: (p, run_world(request, [members[p[0]], members[p[1]]],
                                                    nprocs)), pairs_of_round)
            for (a, b), document in runs:
                largest = document["results"][-1] if document["results"] else None
                pairs.append({"hosts": [members[a].name, members[b].name],
                              "status": document["status"], "problems": document["problems"],
                              "busbw_gbps": largest["busbw_gbps"] if largest else None,
                              "bytes": largest["bytes"] if largest else None})
    failing = [p for p in pairs if p["status"] != "ok"]
    measured = [p for p in pairs if p["status"] == "ok" and p["busbw_gbps"] is not None]
    slowest = min(measured, key=lambda p: p["busbw_gbps"]) if measured else None
    return {"schema": SCHEMA, "mode": "pairwise", "hosts": [m.name for m in members],
            "pairs": pairs, "slowest": slowest, "failing": failing,
            "status": "failed" if failing else "ok",
            "problems": [f"{' <-> '.join(p['hosts'])}: {'; '.join(p['problems'])}"
                         for p in failing]}
