"""Level 2 pings: which pairs are planned, how hccn_tool's answers are read, the matrix."""

from __future__ import annotations

import json

from ascend_env.doctor.reachability import Ping, matrix_document, plan_pings, read_answers
from ascend_env.doctor.suite import Target
from ascend_env.facts.model import DeviceNetwork, Facts, NetworkFacts
from ascend_env.remote import hccn_ping

# A multi-node guide's quote of `hccn_tool -i 0 -ping -g address 10.10.100.10` (find_string
# "recv time out seq", read_file id 20121850198), a good and a lossy answer.
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
