"""Reading a rank table: bounded, every shape problem named by file and key.

The rules are the vendor's ("Rank Table Configuration Resource Information", quoted in
tests/data/ranktable/*.source): every value a string; server_id unique, at most 64
characters; device_id and rank_id whole numbers; device_ip an IPv4 or IPv6 address (optional
for one server, or inside one SuperPoD); host_ip IPv4; server_count required by layout 1.0;
a super_pod_list whose servers are server_list's, each in one SuperPoD, each SuperPoD's
servers listed together ("cross-configuration ... is not supported").
"""

from __future__ import annotations

import ipaddress
import json
import re
from pathlib import Path
from typing import Any

from ascend_env.cluster.ranktable_model import (
    LAYOUT_SERVER,
    LAYOUTS,
    RankDevice,
    RankServer,
    RankTable,
    RanktableError,
    SuperPod,
)
from ascend_env.core.inputs import read_text

# Real tables are a few KB per server; a 1000-server table is well under a MB.
MAX_RANKTABLE_BYTES = 16 * 1024 * 1024
MAX_SERVER_ID = 64  # the vendor's limit on server_id
_WHOLE = re.compile(r"0|[1-9][0-9]{0,8}")
# Keys that name the object they sit in, for a duplicate key's message.
_NAMING_KEYS = ("server_id", "device_id", "super_pod_id")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # json keeps the last of two equal keys; HCCL's reader may keep either, so neither is
    # guessed: the table is refused, naming the object by what identifies it.
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            names = [f"{k} {v!r}" for k, v in pairs if k in _NAMING_KEYS and isinstance(v, str)]
            inside = f" (in the object with {names[0]})" if names else ""
            raise RanktableError(f"key {key!r} appears twice in one object{inside}")
        seen[key] = value
    return seen


def _text(value: Any, where: str) -> str:
    # Every value is a string in the vendor's files; a number there is accepted by some
    # readers and refused by others, so it is refused here with its place.
    if not isinstance(value, str) or not value:
        raise RanktableError(f"{where} must be a non-empty string, not {value!r}")
    return value


def _whole(value: Any, where: str) -> str:
    text = _text(value, where)
    if not _WHOLE.fullmatch(text):
        raise RanktableError(f"{where} must be a whole number in a string (\"0\", \"1\", ...), "
                             f"not {text!r}")
    return text


def _address(value: Any, where: str, *, v4_only: bool = False) -> str | None:
    if value is None:
        return None
    text = _text(value, where)
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        raise RanktableError(f"{where} {text!r} is not an IP address") from None
    if v4_only and address.version != 4:
        raise RanktableError(f"{where} {text!r} must be an IPv4 address")
    return text


def parse_ranktable(text: str, source: str = "rank table") -> RankTable:
    """A rank table from its JSON text; any shape problem names its key (RanktableError)."""
    try:
        document = json.loads(text, object_pairs_hook=_no_duplicates)
    except RanktableError as exc:
        raise RanktableError(f"{source}: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise RanktableError(f"{source}: not JSON ({exc.msg} at line {exc.lineno} "
                             f"column {exc.colno})") from exc
    except RecursionError:
        raise RanktableError(f"{source}: not a rank table (nested too deeply)") from None
    try:
        return _table(document, source)
    except RanktableError as exc:
        raise RanktableError(f"{source}: {exc}") from exc


def load_ranktable(path: Path | str) -> RankTable:
    """A rank table file: bounded, regular files only (InputError, exit 2, when it cannot be
    read; RanktableError, exit 1, when it is not a rank table)."""
    return parse_ranktable(read_text(path, what="rank table", limit=MAX_RANKTABLE_BYTES),
                           str(path))


def _table(document: Any, source: str) -> RankTable:
    if not isinstance(document, dict):
        raise RanktableError("the top level must be an object")
    version = _text(document.get("version"), "version")
    if version not in LAYOUTS:
        raise RanktableError(f"version {version!r}: known layouts are {', '.join(LAYOUTS)}")
    status = document.get("status")
    table = RankTable(version=version, servers=[], source=source,
                      status=None if status is None else _text(status, "status"))
    servers = document.get("server_list")
    if not isinstance(servers, list) or not servers:
        raise RanktableError("server_list must be a non-empty list")
    first_at: dict[str, str] = {}
    for i, server in enumerate(servers):
        entry = _server(server, f"server_list[{i}]")
        if entry.server_id in first_at:
            raise RanktableError(f"server_list[{i}].server_id {entry.server_id!r} is listed "
                                 f"twice (also {first_at[entry.server_id]})")
        first_at[entry.server_id] = f"server_list[{i}]"
        table.servers.append(entry)
    count = document.get("server_count")
    if count is None and version == LAYOUT_SERVER:
        raise RanktableError("server_count is missing (layout 1.0 requires it)")
    if count is not None and _text(count, "server_count") != str(len(table.servers)):
        raise RanktableError(f"server_count is {count!r} but server_list has "
                             f"{len(table.servers)} server(s)")
    pods = document.get("super_pod_list")
    if pods is not None:
        table.super_pods = _super_pods(pods, table, first_at)
    return table


def _server(server: Any, where: str) -> RankServer:
    if not isinstance(server, dict):
        raise RanktableError(f"{where} must be an object")
    server_id = _text(server.get("server_id"), f"{where}.server_id")
    if len(server_id) > MAX_SERVER_ID:
        raise RanktableError(f"{where}.server_id is {len(server_id)} characters, more than "
                             f"the {MAX_SERVER_ID} HCCL allows")
    entry = RankServer(server_id=server_id,
                       host_ip=_address(server.get("host_ip"), f"{where}.host_ip",
                                        v4_only=True))
    devices = server.get("device")
    if not isinstance(devices, list) or not devices:
        raise RanktableError(f"{where}.device must be a non-empty list")
    listed: dict[str, str] = {}
    for j, device in enumerate(devices):
        at = f"{where}.device[{j}]"
        if not isinstance(device, dict):
            raise RanktableError(f"{at} must be an object")
        sdid = device.get("super_device_id")
        item = RankDevice(device_id=_whole(device.get("device_id"), f"{at}.device_id"),
                          device_ip=_address(device.get("device_ip"), f"{at}.device_ip"),
                          rank_id=_whole(device.get("rank_id"), f"{at}.rank_id"),
                          super_device_id=None if sdid is None else
                          _whole(sdid, f"{at}.super_device_id"))
        if item.device_id in listed:
            raise RanktableError(f"{at}: device {item.device_id} of server {server_id} is "
                                 f"listed twice (also {listed[item.device_id]})")
        listed[item.device_id] = at
        entry.devices.append(item)
    return entry


def _super_pods(pods: Any, table: RankTable, first_at: dict[str, str]) -> list[SuperPod]:
    if not isinstance(pods, list) or not pods:
        raise RanktableError("super_pod_list must be a non-empty list")
    out: list[SuperPod] = []
    pod_of: dict[str, str] = {}
    for i, pod in enumerate(pods):
        where = f"super_pod_list[{i}]"
        if not isinstance(pod, dict):
            raise RanktableError(f"{where} must be an object")
        pod_id = _text(pod.get("super_pod_id"), f"{where}.super_pod_id")
        if any(p.super_pod_id == pod_id for p in out):
            raise RanktableError(f"{where}.super_pod_id {pod_id!r} is listed twice")
        members = pod.get("server_list")
        if not isinstance(members, list) or not members:
            raise RanktableError(f"{where}.server_list must be a non-empty list")
        ids = []
        for j, member in enumerate(members):
            at = f"{where}.server_list[{j}]"
            if not isinstance(member, dict):
                raise RanktableError(f"{at} must be an object")
            server_id = _text(member.get("server_id"), f"{at}.server_id")
            if server_id not in first_at:
                raise RanktableError(f"{at}.server_id {server_id!r} is in no entry of "
                                     "server_list")
            if server_id in pod_of:
                raise RanktableError(f"{at}: server {server_id} is in super pod "
                                     f"{pod_of[server_id]} already")
            pod_of[server_id] = pod_id
            ids.append(server_id)
        out.append(SuperPod(super_pod_id=pod_id, server_ids=tuple(ids)))
    order: list[str] = []
    for index, server in enumerate(table.servers):
        if server.server_id not in pod_of:
            raise RanktableError(f"server_list[{index}] ({server.server_id}) is in no super pod "
                                 "of super_pod_list")
        pod_id = pod_of[server.server_id]
        if order and order[-1] != pod_id and pod_id in order:
            # The vendor's rule: one SuperPoD's servers are configured together.
            raise RanktableError(f"server_list[{index}] ({server.server_id}) of super pod "
                                 f"{pod_id} comes after servers of super pod {order[-1]}: "
                                 "list each super pod's servers together")
        order.append(pod_id)
    for pod in out:
        sdids: dict[str, str] = {}
        for server in table.servers:
            if server.server_id not in pod.server_ids:
                continue
            for device in server.devices:
                if device.super_device_id is None:
                    continue
                here = f"{server.server_id} device {device.device_id}"
                if device.super_device_id in sdids:
                    raise RanktableError(f"super_device_id {device.super_device_id} is listed "
                                         f"twice in super pod {pod.super_pod_id} "
                                         f"({sdids[device.super_device_id]}, {here})")
                sdids[device.super_device_id] = here
    return out
