"""The fake hccn_tool prints what the real one prints, and its fabric joins a fleet's hosts.

In-process tests point the fake at a temporary state and fabric; the fleet tests run it over
ssh on simulated hosts, as the probe and the fix do.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ascend_env.facts import network as parse
from tests.sim import hardware, network, network_faults
from tests.sim.chips import CHIPS
from tests.sim.fixtures import FleetFactory, SimFleet
from tests.sim.target import hccn_tool

pytestmark = pytest.mark.sim
DATA = Path(__file__).parents[1] / "data"


def real(folder: str, name: str) -> str:
    return (DATA / folder / f"{name}.txt").read_text()


@pytest.fixture
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A state file of 2 NPUs and a fabric with host sim1 configured by the book."""
    state = hardware.initial_state(CHIPS["910b"], 2)
    state["host"] = "sim1"
    (tmp_path / "state.json").write_text(json.dumps(state))
    fabric = tmp_path / "fabric"
    fabric.mkdir()
    network.write_ports(fabric, {"schema": network.FABRIC_SCHEMA, "host": "sim1", "devices": {
        str(d): network.planned_port(1, d) for d in (0, 1)}})
    network.write_ports(fabric, {"schema": network.FABRIC_SCHEMA, "host": "sim2", "devices": {
        str(d): network.planned_port(2, d) for d in (0, 1)}})
    monkeypatch.setattr(hccn_tool, "STATE", str(tmp_path / "state.json"))
    monkeypatch.setattr(hccn_tool, "FABRIC", str(fabric))
    (tmp_path / "etc").mkdir()
    monkeypatch.setattr(hccn_tool, "HCCN_CONF", str(tmp_path / network.HCCN_CONF_REL))
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = hccn_tool.main(list(argv))
    return code, capsys.readouterr().out


def test_answers_have_the_real_shapes(host: Path, capsys: pytest.CaptureFixture[str]) -> None:
    del host
    code, out = run(capsys, "-i", "0", "-ip", "-g")
    assert code == 0 and out == "ipaddr:10.20.0.11\nnetmask:255.255.255.0\n"
    # Each answer has the shape of the real sample of its folder, line for line.
    assert run(capsys, "-i", "0", "-link", "-g")[1] == real("hccn_link", "up")
    assert run(capsys, "-i", "0", "-net_health", "-g")[1] == real("hccn_net_health", "success")
    assert parse.parse_hccn_netdetect(run(capsys, "-i", "1", "-netdetect", "-g")[1]) == \
        "10.20.1.1"
    gateway = run(capsys, "-i", "1", "-gateway", "-g")[1]
    assert parse.parse_hccn_gateway(gateway) == {"gateway": "10.20.1.1", "iface": "eth1"}
    assert gateway.split(":", 1)[0] == real("hccn_gateway", "deepseek-910b3").split(":", 1)[0]
    tls = run(capsys, "-i", "0", "-tls", "-g")[1]
    assert tls.split("switch")[1] == real("hccn_tls", "deepseek-switch-line").split("switch")[1]
    assert parse.parse_hccn_lldp(run(capsys, "-i", "0", "-lldp", "-g")[1]) == \
        {"Ifname": "400GE1/1/1:1"}
    optical = parse.parse_hccn_optical(run(capsys, "-i", "0", "-optical", "-g")[1])
    assert optical is not None and optical["present"] == "present"
    assert parse.parse_hccn_link_stat(run(capsys, "-i", "0", "-link_stat", "-g")[1]) == \
        {"up": 1, "down": 0}
    code, out = run(capsys, "-i", "5", "-ip", "-g")
    assert code != 0 and out == "The device is not exist!\n"


def test_a_bare_port_answers_as_the_real_tool(host: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """A port set up by nobody: its detect address prints as the real tool prints an unset one."""
    network.write_ports(host / "fabric", {"schema": network.FABRIC_SCHEMA, "host": "sim1",
                                          "devices": {"0": network.bare_port()}})
    assert run(capsys, "-i", "0", "-netdetect", "-g")[1] == real("hccn_netdetect", "unset")


def test_setters_persist_to_the_fabric_and_hccn_conf(
        host: Path, capsys: pytest.CaptureFixture[str]) -> None:
    network_faults.apply(host / "fabric", host, "sim1", "no-address", device=1)
    code, out = run(capsys, "-i", "1", "-ip", "-g")
    assert code != 0 and out == real("hccn_ip", "not-preset")
    assert run(capsys, "-i", "1", "-ip", "-s", "address", "10.20.1.11", "netmask",
               "255.255.255.0")[0] == 0
    assert run(capsys, "-i", "1", "-ip", "-g")[1] == "ipaddr:10.20.1.11\nnetmask:255.255.255.0\n"
    conf = parse.parse_hccn_conf((host / network.HCCN_CONF_REL).read_text())
    assert conf.devices[1] == {"address": "10.20.1.11", "netmask": "255.255.255.0",
                               "netdetect": "10.20.1.1", "gateway": "10.20.1.1",
                               "send_arp_status": "1"}
    assert not conf.unparsed


def test_ping_answers_from_the_fabric(host: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fabric = host / "fabric"
    code, out = run(capsys, "-i", "0", "-ping", "-g", "address", "10.20.0.12")
    assert code == 0
    assert out.splitlines()[0] == "device 0 PING 10.20.0.12"
    assert out.splitlines()[-1] == "3 packets transmitted, 3 received, 0.00% packet loss"
    network_faults.apply(fabric, host, "sim2", "ping-drop", device=0, peer="sim1")
    code, out = run(capsys, "-i", "0", "-ping", "-g", "address", "10.20.0.12", "pkt", "1")
    assert code != 0
    assert out.splitlines()[1:] == ["recv time out seq=0",
                                    "1 packets transmitted, 0 received, 100.00% packet loss"]
    network_faults.apply(fabric, host, "sim2", "network-clear")
    network_faults.apply(fabric, host, "sim1", "link-down", device=0)
    assert run(capsys, "-i", "0", "-ping", "-g", "address", "10.20.0.12")[0] != 0
    assert run(capsys, "-i", "0", "-link", "-g")[1] == real("hccn_link", "down")


def test_a_ping_waits_its_wire_time(host: Path, capsys: pytest.CaptureFixture[str],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # A ping answers after its packets' round on the wire (the fabric's ping_delay_s), as the
    # network benchmark's level-2 matrix counts on; other queries answer at once.
    waits: list[float] = []
    monkeypatch.setattr("time.sleep", waits.append)
    code, out = run(capsys, "-i", "0", "-ping", "-g", "address", "10.20.0.12", "pkt", "1")
    assert code == 0 and "1 received, 0.00% packet loss" in out
    assert run(capsys, "-i", "0", "-ip", "-g")[0] == 0
    assert waits == [0.2]


def test_flapping_link_counts_its_changes(host: Path, capsys: pytest.CaptureFixture[str]) -> None:
    network_faults.apply(host / "fabric", host, "sim1", "link-flapping", device=1)
    seen = {run(capsys, "-i", "1", "-link", "-g")[1] for _ in range(2)}
    assert seen == {"link status: UP\n", "link status: DOWN\n"}
    counts = parse.parse_hccn_link_stat(run(capsys, "-i", "1", "-link_stat", "-g")[1])
    assert counts is not None and counts["down"] >= 5


@pytest.mark.slow
def test_a_fleet_pings_across_hosts(sim_fleet_factory: FleetFactory) -> None:
    fleet: SimFleet = sim_fleet_factory(hosts=2, state="provisioned")
    tool = "/usr/local/Ascend/driver/tools/hccn_tool"
    assert "address_3=10.20.3.11" in fleet.ssh("sim1", "cat /etc/hccn.conf").stdout
    res = fleet.ssh("sim1", f"{tool} -i 3 -ping -g address 10.20.3.12 pkt 1")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "1 received, 0.00% packet loss" in res.stdout
    try:
        fleet.network_fault("sim2", "ping-drop", device=3, peer="sim1")
        res = fleet.ssh("sim1", f"{tool} -i 3 -ping -g address 10.20.3.12 pkt 1")
        assert res.returncode != 0 and "recv time out seq=0" in res.stdout
        # sim2's other peers still get answers: the fault is from one named host only.
        assert fleet.ssh("sim2", f"{tool} -i 3 -ping -g address 10.20.3.11 pkt 1").returncode == 0
    finally:
        fleet.network_fault("sim2", "network-clear")
