"""Network: each NPU's RoCE port has its address, is up and healthy, as /etc/hccn.conf says.

What hccn_tool reports per device (facts/network.py) against /etc/hccn.conf and the spec's
`network` plan. Without a plan a missing address only warns: a single-host job does not need
one, and a fresh install sets none; a spec with a plan makes it a failure.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn

import pytest

from ascend_env.doctor.findings import (
    CheckFailure,
    CheckWarning,
    Finding,
    fail,
    failure,
    observe,
    warn,
)
from ascend_env.doctor.suite import DoctorContext, Target
from ascend_env.facts.model import DeviceNetwork, NetworkFacts
from ascend_env.spec.envspec import EnvSpec
from ascend_env.spec.network_plan import plan_for

pytestmark = [pytest.mark.category("network"), pytest.mark.level(1)]

FIX_HINT = ("ascend-env doctor --fix --spec SPEC (network-ip: sets the plan's addresses with "
            "hccn_tool -i N -ip -s ...)")
# The words `hccn_tool -net_health -g` prints: g_net_health_status in Huawei's open-sourced
# hccn_tool source (https://github.com/hicann/driver/blob/ef377e950a32b1641c108c59481e39e9643b7d63/src/custom/network/hccn/ascend910B/hccn_tool/tool_ops.c).
# Only Success is healthy; a word outside the list is not understood: never a pass.
HEALTH_WORDS = ("Success", "Socket fail", "Receive timeout", "Unreachable", "Time exceeded",
                "Fault", "Init", "Thread error", "Detect ip set", "Unknown")
# A port that went down this often since the driver started is flapping: HCCL's links on it
# break in the middle of jobs even when it reads UP right now.
FLAPPING_DOWNS = 3


def _missing(needed: bool, finding: Finding) -> NoReturn:
    """A missing setting fails where addresses matter (network_needed), else warns."""
    raise CheckFailure(finding) if needed else CheckWarning(finding)


def _unread(network: NetworkFacts, query: str) -> list[str]:
    return [f"device {d}: {text!r}" for d, port in sorted(network.devices.items())
            for key, text in port.unparsed.items() if f" -{query} -g" in key]


def _warn_unread(network: NetworkFacts, query: str) -> None:
    unread = _unread(network, query)
    if unread:
        warn(message=f"hccn_tool -{query} -g answered what the doctor cannot read: "
             + "; ".join(unread), observed="; ".join(unread),
             expected="hccn_tool's own output format",
             why="an answer that is not understood may hide a fault; it is never a pass")


def _ports(network: NetworkFacts, bad: Callable[[DeviceNetwork], bool]) -> list[DeviceNetwork]:
    return [p for _, p in sorted(network.devices.items()) if bad(p)]


def _devices(ports: list[DeviceNetwork]) -> str:
    return ", ".join(str(p.device) for p in ports)


def test_hccn_conf(network: NetworkFacts, network_needed: bool) -> None:
    """network.hccn-conf: /etc/hccn.conf is present, readable and understood."""
    conf = network.hccn_conf
    if conf is None or not conf.present:
        finding = failure(message="/etc/hccn.conf is missing: no NPU port was ever given an "
                       "address", observed="no /etc/hccn.conf",
                       expected="address_N, netmask_N, netdetect_N, gateway_N per device",
                       why="hccn_tool -s writes it; the driver sets the ports from it at boot, "
                           "and rank tables are built from these addresses",
                       fix="network-ip", manual=FIX_HINT)
        _missing(network_needed, finding)
    if not conf.readable:
        fail(message="/etc/hccn.conf cannot be read", observed="unreadable",
             expected="a readable file", why="the doctor and HCCL's tools read it",
             manual="ls -l /etc/hccn.conf")
    if conf.unparsed:
        warn(message=f"/etc/hccn.conf has {len(conf.unparsed)} line(s) the doctor cannot "
             f"read: {conf.unparsed[0]!r}", observed="; ".join(conf.unparsed[:5]),
             expected="<key>_<device>=<value> lines",
             why="a line not understood may be a setting the checks do not see")
    observe(f"{len(conf.devices)} device(s) configured")


def test_addresses(network: NetworkFacts, network_needed: bool) -> None:
    """network.addresses: every NPU port has an address."""
    _warn_unread(network, "ip")
    missing = _ports(network, lambda p: p.address is None)
    if missing:
        words = {p.ip_error or "no address reported" for p in missing}
        finding = failure(
            message=f"device {_devices(missing)} has no address ({'; '.join(sorted(words))})",
            observed=", ".join(f"device {p.device}: {p.ip_error or 'none'}" for p in missing),
            expected="every device: ipaddr and netmask (hccn_tool -i N -ip -g)",
            why="HCCL links between hosts run over these addresses; a job across hosts fails "
                "at start (EI0006, socket timeout)", fix="network-ip", manual=FIX_HINT)
        _missing(network_needed, finding)
    observe(f"{len(network.devices)} device(s) with an address")


def test_conf_matches_live(network: NetworkFacts) -> None:
    """network.conf-matches: /etc/hccn.conf says what the ports have."""
    conf = network.hccn_conf
    if conf is None or not conf.present or not conf.readable:
        pytest.skip("no readable /etc/hccn.conf (see network.hccn-conf)")
    differ = []
    for device, port in sorted(network.devices.items()):
        saved = conf.devices.get(device, {})
        for key, live in (("address", port.address), ("netmask", port.netmask),
                          ("gateway", port.gateway), ("netdetect", port.netdetect)):
            if live is not None and saved.get(key) not in (None, live):
                differ.append(f"device {device} {key}: file {saved.get(key)}, live {live}")
            elif live is not None and key == "address" and key not in saved:
                differ.append(f"device {device} address: not in the file, live {live}")
            elif live is None and key == "address" and saved.get(key):
                differ.append(f"device {device} address: file {saved[key]}, live none")
    if differ:
        fail(message=f"/etc/hccn.conf and the live ports differ: {'; '.join(differ[:4])}",
             observed="; ".join(differ), expected="the file as the ports are",
             why="the driver applies the file at the next boot: the ports would change "
                 "under the rank table built from today's addresses",
             fix="network-ip", manual=FIX_HINT)
    observe(f"{len(network.devices)} device(s) as the file says")


def test_links(network: NetworkFacts) -> None:
    """network.links: every NPU port's link is UP and not flapping."""
    _warn_unread(network, "link")
    down = _ports(network, lambda p: p.link is not None and p.link.upper() != "UP")
    flapping = _ports(network, lambda p: (p.link_down_count or 0) >= FLAPPING_DOWNS)
    if down or flapping:
        bad = {p.device: p for p in [*down, *flapping]}
        parts = [f"device {d}: " + ", ".join(
            ([f"link {bad[d].link}"] if bad[d] in down else [])
            + ([f"went down {bad[d].link_down_count} times (flapping)"]
               if bad[d] in flapping else [])) for d in sorted(bad)]
        fail(message=f"NPU port link problem on device "
             f"{_devices([bad[d] for d in sorted(bad)])}: " + "; ".join(parts),
             observed="; ".join(parts),
             expected=f"link status: UP, fewer than {FLAPPING_DOWNS} link downs",
             why="HCCL's links break when a port goes down; a job on it stops with a timeout",
             manual="hccn_tool -i N -link -g ; hccn_tool -i N -link_stat -g ; check the cable, "
                    "optical module (hccn_tool -i N -optical -g) and switch port")
    unknown = _ports(network, lambda p: p.link is None)
    if unknown:
        warn(message=f"link state of device {_devices(unknown)} not reported",
             observed="no answer", expected="link status: UP",
             why="a port whose state is unknown is never taken for up")
    observe(f"{len(network.devices)} link(s) UP")


def test_health(network: NetworkFacts, network_needed: bool) -> None:
    """network.health: every NPU port's net health is Success."""
    _warn_unread(network, "net_health")
    bad = _ports(network, lambda p: p.health is not None and p.health != "Success")
    known = [p for p in bad if p.health in HEALTH_WORDS]
    if known and not network_needed and all(p.address is None for p in known):
        # A port never given an address reads Init: what a fresh install leaves.
        warn(message="NPU ports without an address are not up: device "
             + ", ".join(f"{p.device} ({p.health})" for p in known),
             observed="; ".join(f"device {p.device}: {p.health}" for p in known),
             expected="net health status: Success once addressed", fix="network-ip",
             why="a job across hosts needs them; a single-host job does not")
    if known:
        detail = "; ".join(f"device {p.device}: {p.health}" for p in known)
        fail(message=f"NPU port health is not Success on device {_devices(known)}: {detail}",
             observed=detail, expected="net health status: Success",
             why="the port cannot reach its detect address (or was never set up); HCCL over "
                 "it fails",
             fix="network-ip" if any(p.health in ("Init", "Detect ip set") for p in known)
             else None,
             manual="hccn_tool -i N -net_health -g ; hccn_tool -i N -netdetect -g ; "
                    "ping the detect address from the switch side")
    odd = [p for p in bad if p not in known] + _ports(network, lambda p: p.health is None)
    if odd:
        warn(message="net health not understood on device "
             + ", ".join(f"{p.device} ({p.health or 'no answer'})" for p in odd),
             observed=", ".join(f"device {p.device}: {p.health!r}" for p in odd),
             expected="net health status: Success",
             why="a word the doctor does not know is never taken for healthy")
    observe(f"{len(network.devices)} port(s) Success")


def test_detect_and_gateway(network: NetworkFacts, network_needed: bool) -> None:
    """network.detect-gateway: every NPU port has a detect address and a gateway."""
    _warn_unread(network, "netdetect")
    missing = [f"device {p.device}: " + " and ".join(
        w for w, v in (("no detect address", p.netdetect), ("no gateway", p.gateway)) if not v)
        for _, p in sorted(network.devices.items())
        if p.address is not None and not (p.netdetect and p.gateway)]
    if missing:
        finding = failure(message="; ".join(missing[:4]), observed="; ".join(missing),
                       expected="netdetect address and default gateway on every port",
                       why="net health is judged by pinging the detect address; without it "
                           "the port's health stays unknown to the driver",
                       fix="network-ip", manual=FIX_HINT)
        _missing(network_needed, finding)
    observe("detect address and gateway on every addressed port")


def test_plan(network: NetworkFacts, with_spec: EnvSpec, context: DoctorContext,
              target: Target) -> None:
    """network.plan: every NPU port has the address the spec's network plan gives it."""
    if with_spec.network is None:
        pytest.skip("the spec has no network plan")
    names = context.plan_hosts or [t.name for t in context.targets]
    plan = plan_for(with_spec.network, names, max(network.devices, default=-1) + 1)[target.name]
    differ = []
    for device, port in sorted(network.devices.items()):
        want = plan[device]
        for key, live, planned in (("address", port.address, want.address),
                                   ("netmask", port.netmask, want.netmask),
                                   ("gateway", port.gateway, want.gateway),
                                   ("netdetect", port.netdetect, want.netdetect)):
            if planned is not None and live != planned:
                differ.append(f"device {device} {key}: {live or 'none'}, plan {planned}")
    if differ:
        fail(message=f"{len(differ)} port setting(s) differ from the plan: "
             + "; ".join(differ[:4]), observed="; ".join(differ),
             expected="the spec's network plan", why="rank tables and peers expect the plan's "
             "addresses", fix="network-ip", manual=FIX_HINT)
    observe(f"{len(plan)} port(s) as planned")


def test_superpod(network: NetworkFacts) -> None:
    """network.superpod: each A3 die gives an SDID; a host's dies share one pod and index."""
    unread = {d: text for d, port in sorted(network.devices.items())
              for key, text in port.unparsed.items() if "spod-info" in key}
    dies = {d: port for d, port in sorted(network.devices.items()) if port.super_device_id}
    if not dies and not unread:
        pytest.skip("no SuperPoD identity in the capture (not an A3 host, or a probe from "
                    "before it read npu-smi info -t spod-info)")
    problems = [f"device {d}: spod-info answered {text!r}" for d, text in unread.items()]
    for what, attribute in (("super pods", "super_pod_id"), ("server indexes", "server_index")):
        seen = {d: getattr(p, attribute) for d, p in dies.items()}
        if len(set(seen.values())) > 1:
            problems.append(f"its dies name {len(set(seen.values()))} {what}: "
                            + ", ".join(f"device {d} {v}" for d, v in seen.items()))
    if problems:
        fail(message="; ".join(problems[:3]), observed="; ".join(problems),
             expected="every die: an SDID, one super pod and one server index per host",
             why="HCCL places each rank in the pod by these ids; a server index that differs "
                 "among a host's NPUs (after a board replacement) breaks SuperPoD jobs",
             manual="compare npu-smi info -t spod-info -i N -c C on each die; the server id "
                    "is set through the server's management interface (Redfish)")
    observe(f"{len(dies)} die(s) in super pod {next(iter(dies.values())).super_pod_id}")
