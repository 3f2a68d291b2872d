"""The spec's `network` and `hccl` sections: shape, fit to the devices, and the plan they give."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ascend_env.core.errors import EXIT_NOT_RIGHT, SpecError, UsageError
from ascend_env.spec.envspec import EnvSpec, build_spec, load_spec, profile_names
from ascend_env.spec.network_plan import PlanError, PlannedAddress, device_address, plan_for
from ascend_env.spec.validate import validate_file

DATA = Path(__file__).resolve().parents[1] / "data"
EXAMPLES = DATA / "spec_network"
SUBNETS = [f"10.20.{i}.0/24" for i in range(8)]
SIM_PLAN = {"subnets": SUBNETS, "first_host": 11}


def spec(**sections: Any) -> EnvSpec:
    return build_spec({"extends": "910b", "name": "t", **sections}, "test")


def problems(**sections: Any) -> str:
    with pytest.raises(SpecError) as info:
        spec(**sections)
    return str(info.value)


def hosts_plan(**over: Any) -> dict[str, Any]:
    plan = {"hosts": {"a": [f"192.168.{i}.1" for i in range(8)],
                      "b": [f"192.168.{i}.2" for i in range(8)]},
            "netmask": "255.255.255.0", "gateway": "none", "netdetect": "none"}
    return {**plan, **over}


def test_the_simulated_fleets_plan() -> None:
    """tests/sim's provisioned hosts: host k, device i -> 10.20.i.(10+k), gw/detect 10.20.i.1."""
    network = spec(network=SIM_PLAN).network
    assert network is not None
    assert device_address(network, 3, "sim3", 5) == PlannedAddress(
        "10.20.5.13", "255.255.255.0", "10.20.5.1", "10.20.5.1")
    names = ["sim1", "sim2", "sim3", "sim4"]
    plan = plan_for(network, names, 8)
    assert list(plan) == names
    for k, name in enumerate(names, start=1):
        for i in range(8):
            assert plan[name][i] == PlannedAddress(f"10.20.{i}.{10 + k}", "255.255.255.0",
                                                   f"10.20.{i}.1", f"10.20.{i}.1")
    assert plan_for(network, names, 8) == plan  # deterministic
    # Numbering follows the inventory's order, not the names.
    assert plan_for(network, ["sim2", "sim1"], 8)["sim2"][0].address == "10.20.0.11"


def test_the_example_spec_files(tmp_path: Path) -> None:
    loaded = load_spec(path=EXAMPLES / "sim-fleet.yaml")
    assert plan_for(loaded, ["sim1", "sim2"], 8)["sim2"][7] == PlannedAddress(
        "10.20.7.12", "255.255.255.0", "10.20.7.1", "10.20.7.1")
    assert loaded.hccl.if_ip_policy == "per-host"
    result = validate_file(EXAMPLES / "sim-fleet.yaml")
    assert result.valid, [p.render() for p in result.problems]
    pairs = load_spec(path=EXAMPLES / "atlas800-pairs.yaml")
    server1 = plan_for(pairs, ["server0", "server1"], 8)["server1"]
    assert [server1[d].address for d in (0, 4)] == ["192.168.100.111", "192.168.100.110"]
    assert server1[0] == PlannedAddress("192.168.100.111", "255.255.255.0", None, None)


def test_per_index_subnets_cannot_pair_devices() -> None:
    """Atlas 800's 0/4 pairs share a subnet: per-index subnets refuse it and point at `hosts`."""
    paired = [f"192.168.{100 + i % 4}.0/24" for i in range(8)]
    assert "list addresses with `hosts`" in problems(network={"subnets": paired})


def test_a_real_hccn_conf_plan_is_expressible() -> None:
    """The real /etc/hccn.conf in tests/data/hccn_conf (all 8 ports of a host in one /16, one
    gateway and detect address for all) written as a `hosts` plan gives the file's values."""
    real = json.loads((DATA / "hccn_conf" / "rdma-notes-8npu-elided.expected.json").read_text())
    devices = real["devices"]
    # The source elides devices 1-6; their addresses here are made up inside the same /16.
    addresses = [devices["0"]["address"], *(f"29.1.140.{i}" for i in range(1, 7)),
                 devices["7"]["address"]]
    network = spec(network={"hosts": {"node": addresses}, "netmask": "255.255.0.0",
                            "gateway": "29.1.0.1", "netdetect": "gateway"}).network
    assert network is not None
    plan = plan_for(network, ["node"], 8)["node"]
    for index in ("0", "7"):
        want = devices[index]
        assert plan[int(index)] == PlannedAddress(want["address"], want["netmask"],
                                                  want["gateway"], want["netdetect"])


def test_explicit_addresses_per_host() -> None:
    network = spec(network=hosts_plan()).network
    assert network is not None
    assert plan_for(network, ["a", "b"], 8)["b"][3] == PlannedAddress(
        "192.168.3.2", "255.255.255.0", None, None)
    assert plan_for(network, ["b"], 8)["b"][0].address == "192.168.0.2"  # --limit b
    with pytest.raises(UsageError, match=r"network\.hosts: no entry for host 'c'"):
        plan_for(network, ["a", "c"], 8)
    gateways = [f"192.168.{i}.254" for i in range(8)]
    network = spec(network=hosts_plan(gateway=gateways, netdetect="gateway")).network
    assert network is not None
    assert plan_for(network, ["a"], 8)["a"][6] == PlannedAddress(
        "192.168.6.1", "255.255.255.0", "192.168.6.254", "192.168.6.254")


@pytest.mark.parametrize(("network", "where", "words"), [
    ({"subnets": ["10.0.0.0/16", "10.0.1.0/24"]}, "network.subnets", "overlap"),
    ({"subnets": ["10.0.0.1/24"]}, "network.subnets", "not an IPv4 subnet"),
    ({"subnets": ["10.0.0.0/31"]}, "network.subnets", "holds no address"),
    ({"subnets": SUBNETS[:6]}, "network.subnets", "6 subnets for 8 devices"),
    (hosts_plan(hosts={"a": ["10.0.0.1"] * 8}), "network.hosts", "given twice"),
    (hosts_plan(hosts={"a": [f"10.0.{i}.1" for i in range(8)],
                       "b": [f"10.0.{i}.1" for i in range(7)] + ["10.0.8.1"]}),
     "network.hosts", "given twice"),
    (hosts_plan(hosts={"a": [f"10.0.{i}.1" for i in range(6)]}),
     "network.hosts.a", "6 addresses for 8 devices"),
    (hosts_plan(hosts={"a": [f"10.0.{i}.1" for i in range(9)]}),
     "network.hosts.a", "9 addresses for 8 devices"),
    (hosts_plan(hosts={"a": ["10.0.0.x"]}), "network.hosts", "not an IPv4 address"),
    (hosts_plan(hosts={"a": [f"10.0.{i}.1" for i in range(8)],
                       "b": [f"10.0.{i}.2" for i in range(7)] + ["10.9.7.2"]}),
     "network.hosts.b[7]", "device 7 of every host must share one subnet"),
    (hosts_plan(hosts={"a": ["10.0.0.0"] + [f"10.0.{i}.1" for i in range(1, 8)]}),
     "network.hosts.a[0]", "the network or broadcast address of 10.0.0.0/24"),
    (hosts_plan(netmask=None), "network.netmask", "`hosts` needs `netmask`"),
    (hosts_plan(gateway="first"), "network.gateway", "needs `subnets`"),
    (hosts_plan(gateway="10.1.0.1"), "network.gateway", "not a host address of device 0's"),
    (hosts_plan(gateway=["192.168.0.1"] + [f"192.168.{i}.254" for i in range(1, 8)]),
     "network.gateway", "a device 0's gateway 192.168.0.1 is its own"),
    (hosts_plan(netdetect=["192.168.0.2"] * 8), "network.netdetect", "it would ping itself"),
    (hosts_plan(gateway=["192.168.0.254", "192.168.1.254"]), "network.gateway",
     "2 values for 8 devices"),
    ({"subnets": SUBNETS, "netmask": "255.0.255.0"}, "network.netmask", "not a netmask"),
    ({"subnets": SUBNETS, "netmask": "24"}, "network.netmask", "not a netmask"),
    ({"subnets": SUBNETS, "netmask": "0.0.0.255"}, "network.netmask", "not a netmask"),
    ({"subnets": SUBNETS, "netmask": "255.255.0.0"}, "network.netmask", "differs from subnets[0]"),
    ({"subnets": SUBNETS, "hosts": {"a": []}}, "network.hosts", "not both"),
    ({}, "network", "neither is there"),
    ({"subnets": SUBNETS, "first_host": 0}, "network.first_host", "greater than or equal to 1"),
    ({"subnets": SUBNETS, "first_host": 1}, "network.gateway", "is its own address"),
    ({"subnets": SUBNETS, "gateway": "bogus"}, "network.gateway", "neither first nor none"),
    ({"subnets": SUBNETS, "gateway": "10.20.0.1"}, "network.gateway",
     "not a host address of subnets[1] 10.20.1.0/24"),
    ({"subnets": SUBNETS, "gateway": [f"10.20.{i}.254" for i in range(7)] + ["10.21.7.254"]},
     "network.gateway[7]", "only inside its own subnet"),
    ({"subnets": SUBNETS, "netdetect": "first"}, "network.netdetect", "neither gateway nor none"),
    ({"subnets": SUBNETS, "routes": []}, "network.routes", "unknown key"),
])
def test_bad_plans_name_their_key(network: dict[str, Any], where: str, words: str) -> None:
    text = problems(network={k: v for k, v in network.items() if v is not None})
    assert f"  {where}:" in text and words in text, text


@pytest.mark.parametrize(("network", "where"), [
    ({"subnets": "10.20.0.0/24"}, "network.subnets"),
    ({"subnets": [10]}, "network.subnets.0"),
    ({"subnets": SUBNETS, "first_host": "11"}, "network.first_host"),
    ({"subnets": SUBNETS, "first_host": 11.0}, "network.first_host"),
    ({"subnets": SUBNETS, "gateway": 5}, "network.gateway"),
    ({"subnets": SUBNETS, "gateway": [1]}, "network.gateway"),
    (hosts_plan(hosts=["a"]), "network.hosts"),
    (hosts_plan(hosts={"a b": []}), "network.hosts.a b.[key]"),
    ({"subnets": SUBNETS, "netmask": 24}, "network.netmask"),
    ([], "network"),
])
def test_bad_types_name_their_key(network: Any, where: str) -> None:
    text = problems(network=network)
    assert f"  {where}:" in text, text


def test_a_whole_section_is_never_printed_as_the_value() -> None:
    text = problems(network={"subnets": SUBNETS[:6]})
    assert "'hardware'" not in text and "10.20.0.0/24" not in text


def test_a_plan_without_room_for_the_fleet() -> None:
    network = spec(network={"subnets": [f"10.0.{i}.0/29" for i in range(8)],
                            "first_host": 4}).network
    assert network is not None
    assert plan_for(network, ["a", "b", "c"], 8)["c"][0].address == "10.0.0.6"
    with pytest.raises(PlanError, match=r"network.subnets\[0\]: 10.0.0.0/29 has no room for "
                                        r"host d"):
        plan_for(network, ["a", "b", "c", "d"], 8)
    with pytest.raises(UsageError, match="names a twice"):
        plan_for(network, ["a", "b", "a"], 8)
    with pytest.raises(PlanError, match="8 subnets, none for device 8"):
        plan_for(network, ["a"], 9)
    assert spec(network={"subnets": ["10.0.0.0/30", *SUBNETS[1:]], "first_host": 1,
                         "gateway": "none", "netdetect": "none"}).network is not None


def test_plan_errors_are_usage_errors_that_exit_1() -> None:
    with pytest.raises(PlanError) as info:
        plan_for(spec(), ["a"], 8)  # a whole spec without a network section
    assert isinstance(info.value, UsageError)
    assert info.value.exit_code == EXIT_NOT_RIGHT
    assert info.value.key == "network"
    assert "no network section" in str(info.value)
    assert plan_for(spec(network=SIM_PLAN), ["h"], 2)["h"][1].address == "10.20.1.11"


def test_the_plan_fits_the_chips_default_device_count() -> None:
    """Without hardware.devices the chip's default counts: A3 has 16 davinci devices."""
    document = {"extends": "a3", "name": "t", "network": SIM_PLAN}
    document_hardware = {"chip": "910_93"}
    with pytest.raises(SpecError, match="8 subnets for 16 devices"):
        build_spec({**document, "hardware": document_hardware}, "test")
    wide = {"subnets": [f"10.20.{i}.0/24" for i in range(16)], "first_host": 11}
    assert build_spec({**document, "network": wide}, "test").network is not None
    # Fewer devices than subnets is fine (one plan for several machine sizes).
    assert spec(hardware={"chip": "910b", "devices": 4}, network=SIM_PLAN).network is not None


def test_hccl_values_in_range_and_their_environment() -> None:
    hccl = spec(hccl={"connect_timeout": 1200, "exec_timeout": 1836, "buffsize_mb": 400,
                      "socket_ifname": "=eth0"}).hccl
    assert hccl.expected_env() == {"HCCL_CONNECT_TIMEOUT": "1200", "HCCL_EXEC_TIMEOUT": "1836",
                                   "HCCL_BUFFSIZE": "400", "HCCL_SOCKET_IFNAME": "=eth0"}
    assert spec().hccl.expected_env() == {}
    assert "HCCL_IF_IP" not in spec(hccl={"if_ip": "per-host"}).hccl.expected_env()
    assert "greater than or equal to 120" in problems(hccl={"connect_timeout": 60})
    assert "less than or equal to 7200" in problems(hccl={"connect_timeout": 7201})
    assert "greater than or equal to 1" in problems(hccl={"buffsize_mb": 0})
    assert "valid integer" in problems(hccl={"buffsize_mb": "200"})
    assert "valid integer" in problems(hccl={"connect_timeout": True})
    assert "hccl.if_ip" in problems(hccl={"if_ip": "unset"})
    assert "hccl.timeout" in problems(hccl={"timeout": 5})


def test_exec_timeout_range_is_the_chips() -> None:
    """910B/A3: [0, 2147483647] (0 = never); 910 and 310P: (0, 17340] (CANN's reference)."""
    assert spec(hccl={"exec_timeout": 0}).hccl.exec_timeout == 0
    assert spec(hccl={"exec_timeout": 20000}).hccl.exec_timeout == 20000
    for profile in ("910", "310p"):
        document = {"extends": profile, "name": "t", "hccl": {"exec_timeout": 17340}}
        assert build_spec(document, "test").hccl.exec_timeout == 17340
        for bad in (0, 17341):
            with pytest.raises(SpecError, match=rf"hccl.exec_timeout: {bad}: out of range for "
                                                rf"chip {profile}: 1..17340"):
                build_spec({**document, "hccl": {"exec_timeout": bad}}, "test")
    assert "less than or equal to 2147483647" in problems(hccl={"exec_timeout": 2**31})


@pytest.mark.parametrize("value", ["eth", "eth,enp", "^eth,enp", "=eth0", "=eth0,endvnic",
                                   "^=eth0,enp0", "=bond0.100", "=enp189s0f0"])
def test_socket_ifname_forms_of_the_reference(value: str) -> None:
    # The reference's forms (prefixes, ^ to exclude, = for exact names, comma lists); its
    # example is `export HCCL_SOCKET_IFNAME==eth0,endvnic`, i.e. the value "=eth0,endvnic".
    assert spec(hccl={"socket_ifname": value}).hccl.expected_env()["HCCL_SOCKET_IFNAME"] == value


@pytest.mark.parametrize("value", ["eth0; reboot", "", "=", "eth0,,eth1", "=$(id)",
                                   "=averyveryverylongname", "=eth0 eth1", "=^eth0"])
def test_socket_ifname_refused(value: str) -> None:
    assert "hccl.socket_ifname" in problems(hccl={"socket_ifname": value})


def test_if_ip_policy() -> None:
    assert spec().hccl.if_ip_policy == "any"
    assert spec(hccl={"if_ip": "any"}).hccl.if_ip_policy == "any"
    assert spec(hccl={"if_ip": "per-host"}).hccl.if_ip_policy == "per-host"


def test_profiles_without_a_network_section_still_load() -> None:
    assert set(profile_names()) >= {"910b", "a3", "310p", "910"}
    for profile in profile_names():
        loaded = build_spec({"extends": profile, "name": "p"}, profile)
        assert loaded.network is None
        assert loaded.hccl.expected_env() == {}


def test_schema_describes_the_new_sections() -> None:
    schema = EnvSpec.model_json_schema()
    assert {"network", "hccl"} <= set(schema["properties"])
    network = schema["$defs"]["Network"]["properties"]
    assert network["gateway"]["anyOf"][0] == {"enum": ["first", "none"]}
    assert network["netdetect"]["anyOf"][0] == {"enum": ["gateway", "none"]}
    assert schema["$defs"]["Hccl"]["properties"]["if_ip"]["anyOf"][0]["enum"] == [
        "any", "per-host"]
