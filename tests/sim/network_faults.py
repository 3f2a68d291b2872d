"""Switch NPU network faults on a simulated host (read by its fake hccn_tool).

Each fault changes one port's settings in the fleet's fabric (tests/sim/network.py), and
/etc/hccn.conf only where the real fault would (a port whose address was never set has no
`address_N` line). `network-clear` puts the host's ports back to the by-the-book plan.
"""

from __future__ import annotations

from pathlib import Path

from tests.sim import hardware, network
from tests.sim.layout import SimError

NETWORK_FAULTS = ("link-down", "link-flapping", "net-fault", "no-address", "duplicate-address",
                  "wrong-subnet", "ping-drop", "server-index-clash", "network-clear")


def apply(fabric: Path, root: Path, host: str, fault: str, *, device: int = 0,
          peer: str | None = None) -> str:
    """Set `fault` on `device` of `host` (whose root is `root`).

    `peer` names the other host for `duplicate-address` (this device takes the peer's
    same-index address), `ping-drop` (this device stops answering pings from the peer) and
    `server-index-clash` (an A3 host takes the peer's server index in the super pod, as a
    server id left wrong after a board replacement: its dies' SDIDs clash with the peer's).
    """
    if fault not in NETWORK_FAULTS:
        raise SimError(f"unknown network fault {fault!r}; choose one of "
                       f"{', '.join(NETWORK_FAULTS)}")
    if fault in ("duplicate-address", "ping-drop", "server-index-clash") and not peer:
        raise SimError(f"{fault} needs the other host (--peer HOST)")
    if fault == "server-index-clash":
        assert peer is not None
        return network.set_server_index(fabric, root, host, int(peer.removeprefix("sim")))
    data = network.read_ports(fabric, host)
    if fault == "network-clear":
        index = int(host.removeprefix("sim"))
        data["devices"] = {d: network.planned_port(index, int(d)) for d in data["devices"]}
        network.write_ports(fabric, data)
        network.write_hccn_conf(root, data)
        if hardware.state_path(root).exists():  # not so for a fabric-only host (unit tests)
            network.set_server_index(fabric, root, host, index)
        return f"{host}: ports back to the plan"
    port = data["devices"].get(str(device))
    if port is None:
        raise SimError(f"{host} has no device {device} (devices: "
                       f"{', '.join(sorted(data['devices'], key=int))})")
    conf_follows = False  # whether hccn.conf changes too (a setter ran on the host)
    if fault == "link-down":
        port["link"] = "DOWN"
        port["link_down"] = port.get("link_down", 0) + 1
    elif fault == "link-flapping":
        port["flapping"] = True
        port["link_down"] = port.get("link_down", 0) + 5
        port["link_up"] = port.get("link_up", 0) + 5
    elif fault == "net-fault":
        port["health"] = "Fault"
    elif fault == "no-address":
        port["address"] = port["netmask"] = None
        conf_follows = True
    elif fault == "duplicate-address":
        assert peer is not None
        theirs = network.read_ports(fabric, peer)["devices"].get(str(device))
        if theirs is None or not theirs.get("address"):
            raise SimError(f"{peer} device {device} has no address to duplicate")
        port["address"] = theirs["address"]
        conf_follows = True
    elif fault == "wrong-subnet":
        # The same host part in a subnet none of the device's peers is in (a typo in the
        # third octet's plan): no other port gets a duplicate by it.
        host_part = str(port.get("address") or "10.20.0.99").split(".")[-1]
        port["address"] = f"10.21.{device}.{host_part}"
        conf_follows = True
    elif fault == "ping-drop":
        assert peer is not None
        port["drop_pings_from"] = sorted({*port.get("drop_pings_from", []), peer})
    network.write_ports(fabric, data)
    if conf_follows:
        network.write_hccn_conf(root, data)
    return f"{host} device {device}: {fault}" + (f" ({peer})" if peer else "")
