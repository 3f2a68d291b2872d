"""A rank table against the hosts: every device once, ranks 0..n-1, the hosts' addresses.

HCCL trusts the table: a device left out or a rank twice makes the others wait for a peer
that never comes, a wrong device_ip links to the wrong port (or none), and a server id no
host answers to stops the job at start. Each problem names the host and device it is about.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping

from ascend_env.cluster.ranktable_model import (
    COMPLETED,
    LAYOUT_SUPERPOD,
    RankProblem,
    RankServer,
    RankTable,
)
from ascend_env.facts.model import Facts

Fleet = Mapping[str, tuple[str | None, Facts]]  # host name -> (address reached at, facts)


def global_addresses(facts: Facts) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """The host's interface addresses in its capture (`ip -o addr show`), in order, without
    loopback and link-local ones."""
    out = []
    for nic in facts.network.nics:
        for cidr in nic.addresses:
            try:
                ip = ipaddress.ip_interface(cidr).ip
            except ValueError:
                continue
            if not (ip.is_loopback or ip.is_link_local):
                out.append(ip)
    return out


def _own_addresses(facts: Facts) -> set[str]:
    return {str(ip) for ip in global_addresses(facts)}


def _unique_nics(fleet: Fleet) -> dict[str, str]:
    """Interface address -> host, for hosts whose reaching address is unknown; an address
    two hosts show (hosts sharing a network namespace, a VIP) identifies neither."""
    owners: dict[str, set[str]] = {}
    for name, (address, facts) in fleet.items():
        if not address:
            for ip in _own_addresses(facts):
                owners.setdefault(ip, set()).add(name)
    return {ip: next(iter(names)) for ip, names in owners.items() if len(names) == 1}


def _by_ports(server: RankServer, fleet: Fleet, taken: set[str]) -> str | None:
    """The host, among those whose reaching address is unknown, whose live port addresses
    are this server's device_ips (globally unique in a working fleet): a saved capture's
    server is still found, its server id then not compared."""
    listed = {device.device_ip for device in server.devices if device.device_ip}
    best: list[tuple[int, str]] = []
    for name, (address, facts) in fleet.items():
        if address or name in taken:
            continue
        live = {port.address for port in facts.network.devices.values() if port.address}
        if listed & live:
            best.append((len(listed & live), name))
    best.sort(reverse=True)
    if not best or (len(best) > 1 and best[0][0] == best[1][0]):
        return None
    return best[0][1]


def _listing(names: list[str], fleet: Fleet) -> str:
    shown = [f"{n} is reached at {fleet[n][0]}" if fleet[n][0] else n for n in names]
    return ", ".join(shown)


def _match(table: RankTable, fleet: Fleet,
           problems: list[RankProblem]) -> dict[int, str]:
    """Which host each server entry is (by index); the entries that are none are named."""
    by_address = {address: name for name, (address, _) in fleet.items() if address}
    # Where a host's reaching address is not known (a saved capture), one of its own
    # interface addresses identifies it as well.
    by_nic = _unique_nics(fleet)
    matched: dict[int, str] = {}
    first: dict[str, int] = {}
    twice: set[int] = set()
    for index, server in enumerate(table.servers):
        name = (by_address.get(server.server_id) or by_address.get(server.host_ip or "")
                or by_nic.get(server.server_id) or by_nic.get(server.host_ip or ""))
        by_name = name is None and server.server_id in fleet
        if by_name:
            name = server.server_id
        if name is None:
            continue
        if name in first:
            problems.append(RankProblem(
                message=f"{name} is listed twice (server_list[{first[name]}] "
                        f"{table.servers[first[name]].server_id}, server_list[{index}] "
                        f"{server.server_id})", host=name))
            twice.add(index)
            continue
        first[name] = index
        matched[index] = name
        address = fleet[name][0]
        if by_name and address and server.host_ip is None:
            # MindSpore's tools and the 1.0 guides: server_id is the host's IP address.
            problems.append(RankProblem(message=f"server_id {server.server_id} is not an "
                                        f"address: {name} is reached at {address}", host=name))
        if server.host_ip and address and server.host_ip != address and \
                server.host_ip not in _own_addresses(fleet[name][1]):
            problems.append(RankProblem(message=f"{name}: host_ip {server.host_ip}, the host "
                                        f"is reached at {address}", host=name))
    for index, server in enumerate(table.servers):
        if index not in matched and index not in twice:
            found = _by_ports(server, fleet, set(matched.values()))
            if found is not None:
                matched[index] = found
    absent = [name for name in fleet if name not in matched.values()]
    for index, server in enumerate(table.servers):
        if index in matched or index in twice:
            continue
        others = _listing(absent, fleet) if absent else "the fleet: " + _listing(
            list(fleet), fleet)
        problems.append(RankProblem(message=f"server_id {server.server_id} is no host of the "
                                    f"fleet ({others})", place=f"server_list[{index}]"))
    return matched


def _where(server: RankServer, name: str | None, device_id: str) -> str:
    return f"{name or server.server_id} device {device_id}"


def _ranks(table: RankTable, names: dict[int, str], problems: list[RankProblem]) -> None:
    places: dict[int, list[tuple[str | None, int, str]]] = {}
    for index, server in enumerate(table.servers):
        name = names.get(index)
        for device in server.devices:
            places.setdefault(device.rank, []).append(
                (name, device.device, _where(server, name, device.device_id)))
    clean = True
    for rank, where in sorted(places.items()):
        if len(where) > 1:
            clean = False
            problems.append(RankProblem(
                message=f"rank {rank} is listed twice ({', '.join(w for _, _, w in where)})",
                host=where[0][0], device=where[0][1] if where[0][0] else None,
                place="" if where[0][0] else where[0][2]))
    total = table.ranks
    gaps = sorted(set(range(total)) - set(places))
    if gaps:
        clean = False
        shown = ", ".join(map(str, gaps[:8])) + (f" and {len(gaps) - 8} more"
                                                 if len(gaps) > 8 else "")
        beyond = sorted(r for r in places if r >= total)
        also = f" (listed instead: {', '.join(map(str, beyond[:8]))})" if beyond else ""
        problems.append(RankProblem(message=f"ranks are not 0..{total - 1}: {shown} "
                                    f"{'is' if len(gaps) == 1 else 'are'} missing{also}"))
    if not clean:
        return
    for index, server in enumerate(table.servers):
        ranks = sorted(device.rank for device in server.devices)
        if ranks[-1] - ranks[0] + 1 != len(ranks):
            # The vendor's rule: "cross-server rank_id interleaving is not supported".
            who = names.get(index) or server.server_id
            problems.append(RankProblem(
                message=f"{who}'s ranks {', '.join(map(str, ranks))} are not consecutive: "
                        "HCCL does not support ranks interleaved across servers",
                host=names.get(index), place=f"server_list[{index}]"))


def _device_ips(table: RankTable, names: dict[int, str],
                problems: list[RankProblem]) -> None:
    # device_ip may be left out on one server, or inside one SuperPoD (HCCS links the
    # chips); across servers RDMA needs it.
    one_pod = table.version == LAYOUT_SUPERPOD and len(table.super_pods) == 1
    needed = len(table.servers) > 1 and not one_pod
    seen: dict[str, str] = {}
    for index, server in enumerate(table.servers):
        name = names.get(index)
        for device in server.devices:
            where = _where(server, name, device.device_id)
            if device.device_ip is None:
                if needed:
                    problems.append(RankProblem(
                        message=f"{where}: the rank table gives no device_ip (a table of "
                                "several servers needs one per device)",
                        host=name, device=device.device if name else None,
                        place="" if name else where))
                continue
            if device.device_ip in seen:
                problems.append(RankProblem(
                    message=f"device_ip {device.device_ip} is listed twice "
                            f"({seen[device.device_ip]}, {where})", host=name,
                    device=device.device if name else None, place="" if name else where))
            else:
                seen[device.device_ip] = where


def _devices(table: RankTable, fleet: Fleet, names: dict[int, str],
             problems: list[RankProblem]) -> None:
    listed_hosts = {name: table.servers[index] for index, name in names.items()}
    for name, (_, facts) in fleet.items():
        server = listed_hosts.get(name)
        if server is None:
            problems.append(RankProblem(message=f"host {name} is not in the rank table",
                                        host=name))
            continue
        live = {device: port.address for device, port in facts.network.devices.items()}
        if not live:
            problems.append(RankProblem(
                message=f"{name}: hccn_tool reported no NPU port, so its "
                        f"{len(server.devices)} listed device(s) cannot be compared",
                host=name))
            continue
        listed = {device.device: device for device in server.devices}
        for device_id in sorted(set(live) - set(listed)):
            problems.append(RankProblem(message=f"device {device_id} of {name} is missing",
                                        host=name, device=device_id))
        for device_id, device in sorted(listed.items()):
            where = f"{name} device {device_id}"
            if device_id not in live:
                problems.append(RankProblem(message=f"{where}: the host has no such device",
                                            host=name, device=device_id))
            elif device.device_ip is not None and device.device_ip != live[device_id]:
                problems.append(RankProblem(
                    message=f"{where}: rank table says {device.device_ip}, the device has "
                            f"{live[device_id] or 'no address'}", host=name, device=device_id))
            port = facts.network.devices.get(device_id)
            sdid = port.super_device_id if port is not None else None
            if device.super_device_id is not None and sdid is not None and \
                    device.super_device_id != sdid:
                # HCCL checks SDIDs itself only for duplicates (EI0014); a stale one links
                # the rank to another die's HCCS port.
                problems.append(RankProblem(
                    message=f"{where}: rank table says super_device_id "
                            f"{device.super_device_id}, the die's SDID is {sdid} (npu-smi "
                            "info -t spod-info)", host=name, device=device_id))


def check_ranktable(table: RankTable, fleet: Fleet) -> list[RankProblem]:
    """What in `table` disagrees with the hosts (name -> (address reached at, facts)): no
    problem means every device of every host once, ranks 0..n-1 in one run per server, the
    hosts' addresses as server ids, the live addresses as device IPs and, on A3, each die's
    own SDID as its super_device_id."""
    problems: list[RankProblem] = []
    if table.status != COMPLETED:
        said = "is missing" if table.status is None else f"is {table.status!r}"
        problems.append(RankProblem(message=f"status {said}: HCCL uses a table whose status "
                                    f"is {COMPLETED!r}"))
    names = _match(table, fleet, problems)
    _ranks(table, names, problems)
    _device_ips(table, names, problems)
    _devices(table, fleet, names, problems)
    return problems
