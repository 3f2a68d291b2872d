"""Rank tables (hccl.json): written from the hosts' live device addresses, checked against them.

Layouts, as the public examples show them (tests/data/ranktable/ quotes them with sources):
- version "1.0" (Atlas 800T A2 / 910B, and 910): `server_count`, `server_list[]` of
  `{server_id, device: [{device_id, device_ip, rank_id}]}`, `status: "completed"`; every value
  a string.
- version "1.2" (A3, chip 910_93): each server also carries `host_ip`, each device
  `super_device_id`, and the table a `super_pod_list`. The super device ids come from
  `npu-smi info -t spod-info` (SDID), which the capture does not read yet: the table is
  written without them, and the CLI says so (SuperPoD jobs need them).

Ranks run host by host in the order given, devices ascending within a host.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ascend_env.core.errors import EXIT_NOT_RIGHT, AscendEnvError
from ascend_env.core.inputs import read_text
from ascend_env.facts.model import Facts

MAX_RANKTABLE_BYTES = 16 * 1024 * 1024
LAYOUTS = {"1.0", "1.2"}


class RanktableError(AscendEnvError):
    """A rank table that is not one (not JSON, a key twice, wrong types): exit 1."""

    exit_code = EXIT_NOT_RIGHT


@dataclass(frozen=True)
class RankDevice:
    device_id: str
    device_ip: str | None
    rank_id: str


@dataclass
class RankServer:
    server_id: str
    devices: list[RankDevice] = field(default_factory=list)
    host_ip: str | None = None


@dataclass
class RankTable:
    version: str
    servers: list[RankServer]
    source: str = ""


@dataclass(frozen=True)
class RankProblem:
    message: str
    where: str = ""  # "sim2 device 3", for the report's `involved`


@dataclass(frozen=True)
class HostDevices:
    """One host as a rank table lists it: its server id and (device id, address) pairs."""

    name: str
    server_id: str
    devices: list[tuple[int, str | None]]


# -- reading ----------------------------------------------------------------------------------

def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise RanktableError(f"key {key!r} appears twice in one object")
        seen[key] = value
    return seen


def _text(value: Any, where: str) -> str:
    # Every value is a string in the vendor's files; a number there is accepted by some
    # readers and refused by others, so it is refused here with its place.
    if not isinstance(value, str) or not value:
        raise RanktableError(f"{where} must be a non-empty string, not {value!r}")
    return value


def parse_ranktable(text: str, source: str = "rank table") -> RankTable:
    """A rank table from its JSON text; any shape problem names its key."""
    try:
        document = json.loads(text, object_pairs_hook=_no_duplicates)
    except RanktableError as exc:
        raise RanktableError(f"{source}: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise RanktableError(f"{source}: not JSON ({exc.msg} at line {exc.lineno} "
                             f"column {exc.colno})") from exc
    try:
        return _table(document, source)
    except RanktableError as exc:
        raise RanktableError(f"{source}: {exc}") from exc


def _table(document: Any, source: str) -> RankTable:
    if not isinstance(document, dict):
        raise RanktableError("the top level must be an object")
    version = _text(document.get("version"), "version")
    if version not in LAYOUTS:
        raise RanktableError(f"version {version!r}: known layouts are {', '.join(sorted(LAYOUTS))}")
    servers = document.get("server_list")
    if not isinstance(servers, list) or not servers:
        raise RanktableError("server_list must be a non-empty list")
    table = RankTable(version=version, servers=[], source=source)
    listed: dict[tuple[str, str], str] = {}
    for i, server in enumerate(servers):
        where = f"server_list[{i}]"
        if not isinstance(server, dict):
            raise RanktableError(f"{where} must be an object")
        entry = RankServer(server_id=_text(server.get("server_id"), f"{where}.server_id"),
                           host_ip=server.get("host_ip") if isinstance(server.get("host_ip"),
                                                                        str) else None)
        devices = server.get("device")
        if not isinstance(devices, list) or not devices:
            raise RanktableError(f"{where}.device must be a non-empty list")
        for j, device in enumerate(devices):
            at = f"{where}.device[{j}]"
            if not isinstance(device, dict):
                raise RanktableError(f"{at} must be an object")
            item = RankDevice(device_id=_text(device.get("device_id"), f"{at}.device_id"),
                              device_ip=_text(device.get("device_ip"), f"{at}.device_ip"),
                              rank_id=_text(device.get("rank_id"), f"{at}.rank_id"))
            key = (entry.server_id, item.device_id)
            if key in listed:
                raise RanktableError(f"{at}: device {item.device_id} of server "
                                     f"{entry.server_id} is listed twice (also {listed[key]})")
            listed[key] = at
            entry.devices.append(item)
        table.servers.append(entry)
    count = document.get("server_count")
    if count is not None and count != str(len(table.servers)):
        raise RanktableError(f"server_count is {count!r} but server_list has "
                             f"{len(table.servers)} server(s)")
    return table


def load_ranktable(path: Path) -> RankTable:
    """A rank table file: bounded, regular files only (an unreadable one exits 2)."""
    return parse_ranktable(read_text(path, what="rank table", limit=MAX_RANKTABLE_BYTES),
                           str(path))


# -- writing ----------------------------------------------------------------------------------

def build_ranktable(hosts: list[HostDevices], chip: str | None) -> dict[str, Any]:
    """The rank table of these hosts: 1.0, or 1.2 for A3 (910_93). Every device needs an
    address (the caller refuses hosts without)."""
    a3 = chip == "910_93"
    rank = 0
    servers = []
    for host in hosts:
        devices = []
        for device, address in sorted(host.devices):
            if address is None:
                raise RanktableError(f"{host.name} device {device} has no address: set it "
                                     "(doctor --fix with a network plan) before writing a "
                                     "rank table")
            devices.append({"device_id": str(device), "device_ip": address,
                            "rank_id": str(rank)})
            rank += 1
        server: dict[str, Any] = {"server_id": host.server_id, "device": devices}
        if a3:
            server["host_ip"] = host.server_id
        else:
            server["host_nic_ip"] = "reserve"
        servers.append(server)
    table: dict[str, Any] = {"version": "1.2" if a3 else "1.0",
                             "server_count": str(len(servers)), "server_list": servers,
                             "status": "completed"}
    return table


def host_devices(name: str, server_id: str, facts: Facts) -> HostDevices:
    return HostDevices(name=name, server_id=server_id, devices=[
        (device, port.address) for device, port in sorted(facts.network.devices.items())])


# -- checking against the hosts ---------------------------------------------------------------

def check_ranktable(table: RankTable,
                    fleet: Mapping[str, tuple[str | None, Facts]]) -> list[RankProblem]:
    """What in `table` disagrees with the hosts (name -> (address reached at, facts))."""
    problems: list[RankProblem] = []
    ranks: dict[int, list[str]] = {}
    by_address = {address: name for name, (address, _) in fleet.items() if address}
    matched: dict[str, RankServer] = {}
    for index, server in enumerate(table.servers):
        name = by_address.get(server.server_id) or (
            server.server_id if server.server_id in fleet else None)
        if name is not None and by_address and server.server_id not in by_address:
            # Named by host name where HCCL wants the address it reaches the host at.
            problems.append(RankProblem(f"server_id {server.server_id} is not an address: "
                                        f"{name} is reached at {fleet[name][0]}", name))
        if name is None:
            known = ", ".join(f"{n} at {a}" for n, (a, _) in fleet.items() if a) or \
                ", ".join(fleet)
            problems.append(RankProblem(f"server_id {server.server_id} is no host of the "
                                        f"fleet ({known})", f"server_list[{index}]"))
        else:
            matched[name] = server
        for device in server.devices:
            where = f"{name or server.server_id} device {device.device_id}"
            try:
                ranks.setdefault(int(device.rank_id), []).append(where)
            except ValueError:
                problems.append(RankProblem(f"{where}: rank_id {device.rank_id!r} is not a "
                                            "number", where))
    for rank, places in sorted(ranks.items()):
        if len(places) > 1:
            problems.append(RankProblem(f"rank {rank} is listed twice ({', '.join(places)})",
                                        places[0]))
    expected = set(range(len([d for s in table.servers for d in s.devices])))
    gaps = sorted(expected - set(ranks))
    if gaps:
        problems.append(RankProblem(f"ranks are not 0..{len(expected) - 1}: "
                                    f"{', '.join(map(str, gaps[:8]))} missing"))
    for name, (_, facts) in fleet.items():
        found = matched.get(name)
        live = {d: p.address for d, p in facts.network.devices.items()}
        if found is None:
            problems.append(RankProblem(f"host {name} is not in the rank table", name))
            continue
        listed = {}
        for device in found.devices:
            try:
                listed[int(device.device_id)] = device
            except ValueError:
                problems.append(RankProblem(f"{name}: device_id {device.device_id!r} is not "
                                            "a number", name))
        for device_id in sorted(set(live) - set(listed)):
            problems.append(RankProblem(f"device {device_id} of {name} is missing",
                                        f"{name} device {device_id}"))
        for device_id, device in sorted(listed.items()):
            where = f"{name} device {device_id}"
            if device_id not in live:
                problems.append(RankProblem(f"{where}: the host has no such device", where))
            elif device.device_ip != live[device_id]:
                problems.append(RankProblem(
                    f"{where}: rank table says {device.device_ip}, the device has "
                    f"{live[device_id] or 'no address'}", where))
    return problems
