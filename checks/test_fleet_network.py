"""Network across the fleet: checks that see every host at once (scope `fleet`).

Each runs once per doctor run and names the hosts and devices involved. They judge what no
single host can: addresses unique across hosts, each device index in one subnet, HCCL's
environment equal on every rank, and a rank table that matches the hosts.
"""

from __future__ import annotations

import ipaddress
from collections import Counter, defaultdict

import pytest

from ascend_env.doctor.findings import fail_involving, observe, warn
from ascend_env.doctor.suite import DoctorContext, Target
from ascend_env.facts.model import Facts

pytestmark = [pytest.mark.category("network"), pytest.mark.level(1), pytest.mark.scope("fleet")]

PER_HOST_VARS = ("HCCL_IF_IP",)  # each host names its own NIC address: never equal


def _ports(fleet: list[Target]) -> list[tuple[str, int, str, str | None]]:
    """(host, device, address, netmask) of every addressed NPU port of the fleet."""
    return [(t.name, device, port.address, port.netmask)
            for t in fleet for device, port in sorted(t.facts.network.devices.items())
            if port.address is not None]


def test_unique_addresses(fleet: list[Target]) -> None:
    """network.unique-addresses: no NPU address is used twice in the fleet."""
    where: dict[str, list[str]] = defaultdict(list)
    for host, device, address, _ in _ports(fleet):
        where[address].append(f"{host} device {device}")
    twice = {address: places for address, places in where.items() if len(places) > 1}
    if twice:
        detail = "; ".join(f"{address}: {', '.join(places)}" for address, places in twice.items())
        fail_involving(
             message=f"{len(twice)} NPU address(es) used twice: {detail}", observed=detail,
             expected="one address per device across the fleet",
             why="two ports with one address answer each other's HCCL links: jobs hang or "
                 "exchange data with the wrong rank",
             fix="network-ip", manual="hccn_tool -i N -ip -s address A netmask M on one of "
             "them (doctor --fix with the spec's network plan does it)",
             involved=tuple(p for places in twice.values() for p in places))
    observe(f"{len(where)} address(es), each once")


def test_unique_super_device_ids(fleet: list[Target]) -> None:
    """network.super-device-ids: no SDID twice in a super pod, no server index on two hosts."""
    sdids: dict[tuple[str | None, str], list[str]] = defaultdict(list)
    servers: dict[tuple[str | None, str], set[str]] = defaultdict(set)
    for t in fleet:
        for device, port in sorted(t.facts.network.devices.items()):
            if port.super_device_id is not None:
                sdids[(port.super_pod_id, port.super_device_id)].append(f"{t.name} device {device}")
            if port.server_index is not None:
                servers[(port.super_pod_id, port.server_index)].add(t.name)
    if not sdids:
        pytest.skip("no SuperPoD identity in any capture (not A3 hosts)")
    twice = {f"SDID {sdid} in pod {pod}": places
             for (pod, sdid), places in sdids.items() if len(places) > 1}
    shared = {f"server index {index} in pod {pod}": sorted(hosts)
              for (pod, index), hosts in servers.items() if len(hosts) > 1}
    if twice or shared:
        found = [f"{what}: {', '.join(where)}" for what, where in {**shared, **twice}.items()]
        fail_involving(
            message=f"{len(shared)} server index(es) on several hosts, {len(twice)} SDID(s) "
                    f"twice: {'; '.join(found[:3])}", observed="; ".join(found),
            expected="each die's SDID once in its super pod, each server index on one host",
            why="HCCL refuses a pod with one superDeviceId twice (EI0014, \"devices have same "
                "superDeviceId\"); a server id set twice (often after a board replacement) "
                "gives its dies the same ids",
            manual="npu-smi info -t spod-info -i N -c C on the hosts named; correct the server "
                   "id through the management interface, or HCCL_LOGIC_SUPERPOD_ID",
            # The dies whose ids clash; with none, the hosts that share a server index.
            involved=tuple(dict.fromkeys(p for places in (twice or shared).values()
                                         for p in places)))
    observe(f"{len(sdids)} SDID(s), each once in its pod")


def _subnet(address: str, netmask: str | None) -> ipaddress.IPv4Network | None:
    try:
        return ipaddress.IPv4Network(f"{address}/{netmask or '255.255.255.255'}", strict=False)
    except ValueError:
        return None


def test_one_subnet_per_device_index(fleet: list[Target], context: DoctorContext) -> None:
    """network.subnets: device i of every host is in the same subnet."""
    if len(fleet) < 2:
        pytest.skip("one host: nothing to compare its subnets with")
    by_index: dict[int, list[tuple[str, ipaddress.IPv4Network | None]]] = defaultdict(list)
    for host, device, address, netmask in _ports(fleet):
        by_index[device].append((host, _subnet(address, netmask)))
    planned = context.spec.network.subnets if context.spec and context.spec.network else []
    odd: list[str] = []
    involved: list[str] = []
    for device, members in sorted(by_index.items()):
        if device < len(planned):
            want = ipaddress.IPv4Network(planned[device])
        else:
            counts = Counter(net for _, net in members if net is not None)
            ranked = counts.most_common(2)
            if not ranked:
                continue
            if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
                # No majority: every host's subnet is named, none is taken for right.
                odd.append(f"device {device}: " + ", ".join(
                    f"{host} in {net}" for host, net in members))
                involved += [f"{host} device {device}" for host, _ in members]
                continue
            want = ranked[0][0]
        for host, net in members:
            if net != want:
                odd.append(f"{host} device {device} in {net}, its peers in {want}")
                involved.append(f"{host} device {device}")
    if odd:
        fail_involving(
             message=f"NPU ports outside their device index's subnet: {'; '.join(odd[:4])}",
             observed="; ".join(odd), expected="device i of every host in one subnet",
             why="HCCL links device i to device i of the other hosts; a port in another "
                 "subnet is not reached (EI0006 socket timeout at start)",
             fix="network-ip", manual="hccn_tool -i N -ip -s address A netmask M (doctor "
             "--fix with the spec's network plan does it)", involved=tuple(involved))
    observe(f"{len(by_index)} device index(es), one subnet each")


def _hccl_vars(facts: Facts) -> dict[str, str]:
    """HCCL_* a job gets: a login shell's when captured (jobs over ssh and schedulers get
    that), else the probe's own."""
    source = facts.env.login_vars if facts.env.login_vars is not None else facts.env.vars
    return {k: v for k, v in source.items() if k.startswith("HCCL_") and k not in PER_HOST_VARS}


def test_hccl_environment_equal(fleet: list[Target], context: DoctorContext) -> None:
    """network.hccl-env: HCCL_* variables are equal on every host (and as the spec says)."""
    values = {t.name: _hccl_vars(t.facts) for t in fleet}
    expected = context.spec.hccl.expected_env() if context.spec else {}
    names = sorted({*expected, *(k for v in values.values() for k in v)})
    differ: list[str] = []
    involved: set[str] = set()
    for name in names:
        seen = {host: env.get(name) for host, env in values.items()}
        want = expected.get(name)
        if want is not None:
            wrong = {h: v for h, v in seen.items() if v != want}
            differ += [f"{h}: {name}={v if v is not None else '(unset)'}, spec {want}"
                       for h, v in wrong.items()]
            involved.update(wrong)
        elif len(set(seen.values())) > 1:
            differ.append(f"{name}: " + ", ".join(
                f"{h}={v if v is not None else '(unset)'}" for h, v in seen.items()))
            involved.update(seen)
    if differ:
        fail_involving(message=f"HCCL settings differ between hosts: {'; '.join(differ[:4])}",
             observed="; ".join(differ), expected="the same HCCL_* values on every rank",
             why="ranks with different timeouts or buffer sizes give up at different times: "
                 "one side reports EI0006 or EI0002 while the other waits",
             manual="set them once for all hosts (the env role's profile script, or the job "
                    "launcher's environment)", involved=tuple(sorted(involved)))
    observe(", ".join(names) or "no HCCL_* set on any host")


def _local(address: str, facts: Facts) -> bool:
    """Whether the host holds `address`: one of its NICs' addresses, or inside a loopback
    interface's prefix (Linux answers for all of 127.0.0.0/8 on lo)."""
    try:
        wanted = ipaddress.ip_address(address)
    except ValueError:
        return False
    for nic in facts.network.nics:
        for cidr in nic.addresses:
            try:
                interface = ipaddress.ip_interface(cidr)
            except ValueError:
                continue
            if interface.ip == wanted or (interface.ip.is_loopback
                                          and wanted in interface.network):
                return True
    return False


def test_hccl_if_ip_on_its_host(fleet: list[Target], context: DoctorContext) -> None:
    """network.hccl-if-ip: a host's HCCL_IF_IP is one of its own addresses."""
    required = context.spec is not None and context.spec.hccl.if_ip == "per-host"
    problems: list[str] = []
    involved: list[str] = []
    judged = 0
    for t in fleet:
        env = t.facts.env.login_vars if t.facts.env.login_vars is not None else t.facts.env.vars
        value = env.get("HCCL_IF_IP")
        if value is None:
            if required:
                problems.append(f"{t.name}: HCCL_IF_IP unset (the spec wants it per host)")
                involved.append(t.name)
            continue
        if not t.facts.network.nics_captured:
            continue
        judged += 1
        if not _local(value, t.facts):
            problems.append(f"{t.name}: HCCL_IF_IP={value} is not an address of this host")
            involved.append(t.name)
    if problems:
        fail_involving(message="; ".join(problems[:4]), observed="; ".join(problems),
             expected="HCCL_IF_IP set to an address of the host it is set on",
             why="HCCL binds its control socket there: '[Find][LocalHostIP]ip [...] is not "
                 "found in the nic list' and the job does not start",
             manual="ip -o addr show ; export HCCL_IF_IP=<this host's address>",
             involved=tuple(involved))
    if not judged and not required:
        pytest.skip("no host sets HCCL_IF_IP (HCCL picks the NIC itself)")
    observe(f"{judged} host(s) with HCCL_IF_IP on their own NIC")


def test_ranktable(fleet: list[Target], context: DoctorContext) -> None:
    """network.ranktable: the rank table (doctor --ranktable) lists every device once, as the
    hosts have them."""
    if context.ranktable is None:
        pytest.skip("no rank table given (doctor --ranktable hccl.json)")
    from ascend_env.cluster.ranktable import check_ranktable, load_ranktable  # noqa: PLC0415

    table = load_ranktable(context.ranktable)
    problems = check_ranktable(table, {t.name: (context.addresses.get(t.name), t.facts)
                                       for t in fleet})
    if problems:
        fail_involving(message=f"{context.ranktable}: {len(problems)} problem(s): "
             + "; ".join(p.message for p in problems[:4]),
             observed="; ".join(p.message for p in problems),
             expected="every device of every host once, ranks 0..n-1, server ids the hosts' "
                      "addresses, device IPs the live ones",
             why="HCCL trusts the rank table: a wrong entry makes ranks wait for peers that "
                 "never come (EI0006) or link to the wrong device",
             manual="ascend-env ranktable --inventory INVENTORY -o hccl.json",
             involved=tuple(dict.fromkeys(p.where for p in problems if p.where)))
    if not context.addresses:
        warn(message="server ids not compared: the hosts were read from captures, which do "
             "not say the addresses the hosts are reached at",
             observed=f"{len(table.servers)} server(s), devices as captured",
             expected="a live run with --inventory to compare server ids",
             why="a wrong server id is a failure HCCL reports only at start")
    observe(f"{sum(len(s.devices) for s in table.servers)} rank(s) as the hosts have them")
