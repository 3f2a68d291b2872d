"""The network checks' verdicts on facts built by hand: every fault, and the fleet-wide kind."""

from __future__ import annotations

from typing import Any

from ascend_env.doctor.report import CheckResult
from ascend_env.doctor.suite import DoctorContext, Target, run_checks
from ascend_env.facts.model import (
    DeviceNetwork,
    DriverFacts,
    EnvFacts,
    Facts,
    HccnConf,
    HostNic,
    NetworkFacts,
)
from ascend_env.facts.network import _device as read_port
from ascend_env.spec.envspec import build_spec
from tests.facts.captures import DATA


def host(k: int, changes: dict[str, dict[str, Any]] | None = None,
         env: dict[str, str] | None = None, devices: int = 2) -> Facts:
    """Host k by the book (10.20.<d>.<10+k>), with `changes` as {device: {field: value}}."""
    changes = changes or {}
    ports, conf = {}, {}
    for d in range(devices):
        port = DeviceNetwork(device=d, address=f"10.20.{d}.{10 + k}", netmask="255.255.255.0",
                             link="UP", health="Success", gateway=f"10.20.{d}.1",
                             netdetect=f"10.20.{d}.1", link_up_count=1, link_down_count=0)
        conf[d] = {"address": port.address or "", "netmask": "255.255.255.0",
                   "gateway": f"10.20.{d}.1", "netdetect": f"10.20.{d}.1"}
        for key, value in changes.get(str(d), {}).items():
            setattr(port, key, value)
        ports[d] = port
    env = env or {}
    return Facts(host=f"sim{k}", chip="910b",
                 driver=DriverFacts(install_path="/usr/local/Ascend", complete=True),
                 env=EnvFacts(vars=env, login_vars=env),
                 network=NetworkFacts(captured=True, hccn_tool=True, devices=ports,
                                      hccn_conf=HccnConf(present=True, readable=True,
                                                         devices=conf),
                                      nics=[HostNic(name="lo", addresses=["127.0.0.1/8"]),
                                            HostNic(name="eth0",
                                                    addresses=[f"192.168.0.{k}/24"])],
                                      nics_captured=True))


def run(*facts: Facts, **context: Any) -> tuple[dict[str, dict[str, CheckResult]],
                                                dict[str, CheckResult]]:
    targets = [Target(name=f.host, facts=f) for f in facts]
    plugin = run_checks(DoctorContext(targets=targets, only=("network",), **context))
    return ({name: {r.id: r for r in rows} for name, rows in plugin.results.items()},
            {r.id: r for r in plugin.fleet_results})


def test_a_healthy_fleet_passes() -> None:
    hosts, fleet = run(host(1), host(2))
    assert {r.status for rows in hosts.values() for r in rows.values()} <= {"pass", "skip"}
    assert {r.status for r in fleet.values()} <= {"pass", "skip"}
    assert fleet["network.unique-addresses"].status == "pass"


PLAN = build_spec({"extends": "910b", "name": "t", "hardware": {"chip": "910b", "devices": 2},
                   "network": {"subnets": ["10.20.0.0/24", "10.20.1.0/24"], "first_host": 11}},
                  "test")


def test_each_port_fault() -> None:
    hosts, _ = run(host(1, {"1": {"link": "DOWN"}}),
                   host(2, {"0": {"link_down_count": 7}}),
                   host(3, {"1": {"health": "Fault"}}),
                   host(4, {"0": {"address": None, "ip_error": "no ip was preset"}}),
                   spec=PLAN)
    assert hosts["sim1"]["network.links"].message.endswith("device 1: link DOWN")
    assert "device 0: went down 7 times (flapping)" in hosts["sim2"]["network.links"].message
    assert "device 1: Fault" in hosts["sim3"]["network.health"].message
    assert hosts["sim4"]["network.addresses"].status == "fail"
    assert "device 0 has no address (no ip was preset)" in \
        hosts["sim4"]["network.addresses"].message
    assert hosts["sim4"]["network.addresses"].fix is not None
    assert hosts["sim4"]["network.addresses"].fix.id == "network-ip"


def test_without_a_plan_a_missing_address_only_warns() -> None:
    hosts, _ = run(host(1, {"0": {"address": None}}))
    assert hosts["sim1"]["network.addresses"].status == "warn"


def test_an_unknown_health_word_and_unread_output_never_pass() -> None:
    odd = host(1, {"0": {"health": "Splendid"},
                     "1": {"unparsed": {"hccn_tool -i 1 -link -g": "link: maybe"}}})
    hosts, _ = run(odd)
    assert hosts["sim1"]["network.health"].status == "warn"
    assert hosts["sim1"]["network.links"].status == "warn"


def test_an_unset_detect_address_is_not_set_not_unreadable() -> None:
    """hccn_tool prints 0.0.0.0 for a port whose detect address was never set (the real sample
    in tests/data/hccn_netdetect/unset.txt): a missing setting with its fix, not an answer the
    doctor cannot read."""
    answer = (DATA / "hccn_netdetect" / "unset.txt").read_text()
    port = DeviceNetwork(device=0)
    assert read_port(port, "netdetect", answer) is True
    assert port.netdetect is None
    unset = host(1, {"0": {"netdetect": port.netdetect}})
    hosts, _ = run(unset, spec=PLAN)
    result = hosts["sim1"]["network.detect-gateway"]
    assert result.status == "fail" and result.fix is not None
    assert result.message == "device 0: no detect address"
    assert "cannot read" not in result.message


def test_the_file_and_the_live_ports_must_agree() -> None:
    facts = host(1)
    assert facts.network.hccn_conf is not None
    facts.network.hccn_conf.devices[1]["address"] = "10.20.1.99"
    hosts, _ = run(facts)
    assert "device 1 address: file 10.20.1.99, live 10.20.1.11" in \
        hosts["sim1"]["network.conf-matches"].message


def test_fleet_faults_name_hosts_and_devices() -> None:
    _, fleet = run(host(1), host(2, {"1": {"address": "10.20.1.11"}}),
                   host(3, {"0": {"address": "10.21.0.13"}}))
    assert fleet["network.unique-addresses"].involved == ["sim1 device 1", "sim2 device 1"]
    assert fleet["network.subnets"].involved == ["sim3 device 0"]


def test_hccl_settings_equal_and_if_ip_on_its_host() -> None:
    _, fleet = run(host(1, env={"HCCL_CONNECT_TIMEOUT": "1200", "HCCL_IF_IP": "192.168.0.1"}),
                   host(2, env={"HCCL_CONNECT_TIMEOUT": "600", "HCCL_IF_IP": "192.168.0.9"}))
    assert fleet["network.hccl-env"].message.endswith(
        "HCCL_CONNECT_TIMEOUT: sim1=1200, sim2=600")
    assert fleet["network.hccl-if-ip"].involved == ["sim2"]


def test_the_spec_plan_and_its_hccl_values() -> None:
    spec = build_spec({"extends": "910b", "name": "t", "hardware": {"chip": "910b", "devices": 2},
                       "network": {"subnets": ["10.20.0.0/24", "10.20.1.0/24"],
                                   "first_host": 11},
                       "hccl": {"connect_timeout": 1200}}, "test")
    hosts, fleet = run(host(1), host(2, {"1": {"gateway": "10.20.1.254"}}), spec=spec)
    assert hosts["sim1"]["network.plan"].status == "pass"
    assert "device 1 gateway: 10.20.1.254, plan 10.20.1.1" in \
        hosts["sim2"]["network.plan"].message
    assert "sim1: HCCL_CONNECT_TIMEOUT=(unset), spec 1200" in \
        fleet["network.hccl-env"].message


def a3(k: int, server: int, **changes: dict[str, Any]) -> Facts:
    """Host k of an A3 pod at `server`, its dies' SDIDs unique per server index."""
    return host(k, {str(d): {"super_device_id": str((1 << 24) + ((server * 16 + d) << 16)),
                             "super_pod_id": "0", "server_index": str(server),
                             **changes.get(str(d), {})} for d in range(2)})


def test_superpod_ids_are_judged_per_host_and_across_the_fleet() -> None:
    hosts, fleet = run(a3(1, 0), a3(2, 1))
    assert hosts["sim1"]["network.superpod"].status == "pass"
    assert fleet["network.super-device-ids"].status == "pass"
    # A host whose dies disagree on its server index.
    hosts, _ = run(a3(1, 0, **{"1": {"server_index": "3"}}), a3(2, 1))
    check = hosts["sim1"]["network.superpod"]
    assert check.status == "fail"
    assert "its dies name 2 server indexes: device 0 0, device 1 3" in check.message
    # Two hosts at one server index: their SDIDs clash, and both hosts are named.
    _, fleet = run(a3(1, 0), a3(2, 0))
    check = fleet["network.super-device-ids"]
    assert check.status == "fail"
    assert "server index 0 in pod 0: sim1, sim2" in check.message
    assert set(check.involved) == {"sim1 device 0", "sim2 device 0", "sim1 device 1",
                                   "sim2 device 1"}
    # A page not understood is never a pass; a 910B host skips.
    odd = a3(1, 0)
    odd.network.devices[1].super_device_id = None
    odd.network.devices[1].unparsed["npu-smi info -t spod-info -i 0 -c 1"] = "ret is -8020"
    hosts, _ = run(odd)
    check = hosts["sim1"]["network.superpod"]
    assert check.status == "fail"
    assert "device 1: spod-info answered 'ret is -8020'" in check.message
    hosts, fleet = run(host(1), host(2))
    assert hosts["sim1"]["network.superpod"].status == "skip"
    assert fleet["network.super-device-ids"].status == "skip"
