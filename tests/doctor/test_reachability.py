"""Level 2 pings: which pairs are planned, how hccn_tool's answers are read, the matrix."""

from __future__ import annotations

import json

from ascend_env.doctor.reachability import (
    Ping,
    matrix_document,
    plan_hccs_pings,
    plan_pings,
    read_answers,
)
from ascend_env.doctor.suite import Target
from ascend_env.facts.model import DeviceNetwork, Facts, NetworkFacts
from ascend_env.remote import hccn_ping

# A multi-node guide's quote of `hccn_tool -i 0 -ping -g address 10.10.100.10`, a good and a lossy
# answer (an ATB-Models inference guide on GitHub, found through a code search index; its
# repository was not recorded and could not be found again).
REAL_OK = ("device 0 PING 10.10.100.10\nrecv seq=0,time=0.067000ms\nrecv seq=1,time-0.049000ms\n"
           "recv seq=2,time=0.047000ms\n3 packets transmitted, 3 received, 0.00% packet loss\n")
REAL_LOSSY = ("recv time out seq=O\nrecv seq=1,time=0.097000ms\nrecv seq=2,time=0.066000ms\n"
              "3 packets transmitted, 2 received, 33.33% packet loss\n")


def target(name: str, addresses: dict[int, str | None]) -> Target:
    ports = {d: DeviceNetwork(device=d, address=a) for d, a in addresses.items()}
    return Target(name=name, facts=Facts(network=NetworkFacts(captured=True, devices=ports)))


def test_the_real_answers_are_read() -> None:
    assert hccn_ping.parse(REAL_OK) == {"answered": True, "transmitted": 3, "received": 3}
    assert hccn_ping.parse(REAL_LOSSY)["answered"] is False
    assert hccn_ping.parse("hccn_tool is busy, please try again")["answered"] is None


def test_each_device_pings_its_index_on_every_other_host() -> None:
    fleet = [target("a", {0: "10.0.0.1", 1: "10.0.1.1"}), target("b", {0: "10.0.0.2", 1: None}),
             target("c", {0: "10.0.0.3", 1: "10.0.1.3"})]
    plan = plan_pings(fleet)
    assert [(p.device, p.peer, p.address) for p in plan["a"]] == [
        (0, "b", "10.0.0.2"), (0, "c", "10.0.0.3"), (1, "c", "10.0.1.3")]
    assert [(p.device, p.peer) for p in plan["b"]] == [(0, "a"), (0, "c")]


def test_answers_onto_pairs_and_the_matrix() -> None:
    pings = [Ping("a", 0, "b", "10.0.0.2"), Ping("a", 0, "c", "10.0.0.3"),
             Ping("a", 1, "c", "10.0.1.3")]
    stdout = json.dumps({"results": [
        {"device": 0, "address": "10.0.0.2", "answered": True, "stdout": REAL_OK},
        {"device": 0, "address": "10.0.0.3", "answered": False, "stdout": REAL_LOSSY}]})
    read = read_answers(pings, stdout)
    assert [(p.answered, p.detail) for p in read] == [
        (True, "3 packets transmitted, 3 received, 0.00% packet loss"), (False, "no reply"),
        (None, "not reported")]
    assert matrix_document(read)["devices"] == {"0": {"a": {"b": "ok", "c": "no reply"}},
                                                "1": {"a": {"c": "unknown"}}}
    assert all(p.answered is None for p in read_answers(pings, "not json"))


# An HCCS ping's answer in the shape Huawei's open-sourced hccn_tool prints it (tool_ping_printf in
# https://github.com/hicann/driver/blob/ef377e950a32b1641c108c59481e39e9643b7d63/src/custom/network/hccn/ascend910B/hccn_product_ext/tool_cmd.c):
# assembled from its format strings, not quoted from a host.
HCCS_OK = ("device 0 PING 192.24.0.1\n\nThis pkt ping success!\n"
           "recv seq 0, time = 3.512us, L1 plane check result = 0x0\n\n"
           "1 packets transmitted, 1 received, 0.00% packets loss\nmax time 3.512us\n"
           "min time 3.512us\naverage time 3.512us\nTP95 time 3.512us\n")


def die(name: str, sdids: dict[int, str], pod: str = "0") -> Target:
    ports = {d: DeviceNetwork(device=d, address=f"10.0.{d}.{name}", super_device_id=s,
                              super_pod_id=pod) for d, s in sdids.items()}
    return Target(name=name, facts=Facts(network=NetworkFacts(captured=True, devices=ports)))


def test_hccs_pings_go_to_the_same_die_index_in_the_same_pod() -> None:
    fleet = [die("1", {0: "100", 1: "101"}), die("2", {0: "200"}), die("3", {0: "300"}, pod="1")]
    plan = plan_hccs_pings(fleet)
    assert [(p.device, p.peer, p.address, p.via) for p in plan["1"]] == [(0, "2", "200", "hccs")]
    assert plan["3"] == []  # alone in its pod
    assert plan_hccs_pings([target("a", {0: "10.0.0.1"}), target("b", {0: "10.0.0.2"})]) == {
        "a": [], "b": []}
    assert hccn_ping.parse(HCCS_OK) == {"answered": True, "transmitted": 1, "received": 1}
    # The answers come back keyed by SDID; a RoCE answer with the same text is another pair.
    stdout = json.dumps({"results": [
        {"device": 0, "via": "hccs", "sdid": "200", "answered": True, "stdout": HCCS_OK},
        {"device": 0, "via": "roce", "address": "200", "answered": False, "stdout": ""}]})
    read = read_answers(plan["1"], stdout)
    assert [(p.answered, p.detail) for p in read] == [
        (True, "1 packets transmitted, 1 received, 0.00% packets loss")]
    assert matrix_document(read) == {"schema": "ascend-env/ping-matrix/v1", "via": "hccs",
                                     "devices": {"0": {"1": {"2": "ok"}}}}
