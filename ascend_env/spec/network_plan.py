"""The spec's `network` section as addresses: host x device -> address, netmask, gateway, detect.

Hosts are numbered in inventory order (1-based): with `subnets`, device i of host k gets
address `first_host - 1 + k` within subnets[i]. The result is what `doctor` compares the live
ports with and what `doctor --fix` (network-ip) sets.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from ascend_env.core.errors import UsageError
from ascend_env.spec.network_spec import Network


@dataclass(frozen=True)
class PlannedAddress:
    """One port's settings as the plan wants them (None: the plan sets nothing there)."""

    address: str
    netmask: str
    gateway: str | None
    netdetect: str | None


def _per_index(policy: str | list[str], index: int, first: str | None) -> str | None:
    if isinstance(policy, list):
        return policy[index] if index < len(policy) else None
    return first if policy in ("first", "gateway") else None


def device_address(network: Network, host_index: int, host_name: str,
                   device: int) -> PlannedAddress:
    """Device `device` of the fleet's host number `host_index` (1-based) named `host_name`."""
    if network.hosts:
        addresses = network.hosts.get(host_name)
        if addresses is None:
            raise UsageError(f"network.hosts has no entry for host {host_name!r} "
                             f"(it lists {', '.join(sorted(network.hosts))})")
        if device >= len(addresses):
            raise UsageError(f"network.hosts.{host_name}: {len(addresses)} addresses, "
                             f"no address for device {device}")
        gateway = _per_index(network.gateway, device, None)
        netmask = network.netmask or "255.255.255.255"
        return PlannedAddress(addresses[device], netmask, gateway,
                              _per_index(network.netdetect, device, gateway))
    if device >= len(network.subnets):
        raise UsageError(f"network.subnets: {len(network.subnets)} subnets, none for "
                         f"device {device}")
    subnet = ipaddress.IPv4Network(network.subnets[device])
    offset = network.first_host - 1 + host_index
    if offset >= subnet.num_addresses - 1:  # the last address is the broadcast one
        raise UsageError(f"network.subnets[{device}] {subnet}: no room for host "
                         f"{host_name} (host number {host_index}, address offset {offset})")
    first = str(subnet.network_address + 1)
    gateway = _per_index(network.gateway, device, first)
    return PlannedAddress(str(subnet.network_address + offset),
                          network.netmask or str(subnet.netmask), gateway,
                          _per_index(network.netdetect, device, gateway))


def plan_for(network: Network, hosts: list[str],
             devices: int) -> dict[str, dict[int, PlannedAddress]]:
    """Every host's planned ports; a plan that does not fit the fleet is a UsageError."""
    if len(set(hosts)) != len(hosts):
        raise UsageError("the inventory names a host twice")
    plan = {name: {device: device_address(network, index, name, device)
                   for device in range(devices)}
            for index, name in enumerate(hosts, start=1)}
    seen: dict[str, str] = {}
    for name, ports in plan.items():
        for device, port in ports.items():
            where = f"{name} device {device}"
            if port.address in seen:
                raise UsageError(f"the network plan gives {port.address} to {seen[port.address]} "
                                 f"and {where}")
            seen[port.address] = where
            if port.gateway == port.address:
                raise UsageError(f"the network plan gives {where} its own gateway address "
                                 f"{port.address}; start hosts after it (network.first_host)")
    return plan
