"""The rank table of a fleet: capture the hosts, refuse what cannot make one, build it."""

from __future__ import annotations

import ipaddress
from typing import Any

from ascend_env.cluster.ranktable import (
    HostDevices,
    RanktableError,
    build_ranktable,
    host_devices,
    layout_of,
)
from ascend_env.cluster.ranktable_check import global_addresses
from ascend_env.cluster.ranktable_model import LAYOUT_SUPERPOD
from ascend_env.core.errors import AscendEnvError
from ascend_env.doctor.run import DoctorOptions, captured_targets
from ascend_env.facts.assemble import facts_from_capture
from ascend_env.facts.model import Facts
from ascend_env.spec.network_plan import PlanError, device_address
from ascend_env.targets.collect import Captured


def _nic_address(facts: Facts) -> str | None:
    """A capture's host address: its first global IPv4 interface address."""
    return next((str(ip) for ip in global_addresses(facts) if ip.version == 4), None)


def _server_id(item: Captured, facts: Facts, notes: list[str]) -> str:
    address = item.extra.get("address")
    if isinstance(address, str) and address:
        try:
            ipaddress.ip_address(address)
        except ValueError:
            # HCCL takes any unique label, but MindSpore's tools and the 1.0 guides give the
            # host's IP, and `doctor --ranktable` compares server ids with addresses.
            notes.append(f"{item.name}: server_id {address} is a name, not an address "
                         "(give the host ansible_host=<its IP> in the inventory)")
        return address
    found = _nic_address(facts)
    if found is None:
        raise RanktableError(f"{item.name}: the capture shows no IPv4 address of the host "
                             "to use as its server_id; run with --inventory")
    notes.append(f"{item.name}: server_id {found}, its first interface address in the capture")
    return found


def _against_plan(options: DoctorOptions, hosts: list[HostDevices]) -> list[str]:
    """Notes where a live address differs from the spec's network plan. The table holds the
    live ones (HCCL links to those); the plan is only a cross-check here."""
    spec = options.spec
    if spec is None or spec.network is None:
        return []

    notes = []
    for index, host in enumerate(hosts, start=1):
        for device, address in host.devices:
            try:
                planned = device_address(spec, index, host.name, device).address
            except PlanError as exc:
                notes.append(f"{host.name} device {device}: not compared with the spec's plan "
                             f"({exc})")
                continue
            if address != planned:
                notes.append(f"{host.name} device {device} has {address}, the spec's network "
                             f"plan says {planned} (the table holds the live address; doctor "
                             "--fix network-ip sets the plan's)")
    return notes


def table_of_fleet(options: DoctorOptions) -> tuple[dict[str, Any], list[str]]:
    """The rank table and notes on how it was made; RanktableError (exit 1) when a host or
    the spec does not fit, AscendEnvError (exit 2) when a host could not be read."""
    notes: list[str] = []
    captured = captured_targets(options)
    lost = [f"{c.name}: {c.error}" for c in captured if c.capture is None]
    if lost:
        raise AscendEnvError("cannot write a rank table without every host: " + "; ".join(lost))
    hosts = []
    chips: set[str | None] = set()
    where: dict[str, str] = {}
    problems: list[str] = []
    for item in captured:
        assert item.capture is not None
        facts = facts_from_capture(item.capture)
        server = _server_id(item, facts, notes)
        if server in where:
            problems.append(f"{where[server]} and {item.name} resolve to one address "
                            f"({server}): a rank table needs one server per host")
        where[server] = item.name
        entry = host_devices(item.name, server, facts)
        if not entry.devices:
            problems.append(f"{item.name}: hccn_tool reported no NPU port (is the driver "
                            "installed? see doctor --only network)")
        problems += [f"{item.name} device {d} has no address (hccn_tool -i {d} -ip -g)"
                     for d, address in entry.devices if address is None]
        spec = options.spec
        if spec is not None and spec.hardware.devices and entry.devices and \
                len(entry.devices) != spec.hardware.devices:
            problems.append(f"{item.name} has {len(entry.devices)} NPU ports, the spec's "
                            f"hardware.devices says {spec.hardware.devices}")
        chips.add(facts.chip)
        hosts.append(entry)
    if problems:
        raise RanktableError("no rank table written: " + "; ".join(problems))
    known = {c for c in chips if c}
    if len(known) > 1:
        raise RanktableError(f"the hosts have different chips ({', '.join(sorted(known))}): "
                             "one rank table is for one kind")
    chip: str | None = options.spec.hardware.chip if options.spec else None
    chip = chip or next(iter(known), None)
    if layout_of(chip) == LAYOUT_SUPERPOD:
        lacking = [h.name for h in hosts if len(h.super_device_ids) < len(h.devices)]
        if lacking:
            notes.append(f"A3 layout 1.2: {', '.join(lacking)} gave no SDID for some dies "
                         "(npu-smi info -t spod-info), so those lack super_device_id and the "
                         "table has no super_pod_list unless every host names its pod")
        notes.append("A3: device_ip holds each die's RoCE address (hccn_tool -ip -g); a "
                     "SuperPoD job over HCCS uses the vNIC addresses (hccn_tool -i N -vnic -g), "
                     "which ascend-env does not read (no public sample of that output)")
    notes += _against_plan(options, hosts)
    return build_ranktable(hosts, chip), notes
