"""The simulated NPU network of a fleet: one fabric folder shared by every host.

Real RoCE ports of different hosts reach each other over the cluster's switches; simulated
hosts are chroots that cannot see each other's files. So each fleet has a fabric folder
(<fleet base>/fabric/, one `<host>.json` per host with its ports' settings) bind-mounted into
every host root at /var/lib/ascend-sim/fabric; the fake hccn_tool (target/hccn_tool.py) reads
and writes it, and a ping looks the peer address up there.

Provisioned hosts come up configured as a fleet set up by the book: host k (1-based) gets
10.20.<i>.<10+k>/24 on device i, gateway and detect address 10.20.<i>.1.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.sim import hardware
from tests.sim.layout import SimError
from tests.sim.target import hccn_tool, npu_smi

FABRIC_REL = Path("var/lib/ascend-sim/fabric")
FABRIC_SCHEMA = "ascend-env-sim/fabric/v1"
HCCN_CONF_REL = Path("etc/hccn.conf")
FIRST_HOST = 11  # host k's address ends in 10 + k, like its 127.0.0.<10 + k> ssh address


def fabric_dir(fleet_base: Path) -> Path:
    return fleet_base / "fabric"


def devices_of(root: Path) -> list[int]:
    """Logical device ids of a host: what its /dev/davinci<N> nodes are numbered."""
    state = hardware.read_state(root)
    per = int(state.get("chips_per_npu", 1))
    return sorted(n["device_base"] + c for n in state["npus"] for c in range(per))


def planned_port(host_index: int, device: int) -> dict[str, Any]:
    """The by-the-book settings of device `device` on the fleet's host number `host_index`."""
    return {"address": f"10.20.{device}.{FIRST_HOST - 1 + host_index}",
            "netmask": "255.255.255.0", "gateway": f"10.20.{device}.1",
            "netdetect": f"10.20.{device}.1", "link": "UP", "flapping": False,
            "health": "Success", "drop_pings_from": [], "link_up": 1, "link_down": 0, "tls": 0}


def bare_port() -> dict[str, Any]:
    return {"address": None, "netmask": None, "gateway": None, "netdetect": None, "link": "UP",
            "flapping": False, "health": "Init", "drop_pings_from": [], "link_up": 1,
            "link_down": 0, "tls": 0}


def ports_path(fabric: Path, host: str) -> Path:
    return fabric / f"{host}.json"


def read_ports(fabric: Path, host: str) -> dict[str, Any]:
    p = ports_path(fabric, host)
    if not p.exists():
        raise SimError(f"{p} missing: host {host!r} has no ports in this fabric")
    data: dict[str, Any] = json.loads(p.read_text())
    return data


def write_ports(fabric: Path, data: dict[str, Any]) -> None:
    p = ports_path(fabric, data["host"])
    tmp = p.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    tmp.replace(p)


def render_hccn_conf(data: dict[str, Any]) -> str:
    """/etc/hccn.conf for these ports, as the fake hccn_tool itself writes it."""
    return hccn_tool.conf_text(data)


def write_hccn_conf(root: Path, data: dict[str, Any]) -> None:
    conf = root / HCCN_CONF_REL
    if not any(p.get("address") for p in data["devices"].values()):
        conf.unlink(missing_ok=True)  # a host never configured has no hccn.conf
        return
    conf.write_text(render_hccn_conf(data))


def sdid_of(server_index: int, device: int) -> int:
    """A die's SDID here: unique per die and server in a pod, shaped like the real ones (2^24
    and up, multiples of 2^16). Ours: the vendor's encoding is not public."""
    return (1 << 24) + ((server_index * 16 + device) << 16)


def set_server_index(fabric: Path, root: Path, host: str, host_index: int) -> str:
    """An A3 host's place in the fleet's SuperPoD: host k is server k - 1 of pod 0 (a pod of
    384 dies, as hicann/shmem's spod-info example prints). Its dies' SDIDs go to its state
    (the fake npu-smi prints them) and to its ports in the fabric (the fake hccn_tool's HCCS
    pings find a peer by them). Other chips have none."""
    state = hardware.read_state(root)
    if not npu_smi.phy_id_column(state):  # only A3's dies (a Phy-ID each) have SDIDs
        return f"{host}: not an A3 host, no super pod"
    server = host_index - 1
    sdids = {str(d): sdid_of(server, d) for d in devices_of(root)}
    state["superpod"] = {"super_pod_id": 0, "size": 384, "server_index": server,
                         "sdids": sdids}
    hardware.write_state(root, state)
    data = read_ports(fabric, host)
    for device, port in data["devices"].items():
        port["sdid"], port["super_pod_id"] = sdids.get(device), 0
    write_ports(fabric, data)
    return f"{host}: server index {server} of super pod 0"


def attach(root: Path, fabric: Path, host: str, host_index: int, configured: bool) -> None:
    """Give a host root its name, its ports in the fabric and the fabric mounted inside."""
    state = hardware.read_state(root)
    state["host"] = host
    hardware.write_state(root, state)
    fabric.mkdir(parents=True, exist_ok=True)
    data = {"schema": FABRIC_SCHEMA, "host": host,
            "devices": {str(d): planned_port(host_index, d) if configured else bare_port()
                        for d in devices_of(root)}}
    write_ports(fabric, data)
    set_server_index(fabric, root, host, host_index)
    inside = root / FABRIC_REL
    inside.mkdir(parents=True, exist_ok=True)
    res = subprocess.run(["mount", "--bind", str(fabric), str(inside)],
                         capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise SimError(f"mounting the fabric in {root} failed: {res.stderr.strip()}")
    if configured:
        write_hccn_conf(root, data)
