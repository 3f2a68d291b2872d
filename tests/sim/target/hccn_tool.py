#!/usr/bin/python3 -S
"""Fake hccn_tool: the NPUs' RoCE ports of a simulated host, answered from the fleet's fabric.

The fake driver installs this file as <install path>/driver/tools/hccn_tool; every call
reads the ports afresh. Only the standard library. The ports' settings live in the
fleet-shared fabric folder (/var/lib/ascend-sim/fabric/<host>.json, one file per host,
bind-mounted into every host of a fleet), so a ping can see the other hosts' ports; the
setters also rewrite /etc/hccn.conf, as the real tool persists its settings there.

Output shapes, as the real tool prints them:
- Huawei's open-sourced hccn_tool source: its print list g_uda_dsmi_err_list ("Get ipconf
  failed, because no ip was preset there!", "Get gateway failed, because no gateway was preset
  there!", "The device is not exist!"), https://github.com/hicann/driver/blob/ef377e950a32b1641c108c59481e39e9643b7d63/src/custom/network/hccn/ascend910B/hccn_tool/cmd.c;
  and the ping code ("device %d PING %s" then the reply lines, an error when they hold "recv
  time out seq"), https://github.com/hicann/driver/blob/ef377e950a32b1641c108c59481e39e9643b7d63/src/custom/network/hccn/ascend910B/hccn_product_ext/ds_net_ext.c.
- Multi-node guides quoting the answers: `ipaddr:10.86.1.80` / `netmask:255.255.255.0`,
  `link status: UP`, `net health status: Success` (an Ascend P2P connector guide);
  `default gateway:11.12.165.1, Iface:eth0`, `netdetect address: 11.12.165.1`, the `-tls -g`
  switch line and the `-lldp -g` `Ifname:` line (tests/data/hccn_*/ name their pages);
  a ping reply block `device 0 PING 10.10.100.10` / `recv seq=0,time=0.067000ms` /
  `3 packets transmitted, 3 received, 0.00% packet loss`, and `recv time out seq=0` for a lost
  packet (an ATB-Models inference guide). Those two guides were found through a code search
  index; their repositories were not recorded and could not be found again.
- `-hccs_ping -g sdid S` (A3 SuperPoD, over HCCS to the die with that SDID): Huawei's
  open-sourced hccn_tool (tool_ping_printf in hccn_product_ext/tool_cmd.c) prints "device %d PING
  %s" (the peer's vNIC address), per packet "This pkt ping success!" or "This pkt send fail!"
  and `recv seq N, time = T.TTTus, L1 plane check result = 0x0`, then `N packets transmitted,
  M received, X.XX% packets loss` and max/min/average/TP95 times. The vNIC address (made
  from the SDID here) and the default of 3 packets are ours.
- `-link_stat -g`: `[devid N]current time        : <ctime>`, `link up count`, `link down
  count`, `link change records :` and one `[devid N]    <ctime>    LINK UP|DOWN` line per
  change, newest first, as an HCCL troubleshooting page quotes it (tests/data/hccn_link_stat/).
"""

from __future__ import annotations

import json
import os
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    # An address in the fleet's fabric: the host, device index and port that hold it.
    Holder = tuple[str, int, dict[str, Any]]

STATE = "/var/lib/ascend-sim/state.json"
FABRIC = "/var/lib/ascend-sim/fabric"
HCCN_CONF = "/etc/hccn.conf"
CONF_KEYS = ("address", "netmask", "netdetect", "gateway", "send_arp_status")
NO_DEVICE = "The device is not exist!"
USAGE = "Usage: hccn_tool -i <devid> -<cmd> [-s|-g] ... (see hccn_tool -h)"
OPTICAL = ("present              : present\n"
           "vendor_name          : HUAWEI\n"
           "vendor_pn            : 34061596\n"
           "temperature          : 41 C\n"
           "Tx Power             : 1.1530 mW 1.1840 mW 1.1620 mW 1.1740 mW\n"
           "Rx Power             : 0.9310 mW 0.9130 mW 0.9420 mW 0.9280 mW\n")


def _load(path: str) -> dict[str, Any]:
    with open(path, encoding="utf-8") as fh:
        data: dict[str, Any] = json.load(fh)
    return data


def _host() -> str:
    return str(_load(STATE).get("host") or "localhost")


def _devices() -> list[int]:
    state = _load(STATE)
    per = int(state.get("chips_per_npu", 1))
    return sorted(n["device_base"] + c for n in state["npus"] for c in range(per)
                  if n.get("fault") != "missing")


def fabric_path(host: str) -> str:
    return os.path.join(FABRIC, host + ".json")


def load_ports(host: str) -> dict[str, Any]:
    try:
        return _load(fabric_path(host))
    except FileNotFoundError:
        return {"schema": "ascend-env-sim/fabric/v1", "host": host, "devices": {}}


def save_ports(host: str, data: dict[str, Any]) -> None:
    os.makedirs(FABRIC, exist_ok=True)
    tmp = f"{fabric_path(host)}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2, sort_keys=True)
    os.replace(tmp, fabric_path(host))


def port(data: dict[str, Any], device: int) -> dict[str, Any]:
    found: dict[str, Any] = data["devices"].setdefault(str(device), {
        "address": None, "netmask": None, "gateway": None, "netdetect": None, "link": "UP",
        "flapping": False, "health": "Success", "drop_pings_from": [], "link_up": 1,
        "link_down": 0, "tls": 0})
    return found


def conf_text(data: dict[str, Any]) -> str:
    """/etc/hccn.conf as the real tool keeps it: `<key>_<device>=<value>` lines."""
    lines = []
    for dev in sorted(data["devices"], key=int):
        p = data["devices"][dev]
        for key in CONF_KEYS:
            value = p.get(key) if key != "send_arp_status" else (
                "1" if p.get("address") else None)
            if value:
                lines.append(f"{key}_{dev}={value}")
    return "".join(line + "\n" for line in lines)


def write_conf(data: dict[str, Any]) -> None:
    tmp = HCCN_CONF + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(conf_text(data))
    os.replace(tmp, HCCN_CONF)


def _fail(message: str, code: int = 1) -> int:
    sys.stdout.write(message + "\n")
    return code


def _link(p: dict[str, Any]) -> str:
    return str(p.get("link") or "DOWN")


def get(cmd: str, device: int, p: dict[str, Any], data: dict[str, Any]) -> int:
    code, text = answer(cmd, device, p, data)
    sys.stdout.write(text)
    return code


def answer(cmd: str, device: int, p: dict[str, Any], data: dict[str, Any]) -> tuple[int, str]:
    """A getter's exit code and output."""
    lines: list[str] = []
    out = lines.append
    if cmd == "-ip":
        if not p.get("address"):
            return 1, "Get ipconf failed, because no ip was preset there!\n"
        out("ipaddr:{}\nnetmask:{}\n".format(p["address"], p.get("netmask") or "255.255.255.0"))
    elif cmd == "-link":
        if p.get("flapping"):
            # A flapping port answers UP or DOWN by the moment it is asked.
            p["link"] = "DOWN" if p.get("link") == "UP" else "UP"
            p["link_up" if p["link"] == "UP" else "link_down"] = \
                p.get("link_up" if p["link"] == "UP" else "link_down", 0) + 1
            save_ports(data["host"], data)
        out(f"link status: {_link(p)}\n")
    elif cmd == "-link_stat":
        now = time.ctime()
        tag = f"[devid {device}]"
        out(f"{tag}current time        : {now}\n")
        out(f"{tag}link up count       : {p.get('link_up', 1)}\n")
        out(f"{tag}link down count     : {p.get('link_down', 0)}\n")
        out(f"{tag}link change records :\n")
        out(f"{tag}    {now}    LINK {_link(p)}\n")
    elif cmd == "-net_health":
        out("net health status: {}\n".format(p.get("health", "Success")))
    elif cmd == "-netdetect":
        if not p.get("netdetect"):
            # Nothing set: the real tool prints the stored address, zero
            # (tests/data/hccn_netdetect/unset).
            out("netdetect address: 0.0.0.0\n")
        else:
            out("netdetect address: {}\n".format(p["netdetect"]))
    elif cmd == "-gateway":
        if not p.get("gateway"):
            return 1, "Get gateway failed, because no gateway was preset there!\n"
        out(f"default gateway:{p['gateway']}, Iface:eth{device}\n")
    elif cmd == "-optical":
        out(OPTICAL)
    elif cmd == "-lldp":
        out(f"\tIfname: 400GE1/1/{device + 1}:1\n")
    elif cmd == "-tls":
        out(f"dev_id:{device}, tls switch[{int(p.get('tls', 0))}](0:disable, 1:enable), "
            "tls preconfigured[1](0:non-preset, 1:preset), tls alarm time threshold[60]days\n")
    else:
        return 2, USAGE + "\n"
    return 0, "".join(lines)


def fabric_files() -> list[str]:
    names = sorted(os.listdir(FABRIC) if os.path.isdir(FABRIC) else [])
    return [os.path.join(FABRIC, name) for name in names if name.endswith(".json")]


def fleet_ports(*keys: str) -> list[dict[str, Holder]]:
    """Per key (a port's "address", or an A3 die's "sdid"), every port of the fleet's fabric
    that has one, by its value; the fabric is read once for all keys."""
    found: list[dict[str, Holder]] = [{} for _ in keys]
    for path in fabric_files():
        other = _load(path)
        for device, q in other.get("devices", {}).items():
            for index, key in zip(found, keys, strict=True):
                if q.get(key):
                    index[str(q[key])] = (other["host"], int(device), q)
    return found


def ping_answer(device: int, p: dict[str, Any], args: list[str], host: str,
                fleet: dict[str, Holder]) -> tuple[int, str, float]:
    """A ping's exit status, output and the time its packets take on the wire."""
    values = _values(args)
    target = values.get("address")
    count = int(values.get("pkt", "3"))
    if not target:
        return 2, USAGE + "\n", 0.0
    if not p.get("address"):
        return 1, "Get ipconf failed, because no ip was preset there!\n", 0.0
    peer = fleet.get(target)
    answered = (peer is not None and _link(p) == "UP" and _link(peer[2]) == "UP"
                and host not in peer[2].get("drop_pings_from", []))
    lines = [f"device {device} PING {target}\n"]
    for seq in range(count):
        lines.append(f"recv seq={seq},time=0.0{4 + seq % 3}7000ms\n" if answered
                     else f"recv time out seq={seq}\n")
    got = count if answered else 0
    loss = 100.0 * (count - got) / count
    lines.append(f"{count} packets transmitted, {got} received, {loss:.2f}% packet loss\n")
    # One round of `count` packets on the wire.
    return (0 if answered else 1), "".join(lines), float(p.get("ping_delay_s", 0.2))


def hccs_answer(device: int, p: dict[str, Any], args: list[str], host: str,
                dies: dict[str, Holder]) -> tuple[int, str, float]:
    """An HCCS ping to a die by its SDID (`dies`: by SDID, fleet_ports): it answers from the
    same super pod only."""
    values = _values(args)
    sdid, count = values.get("sdid", ""), values.get("cnt", "3")
    if not sdid.isdigit() or not count.isdigit() or "address" in values:
        return 2, USAGE + "\n", 0.0
    peer = dies[sdid][2] if sdid in dies else None
    answered = (peer is not None and p.get("super_pod_id") == peer.get("super_pod_id")
                and host not in peer.get("drop_pings_from", []))
    number = int(sdid)
    lines = [f"device {device} PING 192.24.{(number >> 24) & 0xFF}.{(number >> 16) & 0xFF}\n\n"]
    for seq in range(int(count)):
        lines.append("This pkt ping success!\n" if answered else "This pkt send fail!\n")
        lines.append(f"recv seq {seq}, time = {3 + seq % 2}.512us, L1 plane check result = "
                     "0x0\n\n")
    got = int(count) if answered else 0
    loss = 100.0 * (int(count) - got) / max(1, int(count))
    lines.append(f"{count} packets transmitted, {got} received, {loss:.2f}% packets loss\n")
    for what in ("max", "min", "average", "TP95"):
        lines.append(f"{what} time {'3.512' if answered else '0.000'}us\n")
    return 0, "".join(lines), float(p.get("ping_delay_s", 0.2))


def ping(device: int, p: dict[str, Any], args: list[str], host: str, via: str = "-ping") -> int:
    if via == "-hccs_ping":
        code, text, wait = hccs_answer(device, p, args, host, *fleet_ports("sdid"))
    else:
        code, text, wait = ping_answer(device, p, args, host, *fleet_ports("address"))
    time.sleep(wait)
    sys.stdout.write(text)
    return code


def _values(args: list[str]) -> dict[str, str]:
    return {args[i]: args[i + 1] for i in range(0, len(args) - 1, 2)}


def set_(cmd: str, p: dict[str, Any], args: list[str], data: dict[str, Any]) -> int:
    values = _values(args)
    if cmd == "-ip" and "address" in values and "netmask" in values:
        p["address"], p["netmask"] = values["address"], values["netmask"]
    elif cmd == "-gateway" and "gateway" in values:
        p["gateway"] = values["gateway"]
    elif cmd == "-netdetect" and "address" in values:
        p["netdetect"] = values["address"]
    elif cmd == "-link" and args[:1] in (["up"], ["down"]):
        p["link"] = args[0].upper()
    elif cmd == "-tls" and "enable" in values:
        p["tls"] = int(values["enable"])
    else:
        return _fail(USAGE, 2)
    save_ports(data["host"], data)
    write_conf(data)
    return 0


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[0] != "-i" or not argv[1].isdigit():
        return _fail(USAGE, 2)
    device, cmd, rest = int(argv[1]), argv[2], argv[3:]
    if device not in _devices():
        return _fail(NO_DEVICE)
    host = _host()
    data = load_ports(host)
    data["host"] = host
    p = port(data, device)
    if cmd in ("-ping", "-hccs_ping") and rest[:1] == ["-g"]:
        return ping(device, p, rest[1:], host, cmd)
    if rest[:1] == ["-g"]:
        return get(cmd, device, p, data)
    if rest[:1] == ["-s"]:
        return set_(cmd, p, rest[1:], data)
    return _fail(USAGE, 2)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
