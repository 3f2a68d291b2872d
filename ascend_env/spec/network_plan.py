"""The spec's `network` section as addresses: host x device -> address, netmask, gateway, detect.

Hosts are numbered in inventory order (1-based): with `subnets`, device i of host k gets
address `first_host - 1 + k` within subnets[i]. The result is what `doctor` compares the live
ports with and what `doctor --fix` (network-ip) sets. The plan is a pure function of the spec
and the host list: the same inputs give the same addresses on every run.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Protocol

from ascend_env.core.errors import EXIT_NOT_RIGHT, UsageError
from ascend_env.spec.network_spec import Network, index_value


class PlanError(UsageError):
    """A plan that does not fit the fleet or the devices: the spec is wrong (exit 1).
    `key` is the spec key at fault, e.g. network.hosts.sim2."""

    exit_code = EXIT_NOT_RIGHT

    def __init__(self, key: str, detail: str) -> None:
        super().__init__(f"{key}: {detail}")
        self.key = key
        self.detail = detail


@dataclass(frozen=True)
class PlannedAddress:
    """One port's settings as the plan wants them (None: the plan sets nothing there)."""

    address: str
    netmask: str
    gateway: str | None
    netdetect: str | None


class _HasNetwork(Protocol):
    @property
    def network(self) -> Network | None: ...


def _section(spec: Network | _HasNetwork) -> Network:
    network = spec if isinstance(spec, Network) else spec.network
    if network is None:
        raise PlanError("network", "the spec has no network section: there is no address plan")
    return network


def device_address(spec: Network | _HasNetwork, host_index: int, host_name: str,
                   device: int) -> PlannedAddress:
    """Device `device` of the fleet's host number `host_index` (1-based) named `host_name`.
    `spec` is the spec's `network` section or a whole spec."""
    network = _section(spec)
    if device < 0:
        raise PlanError("network", f"device {device}: device indexes start at 0")
    if network.hosts:
        addresses = network.hosts.get(host_name)
        if addresses is None:
            raise PlanError("network.hosts", f"no entry for host {host_name!r} (it lists "
                            f"{', '.join(sorted(network.hosts))})")
        if device >= len(addresses):
            raise PlanError(f"network.hosts.{host_name}", f"{len(addresses)} addresses, none "
                            f"for device {device}")
        netmask = network.netmask or "255.255.255.255"  # the model refuses hosts without one
        gateway = index_value(network.gateway, device, None)
        return PlannedAddress(addresses[device], netmask, gateway,
                              index_value(network.netdetect, device, gateway))
    if device >= len(network.subnets):
        raise PlanError("network.subnets", f"{len(network.subnets)} subnets, none for "
                        f"device {device} (one per device index)")
    subnet = ipaddress.IPv4Network(network.subnets[device])
    offset = network.first_host - 1 + host_index
    if host_index < 1 or offset >= subnet.num_addresses - 1:  # the last one is the broadcast
        raise PlanError(f"network.subnets[{device}]", f"{subnet} has no room for host "
                        f"{host_name} (host number {host_index}, address offset {offset}; "
                        "network.first_host moves it)")
    first = str(subnet.network_address + 1)
    gateway = index_value(network.gateway, device, first)
    return PlannedAddress(str(subnet.network_address + offset), str(subnet.netmask), gateway,
                          index_value(network.netdetect, device, gateway))


def plan_for(spec: Network | _HasNetwork, hosts: list[str],
             devices: int) -> dict[str, dict[int, PlannedAddress]]:
    """Every host's planned ports, hosts in inventory order; a plan that does not fit the fleet
    (too few subnets or addresses, a host missing from `hosts`, an address twice, a port whose
    gateway or detect address is its own) is a PlanError (a UsageError, exit 1)."""
    network = _section(spec)
    if len(set(hosts)) != len(hosts):
        twice = sorted({h for h in hosts if hosts.count(h) > 1})
        raise PlanError("network", f"the inventory names {', '.join(twice)} twice")
    plan = {name: {device: device_address(network, index, name, device)
                   for device in range(devices)}
            for index, name in enumerate(hosts, start=1)}
    seen: dict[str, str] = {}
    for name, ports in plan.items():
        for device, port in ports.items():
            where = f"{name} device {device}"
            if port.address in seen:
                raise PlanError("network", f"the plan gives {port.address} to {seen[port.address]}"
                                f" and {where}")
            seen[port.address] = where
            if port.gateway == port.address:
                raise PlanError("network.gateway", f"{where}'s gateway {port.gateway} is its own "
                                "address (with subnets: start hosts after it, network.first_host)")
            if port.netdetect == port.address:
                raise PlanError("network.netdetect", f"{where}'s detect address "
                                f"{port.netdetect} is its own address: it would ping itself")
    return plan


def check_fit(network: Network, devices: int) -> None:
    """What the spec alone can tell about the plan and `devices` ports per host: every index
    has its subnet (or every listed host an address per device), per-index lists cover every
    device, and the first host (every listed one, with `hosts`) gets a consistent plan."""
    if network.subnets and len(network.subnets) < devices:
        raise PlanError("network.subnets", f"{len(network.subnets)} subnets for {devices} "
                        "devices per host (one per device index)")
    for host, addresses in network.hosts.items():
        if len(addresses) != devices:
            raise PlanError(f"network.hosts.{host}", f"{len(addresses)} addresses for "
                            f"{devices} devices")
    for name in ("gateway", "netdetect"):
        values = getattr(network, name)
        if isinstance(values, list) and len(values) < devices:
            raise PlanError(f"network.{name}", f"{len(values)} values for {devices} devices "
                            "(one per device index)")
    plan_for(network, list(network.hosts) or ["host 1"], devices)
