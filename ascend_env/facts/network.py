"""The NPUs' network ports (hccn_tool, /etc/hccn.conf) and the host's own interfaces (ip).

The formats are hccn_tool's own (Huawei's open-sourced source prints `ipaddr:%s`,
`net health status: %s`, ...); tests/data/hccn_*/ hold real outputs quoted in public guides.
An output no parser here understands is kept raw in DeviceNetwork.unparsed, so a check that
judges a port never passes on it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ascend_env.facts import superpod
from ascend_env.facts.model import DeviceNetwork, HccnConf, HostNic, NetworkFacts
from ascend_env.facts.reader import CaptureReader
from ascend_env.remote import probe

HCCN_CONF = "/etc/hccn.conf"
# `<name>_<device>=<value>` keys hccn_tool writes to /etc/hccn.conf (tls_enable_N on newer
# drivers); any other line is kept in HccnConf.unparsed.
HCCN_CONF_KEYS = ("address", "netmask", "netdetect", "gateway", "send_arp_status",
                  "tls_enable")
_CONF_LINE = re.compile("(" + "|".join(HCCN_CONF_KEYS) + r")_(\d+)\s*=\s*(.*)")
# hccn_tool's error when no address was set (two spellings in its source: ipconf and ip).
NO_IP = "no ip was preset"
NO_GATEWAY = "no gateway was preset"
_COMMAND = re.compile(r"hccn_tool -i (\d+) -(\w+) -g$")


def parse_hccn_conf(text: str) -> HccnConf:
    """`address_0=10.0.0.1` lines by device; comments and blank lines skipped, the rest kept
    as unparsed (never dropped). The first value of a key wins, as in parse_kv."""
    conf = HccnConf(present=True, readable=True)
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _CONF_LINE.fullmatch(line)
        if match is None:
            conf.unparsed.append(raw)
            continue
        key, device, value = match.group(1), int(match.group(2)), match.group(3).strip()
        conf.devices.setdefault(device, {}).setdefault(key, value)
    return conf


def _field(text: str, label: str) -> str | None:
    """The rest of the first line `label: x` with an x (hccn_tool prints `ipaddr:x` and
    `link status: x`). Line by line: a pattern free to cross lines rescans blank ones."""
    wanted = label.lower()
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip().lower() == wanted and value.strip():
            return value.strip()
    return None


def parse_hccn_ip(text: str) -> dict[str, str] | None:
    """`-ip -g`: {"address", "netmask"}, or {"error": "no ip was preset"}; None if neither."""
    if NO_IP in text:
        return {"error": NO_IP}
    address, netmask = _field(text, "ipaddr"), _field(text, "netmask")
    if address is None:
        return None
    return {"address": address, **({"netmask": netmask} if netmask else {})}


def parse_hccn_link(text: str) -> str | None:
    """`-link -g`: `link status: UP` -> "UP" (DOWN, or the raw word)."""
    return _field(text, "link status")


def parse_hccn_link_stat(text: str) -> dict[str, int] | None:
    """`-link_stat -g`: `link up count : 5` / `link down count : 4` (after a `[devid 0]`
    tag on some drivers) -> {"up": 5, "down": 4}; None when neither count is there."""
    out: dict[str, int] = {}
    for word in ("up", "down"):
        match = re.search(r"link " + word + r" count\s*:\s*(\d+)", text)
        if match:
            out[word] = int(match.group(1))
    return out or None


def parse_hccn_net_health(text: str) -> str | None:
    """`-net_health -g`: the raw status words ("Success", "Fault", "Detect ip set", ...)."""
    return _field(text, "net health status")


# What `-netdetect -g` prints for a port whose detect address was never set: the tool prints
# the stored IPv4 address in dotted form, and an unset one is zero.
NETDETECT_UNSET = "0.0.0.0"


def parse_hccn_netdetect(text: str) -> str | None:
    """`-netdetect -g`: `netdetect address: 10.0.0.1` (some builds: `netdetect addr:`) -> the
    address; `0.0.0.0` where none is set."""
    return _field(text, "netdetect address") or _field(text, "netdetect addr")


def parse_hccn_gateway(text: str) -> dict[str, str] | None:
    """`-gateway -g`: `default gateway:10.0.0.1, Iface:eth0` -> {"gateway", "iface"}, or
    {"error": "no gateway was preset"}; None if neither."""
    if NO_GATEWAY in text:
        return {"error": NO_GATEWAY}
    match = re.search(r"default gateway:\s*([^\s,]+)(?:,\s*Iface:\s*(\S+))?", text)
    if match is None:
        return None
    return {"gateway": match.group(1), **({"iface": match.group(2)} if match.group(2) else {})}


def _pairs(text: str) -> dict[str, str]:
    """`key : value` lines (spaces around the colon vary); the first key wins."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip():
            out.setdefault(key.strip(), value.strip())
    return out


def parse_hccn_optical(text: str) -> dict[str, str] | None:
    """`-optical -g`: its `present              : present` lines as a dict; None if none."""
    return _pairs(text) or None


def parse_hccn_lldp(text: str) -> dict[str, str] | None:
    """`-lldp -g`: the peer switch port's `Ifname: 400GE1/1/5:1` and the other TLV lines."""
    return _pairs(text) or None


_BRACKETED = re.compile(r"\[([^\[\]]*)\]")
_KEY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_ ")


def _bracketed(line: str) -> list[tuple[str, str]]:
    """(key, value) of each `key[value]` of a line, the key being the run of letters, `_` and
    spaces before the bracket that starts with a letter. Read backwards from each bracket, so
    a long line costs its length once (a lazy regex for the key retried every start)."""
    fields = []
    end = 0
    for match in _BRACKETED.finditer(line):
        start = match.start()
        while start > end and line[start - 1] in _KEY_CHARS:
            start -= 1
        key = line[start:match.start()].lstrip("_ ")
        if key:
            fields.append((key, match.group(1)))
        end = match.end()
    return fields


def parse_hccn_tls(text: str) -> dict[str, str] | None:
    """`-tls -g`: `dev_id:0, tls switch[0](0:disable, 1:enable), ...` -> {"dev_id": "0",
    "tls switch": "0", ...}; lines of another form as `key: value`."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        fields = _bracketed(line)
        if not fields:
            for key, value in _pairs(line).items():
                out.setdefault(key, value)
            continue
        device = re.match(r"\s*dev_id:\s*(\d+)", line)
        if device:
            out.setdefault("dev_id", device.group(1))
        for key, value in fields:
            out.setdefault(key.strip(), value.strip())
    return out or None


_IP_ADDR = re.compile(r"^\d+:\s+(\S+?)(?:@\S+)?\s+(inet6?)\s+(\S+)")
_IP_LINK = re.compile(r"^\d+:\s+(\S+?)(?:@\S+)?:\s")


def _link_state(line: str) -> tuple[str, str | None] | None:
    """(name, `state` word or None) of an `ip -o link` line; None for another line."""
    match = _IP_LINK.match(line)
    if match is None:
        return None
    state = re.search(r"\sstate\s+(\S+)", line)
    return match.group(1), state.group(1) if state else None


def _ip_addr(text: str) -> tuple[list[HostNic], list[str]]:
    nics: dict[str, HostNic] = {}
    odd: list[str] = []
    for line in text.splitlines():
        match, link = _IP_ADDR.match(line), _link_state(line)
        if match is not None:
            nic = nics.setdefault(match.group(1), HostNic(name=match.group(1)))
            nic.addresses.append(match.group(3))
        elif link is not None:  # older ip (and busybox) list the links too
            nics.setdefault(link[0], HostNic(name=link[0])).state = link[1]
        elif line.strip():
            odd.append(line)
    return list(nics.values()), odd


def parse_ip_addr(text: str) -> list[HostNic]:
    """`ip -o addr show`: one line per address -> each interface with its CIDR addresses."""
    return _ip_addr(text)[0]


def parse_ip_link(text: str) -> dict[str, str | None]:
    """`ip -o link show`: interface -> `state` word (UP, DOWN, UNKNOWN), None if not shown."""
    out: dict[str, str | None] = {}
    for line in text.splitlines():
        link = _link_state(line)
        if link is not None:
            out.setdefault(*link)
    return out


def _device(network: DeviceNetwork, query: str, text: str) -> bool:
    """Fill one query's fields from its output; False when the output was not understood."""
    if query == "ip":
        ip = parse_hccn_ip(text)
        if ip is not None:
            network.address, network.netmask = ip.get("address"), ip.get("netmask")
            network.ip_error = ip.get("error")
        return ip is not None
    if query == "gateway":
        gateway = parse_hccn_gateway(text)
        if gateway is not None:
            network.gateway = gateway.get("gateway")
        return gateway is not None
    if query == "link_stat":
        counts = parse_hccn_link_stat(text)
        if counts is not None:
            network.link_up_count, network.link_down_count = counts.get("up"), counts.get("down")
        return counts is not None
    if query in ("link", "net_health", "netdetect"):
        word = PARSERS["hccn_" + query](text)
        # An unset detect address is read, and is "not set", not an address to ping.
        setattr(network, {"net_health": "health"}.get(query, query),
                None if query == "netdetect" and word == NETDETECT_UNSET else word)
        return word is not None
    if query in ("optical", "lldp", "tls"):
        pairs = PARSERS["hccn_" + query](text)
        if pairs is not None:
            setattr(network, query, pairs)
        if query == "optical" and pairs is not None and "present" in pairs:
            network.optical_present = {"present": True, "not present": False}.get(
                pairs["present"].lower())
        return pairs is not None
    return False


def read_network(r: CaptureReader) -> NetworkFacts:
    """Device ports from the hccn_tool records, /etc/hccn.conf, and the host's interfaces."""
    found = {path: info for path, info in r.capture.paths.items()
             if path.endswith(probe.HCCN_TOOL)}
    tool_paths = list(found.values())
    queries = {key: _COMMAND.match(key) for key in r.capture.commands}
    ran = {key: m for key, m in queries.items() if m is not None}
    # A probe told to leave the network out (install's, --no-network) read no port at all.
    skipped = r.capture.options.get("network") is False
    facts = NetworkFacts(captured=bool(tool_paths or ran) and not skipped)
    facts.hccn_tool = any(info.exists for info in tool_paths) or any(
        r.capture.commands[key].rc != 127 for key in ran)
    facts.hccn_tool_path = next((path for path, info in found.items() if info.exists), None)
    text = r.file(HCCN_CONF)
    if text is not None:
        facts.hccn_conf = parse_hccn_conf(text)
    elif any(e.where == HCCN_CONF for e in r.capture.errors):
        facts.hccn_conf = HccnConf(present=True, readable=False)
    elif facts.captured:
        facts.hccn_conf = HccnConf()
    for key, match in sorted(ran.items(), key=lambda item: int(item[1].group(1))):
        device = int(match.group(1))
        network = facts.devices.setdefault(device, DeviceNetwork(device=device))
        result = r.capture.commands[key]
        output = "\n".join(part for part in (result.stdout, result.stderr) if part.strip())
        if not _device(network, match.group(2), output):
            network.unparsed[key] = output.strip() or f"exit status {result.rc}"
    addr = r.capture.commands.get(probe.IP_ADDR)
    if addr is not None and addr.ok:
        facts.nics_captured = True
        nics, odd = _ip_addr(addr.stdout)
        states = parse_ip_link(r.output(probe.IP_LINK) or "")
        for name in states:
            if name not in {nic.name for nic in nics}:
                nics.append(HostNic(name=name))
        for nic in nics:
            nic.state = states.get(nic.name, nic.state)
        facts.nics = nics
        r.notes.extend(f"{probe.IP_ADDR}: line not understood: {line!r}" for line in odd)
    superpod.read_superpod(r, facts)
    return facts


# Parsers by the folder name of their samples under tests/data/.
PARSERS: dict[str, Callable[[Any], Any]] = {
    "hccn_conf": parse_hccn_conf,
    "hccn_ip": parse_hccn_ip,
    "hccn_link": parse_hccn_link,
    "hccn_link_stat": parse_hccn_link_stat,
    "hccn_net_health": parse_hccn_net_health,
    "hccn_netdetect": parse_hccn_netdetect,
    "hccn_gateway": parse_hccn_gateway,
    "hccn_optical": parse_hccn_optical,
    "hccn_lldp": parse_hccn_lldp,
    "hccn_tls": parse_hccn_tls,
    "ip_addr": parse_ip_addr,
    "ip_link": parse_ip_link,
}
