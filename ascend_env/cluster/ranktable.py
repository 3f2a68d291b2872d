"""Rank tables (hccl.json, RANK_TABLE_FILE): written from the hosts' live device addresses,
read back, and checked against the hosts.

Layouts, as the public sources show them (tests/data/ranktable/ quotes them, each with its
SOURCE; the field rules are the vendor's "Rank Table Configuration Resource Information"
page for Atlas A3, which also gives the 1.0 layout):
- version "1.0", typical networking (Atlas 800T A2 / 910B, 910, A3 in AI server mode):
  `{"version": "1.0", "server_count": "2", "server_list": [{"server_id": "10.0.0.1",
  "device": [{"device_id": "0", "device_ip": "192.168.100.101", "rank_id": "0"}, ...],
  "host_nic_ip": "reserve"}], "status": "completed"}`, every value a string. MindSpore's
  hccl_tools.py writes this shape, server_id the host's IP and `host_nic_ip: "reserve"`.
- version "1.2", A3 SuperPoD (chips.yaml ranktable_layout): each server may carry `host_ip`,
  each device `super_device_id` (npu-smi info -t spod-info: SDID), the table a `super_pod_list` of
  `{super_pod_id, server_list: [{server_id}]}`; without the last two HCCL runs in "AI server
  mode". A table written from facts takes them from each die's spod-info (facts/superpod.py).

Ranks run host by host in the order given, devices ascending within a host: each server's
ranks are one consecutive run, as HCCL requires ("cross-server rank_id interleaving is not
supported").
"""

from __future__ import annotations

import ipaddress
from typing import Any

from ascend_env.cluster.ranktable_check import Fleet, check_ranktable
from ascend_env.cluster.ranktable_model import (
    COMPLETED,
    LAYOUT_SERVER,
    LAYOUT_SUPERPOD,
    LAYOUTS,
    HostDevices,
    RankDevice,
    RankProblem,
    RankServer,
    RankTable,
    RanktableError,
    SuperPod,
)
from ascend_env.cluster.ranktable_read import (
    MAX_RANKTABLE_BYTES,
    load_ranktable,
    parse_ranktable,
)
from ascend_env.facts.model import Facts
from ascend_env.spec.matrix import load_chips

__all__ = ["LAYOUTS", "MAX_RANKTABLE_BYTES", "Fleet", "HostDevices", "RankDevice",
           "RankProblem", "RankServer", "RankTable", "RanktableError", "SuperPod",
           "build_ranktable", "check_ranktable", "host_devices", "load_ranktable",
           "parse_ranktable"]


def _is_ipv4(text: str) -> bool:
    try:
        return ipaddress.ip_address(text).version == 4
    except ValueError:
        return False


def _super_pods(hosts: list[HostDevices]) -> list[dict[str, Any]] | None:
    """super_pod_list when every host names its SuperPoD, None when none does."""
    named = [host for host in hosts if host.super_pod_id is not None]
    if not named:
        return None
    if len(named) != len(hosts):
        lacking = ", ".join(host.name for host in hosts if host.super_pod_id is None)
        raise RanktableError(f"super pods: {lacking} name(s) no super pod while others do; "
                             "a SuperPoD table places every server")
    pods: dict[str, list[str]] = {}
    last: str | None = None
    owners: dict[tuple[str, str], str] = {}  # (pod, SDID) -> the die that has it
    for host in hosts:
        pod = str(host.super_pod_id)
        for device, sdid in sorted(host.super_device_ids.items()):
            here = f"{host.name} device {device}"
            if owners.setdefault((pod, sdid), here) != here:
                # HCCL's EI0014: "devices have same superDeviceId ... in superPod".
                raise RanktableError(f"{owners[(pod, sdid)]} and {here} have one SDID ({sdid}) "
                                     f"in super pod {pod}: HCCL refuses the table (fix the "
                                     "server id; doctor --only network names it)")
        if pod in pods and pod != last:
            raise RanktableError(f"{host.name} of super pod {pod} comes after hosts of super "
                                 f"pod {last}: list each super pod's hosts together")
        pods.setdefault(pod, []).append(host.server_id)
        last = pod
    return [{"super_pod_id": pod, "server_list": [{"server_id": s} for s in servers]}
            for pod, servers in pods.items()]


def layout_of(chip: str | None) -> str:
    """The rank table version a chip family reads (chips.yaml ranktable_layout); 1.0 for a
    chip no capture or spec names."""
    found = load_chips().get(chip) if chip else None
    return found.ranktable_layout if found is not None else LAYOUT_SERVER


def build_ranktable(hosts: list[HostDevices], chip: str | None) -> dict[str, Any]:
    """The rank table of these hosts in their chip's layout: 1.0, or 1.2 (A3 SuperPoD). Every
    device needs an address and every host its own server id (RanktableError, exit 1,
    otherwise)."""
    if not hosts:
        raise RanktableError("no host to write a rank table for")
    a3 = layout_of(chip) == LAYOUT_SUPERPOD
    rank = 0
    servers = []
    owner: dict[str, str] = {}
    for host in hosts:
        if host.server_id in owner:
            raise RanktableError(f"{owner[host.server_id]} and {host.name} have one server id "
                                 f"({host.server_id}): a rank table needs one per host")
        owner[host.server_id] = host.name
        if not host.devices:
            raise RanktableError(f"{host.name} has no NPU device to list")
        devices = []
        for device, address in sorted(host.devices):
            if address is None:
                raise RanktableError(f"{host.name} device {device} has no address: set it "
                                     "(doctor --fix with a network plan) before writing a "
                                     "rank table")
            entry = {"device_id": str(device)}
            if a3 and device in host.super_device_ids:
                entry["super_device_id"] = host.super_device_ids[device]
            entry |= {"device_ip": address, "rank_id": str(rank)}
            devices.append(entry)
            rank += 1
        server: dict[str, Any] = {"server_id": host.server_id}
        if a3:
            host_ip = host.host_ip or (host.server_id if _is_ipv4(host.server_id) else None)
            if host_ip is not None:
                server["host_ip"] = host_ip
            server["device"] = devices
        else:
            server |= {"device": devices, "host_nic_ip": "reserve"}
        servers.append(server)
    table: dict[str, Any] = {"version": LAYOUT_SUPERPOD if a3 else LAYOUT_SERVER,
                             "server_count": str(len(servers)), "server_list": servers,
                             "status": COMPLETED}
    pods = _super_pods(hosts) if a3 else None
    if pods is not None:
        table["super_pod_list"] = pods
    return table


def host_devices(name: str, server_id: str, facts: Facts) -> HostDevices:
    """A host's entry from its facts: its NPU ports' live addresses (hccn_tool -ip -g) and,
    on A3, each die's SDID and the host's super pod (RanktableError when its dies name
    different pods: one server is in one pod)."""
    ports = sorted(facts.network.devices.items())
    pods = {port.super_pod_id for _, port in ports if port.super_pod_id is not None}
    if len(pods) > 1:
        raise RanktableError(f"{name}: its dies name super pods {', '.join(sorted(pods))} "
                             "(npu-smi info -t spod-info): one server is in one pod")
    return HostDevices(
        name=name, server_id=server_id,
        devices=[(device, port.address) for device, port in ports],
        super_pod_id=next(iter(pods), None),
        super_device_ids={device: port.super_device_id for device, port in ports
                          if port.super_device_id is not None})
