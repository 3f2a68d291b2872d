"""Level 2 of the NPU network: every device pings the same device index on every other host.

Over RoCE (hccn_tool -ping to the peer's address, pkt 1) and, on A3 SuperPoD hosts, over HCCS
to the peer die in the same super pod (hccn_tool -hccs_ping by its SDID, which the tool takes
as `sdid S` beside `address A`: Huawei's open-sourced hccn_tool, g_ping_parse in
https://github.com/hicann/driver/blob/ef377e950a32b1641c108c59481e39e9643b7d63/src/custom/network/hccn/ascend910B/hccn_product_ext/tool_cmd.c).
One ping per ordered pair, all of a host's pings in one round trip
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
    """One ordered pair and what came of it; answered None = the answer was not understood.
    `address` is the peer's RoCE address, or over HCCS (`via` "hccs") its die's SDID."""

    source: str
    device: int
    peer: str
    address: str
    answered: bool | None = None
    detail: str = ""
    via: str = "roce"


def plan_pings(fleet: list[Target]) -> dict[str, list[Ping]]:
    """Device i of each host to device i of every other host that has an address there."""
    addresses = {t.name: {d: p.address for d, p in t.facts.network.devices.items() if p.address}
                 for t in fleet}
    return {t.name: [Ping(t.name, device, peer, address)
                     for device in sorted(addresses[t.name])
                     for peer, theirs in addresses.items()
                     if peer != t.name and (address := theirs.get(device)) is not None]
            for t in fleet}


def plan_hccs_pings(fleet: list[Target]) -> dict[str, list[Ping]]:
    """Device i of each A3 host to device i of every other host in its super pod, by SDID."""
    dies = {t.name: {d: (p.super_pod_id, p.super_device_id)
                     for d, p in t.facts.network.devices.items() if p.super_device_id}
            for t in fleet}
    return {t.name: [Ping(t.name, device, peer, theirs[device][1], via="hccs")
                     for device, (pod, _) in sorted(dies[t.name].items())
                     for peer, theirs in dies.items()
                     if peer != t.name and device in theirs and theirs[device][0] == pod]
            for t in fleet}


def command(tool: str, pings: list[Ping]) -> str:
    """The shell line that runs hccn_ping.py on a host, its source as python3 -c's argument."""
    args = ["--hccn-tool", tool, *[a for p in pings for a in (
        "--hccs" if p.via == "hccs" else "--pair", f"{p.device}:{p.address}")]]
    return f"exec python3 -c {shlex.quote(remote_source('hccn_ping'))} {shlex.join(args)}"


def read_answers(pings: list[Ping], stdout: str) -> list[Ping]:
    """hccn_ping.py's document onto the planned pairs; a pair it does not report is unknown."""
    try:
        results = json.loads(stdout)["results"]
        by_pair = {(int(r["device"]), str(r.get("via", "roce")),
                    str(r["sdid"] if r.get("via") == "hccs" else r["address"])): r
                   for r in results}
    except (ValueError, KeyError, TypeError) as exc:
        return [Ping(**{**p.__dict__, "detail": f"unreadable answer: {exc}"}) for p in pings]
    out = []
    for p in pings:
        found: dict[str, Any] | None = by_pair.get((p.device, p.via, p.address))
        if found is None:
            out.append(Ping(**{**p.__dict__, "detail": "not reported"}))
            continue
        lines = str(found.get("stdout") or "").strip().splitlines()
        # The summary line (an HCCS ping prints its times after it), else the last one.
        summary = [line for line in lines if "packets transmitted" in line] or lines[-1:]
        detail = "no reply" if found.get("answered") is False else "".join(summary[:1])
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


def ping_matrix(fleet: list[Target], via: str = "roce") -> list[Ping]:
    """Every planned ping's result (over RoCE, or HCCS), the hosts in parallel."""
    plan = plan_hccs_pings(fleet) if via == "hccs" else plan_pings(fleet)
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
    via = {p.via for p in pings}
    return {"schema": "ascend-env/ping-matrix/v1", "devices": out,
            **({"via": via.pop()} if len(via) == 1 else {})}
