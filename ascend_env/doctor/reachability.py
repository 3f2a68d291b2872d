"""Level 2 of the NPU network: every device pings the same device index on every other host.

One ping per ordered pair (hccn_tool -ping pkt 1), all of a host's pings in one round trip
(remote/hccn_ping.py runs them in parallel there), every host at once: a fleet's matrix takes
about as long as one host's slowest ping, not hosts x devices pings.
"""

from __future__ import annotations

import json
import shlex
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from ascend_env.core.resources import remote_source
from ascend_env.doctor.suite import Target

DEFAULT_TOOL = "/usr/local/Ascend/driver/tools/hccn_tool"


@dataclass(frozen=True)
class Ping:
    """One ordered pair and what came of it; answered None = the answer was not understood."""

    source: str
    device: int
    peer: str
    address: str
    answered: bool | None = None
    detail: str = ""


def plan_pings(fleet: list[Target]) -> dict[str, list[Ping]]:
    """Device i of each host to device i of every other host that has an address there."""
    addresses = {t.name: {d: p.address for d, p in t.facts.network.devices.items() if p.address}
                 for t in fleet}
    return {t.name: [Ping(t.name, device, peer, address)
                     for device in sorted(addresses[t.name])
                     for peer, theirs in addresses.items()
                     if peer != t.name and (address := theirs.get(device)) is not None]
            for t in fleet}


def command(tool: str, pings: list[Ping]) -> str:
    """The shell line that runs hccn_ping.py on a host, its source as python3 -c's argument."""
    args = ["--hccn-tool", tool, *[a for p in pings for a in ("--pair", f"{p.device}:{p.address}")]]
    return f"exec python3 -c {shlex.quote(remote_source('hccn_ping'))} {shlex.join(args)}"


def read_answers(pings: list[Ping], stdout: str) -> list[Ping]:
    """hccn_ping.py's document onto the planned pairs; a pair it does not report is unknown."""
    try:
        results = json.loads(stdout)["results"]
        by_pair = {(int(r["device"]), str(r["address"])): r for r in results}
    except (ValueError, KeyError, TypeError) as exc:
        return [Ping(**{**p.__dict__, "detail": f"unreadable answer: {exc}"}) for p in pings]
    out = []
    for p in pings:
        found: dict[str, Any] | None = by_pair.get((p.device, p.address))
        if found is None:
            out.append(Ping(**{**p.__dict__, "detail": "not reported"}))
            continue
        lines = str(found.get("stdout") or "").strip().splitlines()
        detail = "no reply" if found.get("answered") is False else (lines[-1] if lines else "")
        out.append(Ping(**{**p.__dict__, "answered": found.get("answered"), "detail": detail}))
    return out


def run_host(target: Target, pings: list[Ping]) -> list[Ping]:
    if not pings:
        return []
    tool = target.facts.network.hccn_tool_path or DEFAULT_TOOL
    try:
        done = target.host.run(command(tool, pings))
    except Exception as exc:  # any transport's failure: testinfra has no base class
        return [Ping(**{**p.__dict__, "detail": f"host unreachable: {exc}"[:300]})
                for p in pings]
    if int(done.rc) != 0:
        reason = (str(done.stderr) or str(done.stdout)).strip().splitlines()[-1:] or ["?"]
        return [Ping(**{**p.__dict__, "detail": f"ping program failed: {reason[0][:200]}"})
                for p in pings]
    return read_answers(pings, str(done.stdout))


def ping_matrix(fleet: list[Target]) -> list[Ping]:
    """Every planned ping's result, the hosts in parallel."""
    plan = plan_pings(fleet)
    live = [t for t in fleet if t.host is not None]
    with ThreadPoolExecutor(max_workers=max(1, min(32, len(live)))) as pool:
        done = pool.map(lambda t: run_host(t, plan[t.name]), live)
        return [p for results in done for p in results]


def matrix_document(pings: list[Ping]) -> dict[str, Any]:
    """Per device index, host x host: "ok", "no reply" or "unknown" (the report's evidence)."""
    out: dict[str, dict[str, dict[str, str]]] = {}
    for p in pings:
        cell = "ok" if p.answered else ("no reply" if p.answered is False else "unknown")
        out.setdefault(str(p.device), {}).setdefault(p.source, {})[p.peer] = cell
    return {"schema": "ascend-env/ping-matrix/v1", "devices": out}
