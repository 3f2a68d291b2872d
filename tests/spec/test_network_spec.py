"""The spec's `network` and `hccl` sections: shape, fit to the devices, and the plan they give."""

from __future__ import annotations

from typing import Any

import pytest

from ascend_env.core.errors import SpecError, UsageError
from ascend_env.spec.envspec import EnvSpec, build_spec
from ascend_env.spec.network_plan import PlannedAddress, device_address, plan_for

SIM_PLAN = {"subnets": [f"10.20.{i}.0/24" for i in range(8)], "first_host": 11}


def spec(**sections: Any) -> EnvSpec:
    return build_spec({"extends": "910b", "name": "t", **sections}, "test")


def problems(**sections: Any) -> str:
    with pytest.raises(SpecError) as info:
        spec(**sections)
    return str(info.value)


def test_the_simulated_fleets_plan() -> None:
    network = spec(network=SIM_PLAN).network
    assert network is not None
    assert device_address(network, 3, "sim3", 5) == PlannedAddress(
        "10.20.5.13", "255.255.255.0", "10.20.5.1", "10.20.5.1")
    plan = plan_for(network, ["sim1", "sim2"], 8)
    assert [plan["sim2"][d].address for d in (0, 7)] == ["10.20.0.12", "10.20.7.12"]


def test_explicit_addresses_per_host() -> None:
    hosts = {"a": [f"192.168.{i}.1" for i in range(8)], "b": [f"192.168.{i}.2" for i in range(8)]}
    network = spec(network={"hosts": hosts, "netmask": "255.255.255.0",
                            "gateway": "none", "netdetect": "none"}).network
    assert network is not None
    assert plan_for(network, ["a", "b"], 8)["b"][3] == PlannedAddress(
        "192.168.3.2", "255.255.255.0", None, None)
    with pytest.raises(UsageError, match="no entry for host 'c'"):
        plan_for(network, ["a", "c"], 8)


@pytest.mark.parametrize(("network", "words"), [
    ({"subnets": ["10.0.0.0/16", "10.0.1.0/24"]}, "overlap"),
    ({"subnets": ["10.0.0.1/24"]}, "not an IPv4 subnet"),
    ({"subnets": [f"10.0.{i}.0/24" for i in range(6)]}, "6 subnets for 8 devices"),
    ({"hosts": {"a": ["10.0.0.1"] * 8}, "netmask": "255.255.255.0", "gateway": "none"},
     "given twice"),
    ({"hosts": {"a": [f"10.0.{i}.1" for i in range(6)]}, "netmask": "255.255.255.0",
      "gateway": "none"}, "network.hosts.a: 6 addresses for 8 devices"),
    ({"hosts": {"a": ["10.0.0.x"]}, "netmask": "255.255.255.0"}, "not an IPv4 address"),
    ({"subnets": SIM_PLAN["subnets"], "netmask": "255.0.255.0"}, "not a netmask"),
    ({"subnets": SIM_PLAN["subnets"], "hosts": {"a": []}}, "not both"),
    ({}, "not both or neither"),
    ({"subnets": SIM_PLAN["subnets"], "first_host": 0}, "first_host"),
    ({"subnets": SIM_PLAN["subnets"], "routes": []}, "unknown key"),
])
def test_bad_plans_name_their_key(network: dict[str, Any], words: str) -> None:
    assert words in problems(network=network)


def test_a_plan_without_room_for_the_fleet() -> None:
    network = spec(network={"subnets": [f"10.0.{i}.0/29" for i in range(8)],
                            "first_host": 4}).network
    assert network is not None
    assert plan_for(network, ["a", "b", "c"], 8)["c"][0].address == "10.0.0.6"
    with pytest.raises(UsageError, match=r"no room for host d"):
        plan_for(network, ["a", "b", "c", "d"], 8)
    with pytest.raises(UsageError, match="names a host twice"):
        plan_for(network, ["a", "a"], 8)


def test_a_gateway_inside_the_hosts_range_is_refused() -> None:
    network = spec(network={"subnets": SIM_PLAN["subnets"], "first_host": 1}).network
    assert network is not None
    with pytest.raises(UsageError, match="its own gateway"):
        plan_for(network, ["a"], 8)  # host 1 would get .1, the subnet's first address


def test_hccl_values_in_range_and_their_environment() -> None:
    hccl = spec(hccl={"connect_timeout": 1200, "exec_timeout": 1836, "buffsize_mb": 400,
                      "socket_ifname": "=eth0"}).hccl
    assert hccl.expected_env() == {"HCCL_CONNECT_TIMEOUT": "1200", "HCCL_EXEC_TIMEOUT": "1836",
                                   "HCCL_BUFFSIZE": "400", "HCCL_SOCKET_IFNAME": "=eth0"}
    assert spec().hccl.expected_env() == {}
    assert "greater than or equal to 120" in problems(hccl={"connect_timeout": 60})
    assert "less than or equal to 17340" in problems(hccl={"exec_timeout": 20000})
    assert "should match pattern" in problems(hccl={"socket_ifname": "eth0; reboot"})
    assert "valid integer" in problems(hccl={"buffsize_mb": "200"})


def test_profiles_without_a_network_section_still_load() -> None:
    for profile in ("910b", "a3", "310p", "910"):
        loaded = build_spec({"extends": profile, "name": "p"}, profile)
        assert loaded.network is None
