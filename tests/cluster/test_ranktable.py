"""Rank tables: the real layouts read, ours written from facts, each corruption named.

The samples under tests/data/ranktable/ are public tables quoted with their SOURCE notes: a
910B table from an ATB-Models guide, a 16-NPU one from the ais-bench guide, and the vendor's
A3 page's 1.0 (AI server mode) and 1.2 (SuperPoD) examples.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from ascend_env.cluster.ranktable import (
    HostDevices,
    RankTable,
    RanktableError,
    build_ranktable,
    check_ranktable,
    host_devices,
    load_ranktable,
    parse_ranktable,
)
from ascend_env.core.inputs import InputError
from ascend_env.facts.model import DeviceNetwork, Facts, HostNic, NetworkFacts

SAMPLES = Path(__file__).parents[1] / "data" / "ranktable"
Fleet = dict[str, tuple[str | None, Facts]]


def facts_with(addresses: dict[int, str | None], nics: list[str] | None = None) -> Facts:
    ports = {d: DeviceNetwork(device=d, address=a, netmask="255.255.255.0")
             for d, a in addresses.items()}
    return Facts(network=NetworkFacts(captured=True, hccn_tool=True, devices=ports,
                                      nics=[HostNic(name="eth0", addresses=nics or [])],
                                      nics_captured=nics is not None))


def facts(host: int, devices: int = 4) -> Facts:
    """Host k as the simulated fleet has it: device i at 10.20.i.(10+k)."""
    return facts_with({d: f"10.20.{d}.{10 + host}" for d in range(devices)})


def fleet(hosts: int = 2) -> Fleet:
    return {f"sim{k}": (f"127.0.0.{10 + k}", facts(k)) for k in range(1, hosts + 1)}


def table(hosts: int = 2, chip: str = "910b") -> dict[str, Any]:
    return build_ranktable([host_devices(name, address or name, f)
                            for name, (address, f) in fleet(hosts).items()], chip)


def problems(document: dict[str, Any], hosts: int = 2, of: Fleet | None = None) -> list[str]:
    return [p.message for p in check_ranktable(parse_ranktable(json.dumps(document)),
                                               of if of is not None else fleet(hosts))]


def fleet_of(sample: RankTable) -> Fleet:
    """The hosts a real table describes (reached at server_id, or host_ip when it has one)."""
    return {f"host{i}": (server.host_ip or server.server_id,
                         facts_with({d.device: d.device_ip for d in server.devices}))
            for i, server in enumerate(sample.servers)}


# -- the real tables --------------------------------------------------------------------------

def test_the_real_layouts_load() -> None:
    a2 = load_ranktable(SAMPLES / "atb-two-servers-910b.json")
    assert a2.version == "1.0" and a2.status == "completed"
    assert [s.server_id for s in a2.servers] == ["90.90.152.89", "90.90.152.91"]
    assert [d.rank_id for s in a2.servers for d in s.devices] == [str(r) for r in range(8)]
    bench = load_ranktable(SAMPLES / "aisbench-16p-two-servers.json")
    assert bench.ranks == 16 and bench.servers[1].devices[7].device_ip == "192.100.64.17"
    typical = load_ranktable(SAMPLES / "a3-typical-two-servers.json")
    assert typical.version == "1.0" and typical.servers[0].server_id == "node_0"
    assert typical.servers[1].host_ip == "172.16.0.111" and not typical.super_pods
    a3 = load_ranktable(SAMPLES / "a3-superpod-two-servers.json")
    assert a3.version == "1.2" and a3.servers[1].host_ip == "172.16.0.101"
    assert a3.servers[1].devices[0].device_ip == "192.168.1.8"
    pods = load_ranktable(SAMPLES / "a3-superpod-four-servers.json")
    assert [(p.super_pod_id, p.server_ids) for p in pods.super_pods] == [
        ("0", ("node_0", "node_1")), ("1", ("node_2", "node_3"))]
    # super_device_id is unique within a SuperPoD, not across them: node_2 starts again at 0.
    assert [d.super_device_id for d in pods.servers[2].devices] == ["0", "1", "2", "3"]


@pytest.mark.parametrize("name", sorted(p.name for p in SAMPLES.glob("*.json")))
def test_each_real_table_passes_against_the_hosts_it_describes(name: str) -> None:
    sample = load_ranktable(SAMPLES / name)
    assert (SAMPLES / name).with_suffix(".source").is_file()
    assert check_ranktable(sample, fleet_of(sample)) == []


def test_written_tables_have_the_real_layout() -> None:
    written = table()
    real = json.loads((SAMPLES / "aisbench-16p-two-servers.json").read_text())
    assert written["version"] == real["version"] == "1.0"
    assert list(written) == list(real)  # version, server_count, server_list, status
    assert list(written["server_list"][0]) == list(real["server_list"][0])
    assert set(written["server_list"][0]["device"][0]) == set(real["server_list"][0]["device"][0])
    assert written["server_list"][1]["device"][3] == {"device_id": "3",
                                                      "device_ip": "10.20.3.12", "rank_id": "7"}
    assert problems(written) == []


def test_a3_tables_have_the_superpod_layout() -> None:
    a3 = table(chip="910_93")
    assert a3["version"] == "1.2" and a3["server_list"][0]["host_ip"] == "127.0.0.11"
    assert "super_pod_list" not in a3  # no SDIDs known: HCCL's "AI server mode"
    assert problems(a3) == []
    hosts = [HostDevices(name=f"n{k}", server_id=f"node_{k}", host_ip=f"172.16.0.{100 + k}",
                         devices=[(d, f"192.168.1.{6 + 2 * k + d}") for d in range(2)],
                         super_pod_id="0", super_device_ids={0: str(2 * k), 1: str(2 * k + 1)})
             for k in range(2)]
    pods = build_ranktable(hosts, "910_93")
    real = json.loads((SAMPLES / "a3-superpod-two-servers.json").read_text())
    assert pods == real  # the vendor's example, key for key


def test_what_cannot_make_a_table_is_refused() -> None:
    lost = facts(2)
    lost.network.devices[3].address = None
    with pytest.raises(RanktableError, match="sim2 device 3 has no address"):
        build_ranktable([host_devices("sim2", "127.0.0.12", lost)], "910b")
    with pytest.raises(RanktableError, match="sim1 and sim2 have one server id"):
        build_ranktable([host_devices("sim1", "10.0.0.1", facts(1)),
                         host_devices("sim2", "10.0.0.1", facts(2))], "910b")
    with pytest.raises(RanktableError, match="no host"):
        build_ranktable([], "910b")
    with pytest.raises(RanktableError, match="sim1 has no NPU device"):
        build_ranktable([host_devices("sim1", "10.0.0.1", facts(1, devices=0))], "910b")
    pods = [HostDevices(name=f"n{k}", server_id=f"10.0.0.{k}", devices=[(0, f"10.1.0.{k}")],
                        super_pod_id=pod) for k, pod in enumerate(["0", "1", "0"])]
    with pytest.raises(RanktableError, match="n2 of super pod 0 comes after hosts of super pod 1"):
        build_ranktable(pods, "910_93")
    pods[1] = HostDevices(name="n1", server_id="10.0.0.1", devices=[(0, "10.1.0.1")])
    with pytest.raises(RanktableError, match=r"n1 name\(s\) no super pod while others do"):
        build_ranktable(pods, "910_93")


# -- each corruption, named -------------------------------------------------------------------

def test_a_device_left_out_is_named() -> None:
    missing = table()
    del missing["server_list"][1]["device"][2]
    assert problems(missing) == ["ranks are not 0..6: 6 is missing (listed instead: 7)",
                                 "device 2 of sim2 is missing"]


def test_a_rank_twice_and_a_gap_are_named() -> None:
    duplicate = table()
    duplicate["server_list"][1]["device"][1]["rank_id"] = "5"
    duplicate["server_list"][1]["device"][0]["rank_id"] = "5"
    assert problems(duplicate) == ["rank 5 is listed twice (sim2 device 0, sim2 device 1)",
                                   "ranks are not 0..7: 4 is missing"]
    across = table()
    across["server_list"][1]["device"][0]["rank_id"] = "0"
    assert problems(across)[0] == "rank 0 is listed twice (sim1 device 0, sim2 device 0)"
    gap = table(hosts=4)
    gap["server_list"][3]["device"][0]["rank_id"] = "16"
    assert problems(gap, hosts=4) == ["ranks are not 0..15: 12 is missing (listed instead: 16)"]


def test_interleaved_ranks_are_refused() -> None:
    # The vendor's own wrong example: server 1 {0, 1, 2, 7}, server 2 {3, 4, 5, 6}.
    mixed = table()
    ranks = [[0, 1, 2, 7], [3, 4, 5, 6]]
    for s, server in enumerate(mixed["server_list"]):
        for d, device in enumerate(server["device"]):
            device["rank_id"] = str(ranks[s][d])
    assert problems(mixed) == [
        "sim1's ranks 0, 1, 2, 7 are not consecutive: HCCL does not support ranks "
        "interleaved across servers"]


def test_a_wrong_device_address_is_named() -> None:
    wrong_ip = table()
    wrong_ip["server_list"][1]["device"][3]["device_ip"] = "10.20.3.99"
    assert problems(wrong_ip) == [
        "sim2 device 3: rank table says 10.20.3.99, the device has 10.20.3.12"]
    now_lost = fleet()
    now_lost["sim1"][1].network.devices[2].address = None
    assert problems(table(), of=now_lost) == [
        "sim1 device 2: rank table says 10.20.2.11, the device has no address"]
    twice = table()
    twice["server_list"][1]["device"][0]["device_ip"] = "10.20.0.11"
    assert problems(twice) == [
        "device_ip 10.20.0.11 is listed twice (sim1 device 0, sim2 device 0)",
        "sim2 device 0: rank table says 10.20.0.11, the device has 10.20.0.12"]
    without = table()
    del without["server_list"][0]["device"][1]["device_ip"]
    assert problems(without) == ["sim1 device 1: the rank table gives no device_ip (a table "
                                 "of several servers needs one per device)"]
    alone = table(hosts=1)
    del alone["server_list"][0]["device"][1]["device_ip"]
    assert problems(alone, hosts=1) == []  # one server: HCCL needs none


def test_a_wrong_server_id_is_named() -> None:
    wrong_server = table(hosts=3)
    wrong_server["server_list"][2]["server_id"] = "127.0.0.99"
    assert problems(wrong_server, hosts=3) == [
        "server_id 127.0.0.99 is no host of the fleet (sim3 is reached at 127.0.0.13)",
        "host sim3 is not in the rank table"]
    stranger = table()
    stranger["server_list"].append({"server_id": "10.9.9.9", "device": [
        {"device_id": "0", "device_ip": "10.9.0.1", "rank_id": "8"}], "host_nic_ip": "reserve"})
    stranger["server_count"] = "3"
    assert problems(stranger) == ["server_id 10.9.9.9 is no host of the fleet (the fleet: "
                                  "sim1 is reached at 127.0.0.11, sim2 is reached at 127.0.0.12)"]
    by_name = table()
    by_name["server_list"][0]["server_id"] = "sim1"
    assert problems(by_name) == ["server_id sim1 is not an address: sim1 is reached at "
                                 "127.0.0.11"]
    twice = table()
    twice["server_list"][1]["server_id"] = "sim1"
    assert problems(twice)[0] == ("sim1 is listed twice (server_list[0] 127.0.0.11, "
                                  "server_list[1] sim1)")
    other_host_ip = table(chip="910_93")
    other_host_ip["server_list"][1]["host_ip"] = "127.0.0.55"
    assert problems(other_host_ip) == ["sim2: host_ip 127.0.0.55, the host is reached at "
                                       "127.0.0.12"]


def test_devices_the_host_lacks_and_hosts_without_ports() -> None:
    extra = table()
    extra["server_list"][1]["device"].append({"device_id": "7", "device_ip": "10.20.7.12",
                                              "rank_id": "8"})
    assert problems(extra) == ["sim2 device 7: the host has no such device"]
    unread = fleet()
    unread["sim2"] = ("127.0.0.12", Facts())
    assert problems(table(), of=unread) == [
        "sim2: hccn_tool reported no NPU port, so its 4 listed device(s) cannot be compared"]


def test_a_table_not_completed_is_named() -> None:
    waiting = table()
    waiting["status"] = "initializing"
    assert problems(waiting) == ["status is 'initializing': HCCL uses a table whose status "
                                 "is 'completed'"]
    del waiting["status"]
    assert problems(waiting) == ["status is missing: HCCL uses a table whose status is "
                                 "'completed'"]


def test_problems_name_host_and_device() -> None:
    bad = table()
    bad["server_list"][1]["device"][3]["device_ip"] = "10.20.3.99"
    bad["server_list"][0]["server_id"] = "127.0.0.99"
    found = check_ranktable(parse_ranktable(json.dumps(bad)), fleet())
    assert [(p.host, p.device, p.where) for p in found] == [
        (None, None, "server_list[0]"), ("sim1", None, "sim1"),
        ("sim2", 3, "sim2 device 3")]


def test_captured_hosts_are_known_by_their_own_addresses() -> None:
    # `doctor --from` knows no reaching address: a host's interface addresses identify it.
    captured: Fleet = {f"sim{k}": (None, facts_with(
        {d: f"10.20.{d}.{10 + k}" for d in range(4)}, nics=[f"192.0.2.{k}/24"]))
        for k in (1, 2)}
    written = build_ranktable([host_devices(n, f"192.0.2.{k}", f)
                               for k, (n, (_, f)) in enumerate(captured.items(), start=1)],
                              "910b")
    assert problems(written, of=captured) == []
    # Not an address of any host: the server is still found by its ports' addresses
    # (unique across a working fleet); the doctor says the server ids were not compared.
    written["server_list"][1]["server_id"] = "192.0.2.77"
    assert problems(written, of=captured) == []
    for entry in written["server_list"][1]["device"]:
        entry["device_ip"] = entry["device_ip"].replace("10.20.", "10.30.")
    assert problems(written, of=captured) == [
        "server_id 192.0.2.77 is no host of the fleet (sim2)", "host sim2 is not in the rank table"]
    # Hosts that show one interface address (one network namespace): it names neither.
    shared: Fleet = {name: (None, facts_with({0: f"10.20.0.{k}"}, nics=["192.0.2.9/24"]))
                     for k, name in enumerate(["a", "b"])}
    one = build_ranktable([host_devices("a", "192.0.2.9", shared["a"][1]),
                           host_devices("b", "10.0.0.2", shared["b"][1])], "910b")
    one["server_list"][1]["device"][0]["device_ip"] = "10.20.0.99"
    assert problems(one, of=shared) == [
        "server_id 10.0.0.2 is no host of the fleet (b)", "host b is not in the rank table"]


# -- tables that are not tables ---------------------------------------------------------------

def device(**values: object) -> str:
    return json.dumps({"device_id": "0", "device_ip": "1.1.1.1", "rank_id": "0"} | values)


ONE = '{"version": "1.0", "server_count": "1", "server_list": [{"server_id": "a", "device": [%s]}]}'
POD = ('{"version": "1.2", "server_list": [{"server_id": "a", "device": [%s]}, {"server_id": "b",'
       ' "device": [%s]}], "super_pod_list": %s}')
B = device(device_ip="1.1.1.2", rank_id="1")


@pytest.mark.parametrize(("text", "words"), [
    ("{not json", "not JSON (Expecting property name enclosed in double quotes at line 1"),
    ('{"version": "1.0", "version": "1.0"}', "key 'version' appears twice in one object"),
    (ONE % ('{"device_id": "0", "rank_id": "0", "rank_id": "1", "device_ip": "1.1.1.1"}'),
     "key 'rank_id' appears twice in one object (in the object with device_id '0')"),
    ('["a"]', "top level must be an object"),
    ("[" * 100000, "not a rank table (nested too deeply)"),
    ('{"version": "2.0", "server_list": []}', "known layouts are 1.0, 1.2"),
    ('{"version": 1.0, "server_list": []}', "version must be a non-empty string, not 1.0"),
    ('{"version": "1.0", "server_list": []}', "server_list must be a non-empty list"),
    ('{"version": "1.0", "server_list": [{"server_id": "a", "device": []}]}',
     "server_list[0].device must be a non-empty list"),
    (ONE % device(device_id=0), "server_list[0].device[0].device_id must be a non-empty "
     "string, not 0"),
    (ONE % device(rank_id="1a"), "server_list[0].device[0].rank_id must be a whole number"),
    (ONE % device(rank_id="-1"), "rank_id must be a whole number"),
    (ONE % device(device_ip="10.0.0"), "server_list[0].device[0].device_ip '10.0.0' is not an "
     "IP address"),
    (ONE % (device() + ", " + device(device_ip="1.1.1.2", rank_id="1")),
     "server_list[0].device[1]: device 0 of server a is listed twice (also "
     "server_list[0].device[0])"),
    (ONE.replace('"server_count": "1"', '"server_count": "2"') % device(),
     "server_count is '2' but server_list has 1 server(s)"),
    (ONE.replace('"server_count": "1", ', "") % device(),
     "server_count is missing (layout 1.0 requires it)"),
    (ONE.replace('"a"', '"' + "x" * 65 + '"') % device(),
     "server_list[0].server_id is 65 characters, more than the 64 HCCL allows"),
    (ONE.replace('"server_id": "a"', '"server_id": "a", "host_ip": "fe80::1"') % device(),
     "server_list[0].host_ip 'fe80::1' must be an IPv4 address"),
    (POD.replace('"b"', '"a"') % (device(), B, "null"),
     "server_list[1].server_id 'a' is listed twice (also server_list[0])"),
    (POD % (device(), B, '[{"super_pod_id": "0", "server_list": [{"server_id": "a"}, '
                         '{"server_id": "c"}]}]'),
     "super_pod_list[0].server_list[1].server_id 'c' is in no entry of server_list"),
    (POD % (device(), B, '[{"super_pod_id": "0", "server_list": [{"server_id": "a"}]}]'),
     "server_list[1] (b) is in no super pod of super_pod_list"),
    (POD % (device(), B, '[{"super_pod_id": "0", "server_list": [{"server_id": "a"}]}, '
                         '{"super_pod_id": "1", "server_list": [{"server_id": "a"}, '
                         '{"server_id": "b"}]}]'),
     "super_pod_list[1].server_list[0]: server a is in super pod 0 already"),
    (POD % (device(super_device_id="3"), device(super_device_id="3", device_ip="1.1.1.2",
                                                 rank_id="1"),
            '[{"super_pod_id": "0", "server_list": [{"server_id": "a"}, {"server_id": "b"}]}]'),
     "super_device_id 3 is listed twice in super pod 0 (a device 0, b device 0)"),
])
def test_bad_tables_name_file_and_key(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "hccl.json"
    path.write_text(text)
    with pytest.raises(RanktableError) as info:
        load_ranktable(path)
    assert str(info.value).startswith(f"{path}: ")
    assert words in str(info.value)
    assert info.value.exit_code == 1


def test_super_pods_listed_apart_are_refused(tmp_path: Path) -> None:
    three = ('{"version": "1.2", "server_list": [' + ", ".join(
        f'{{"server_id": "{n}", "device": [{device(rank_id=str(i), device_ip=f"1.1.1.{i}")}]}}'
        for i, n in enumerate("abc")) + '], "super_pod_list": [{"super_pod_id": "0", '
        '"server_list": [{"server_id": "a"}, {"server_id": "c"}]}, {"super_pod_id": "1", '
        '"server_list": [{"server_id": "b"}]}]}')
    with pytest.raises(RanktableError, match=r"server_list\[2\] \(c\) of super pod 0 comes "
                       "after servers of super pod 1"):
        parse_ranktable(three)


def test_unreadable_tables_could_not_run(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        load_ranktable(tmp_path)
    assert info.value.exit_code == 2 and "a directory" in str(info.value)
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="a FIFO"):
        load_ranktable(fifo)  # refused at once, never waiting for a writer
    (tmp_path / "latin.json").write_bytes(b'{"version": "1.0\xff"}')
    with pytest.raises(InputError, match="not UTF-8"):
        load_ranktable(tmp_path / "latin.json")


def test_superpod_ids_that_hccl_refuses_make_no_table() -> None:
    def a3(name: str, server: str, sdids: dict[int, str], pods: dict[int, str]) -> HostDevices:
        f = facts_with({d: f"10.1.{d}.{server[-1]}" for d in sdids})
        for d, port in f.network.devices.items():
            port.super_device_id, port.super_pod_id = sdids[d], pods[d]
        return host_devices(name, server, f)

    one = a3("n1", "10.0.0.1", {0: "100", 1: "200"}, {0: "0", 1: "0"})
    assert one.super_pod_id == "0" and one.super_device_ids == {0: "100", 1: "200"}
    # HCCL's EI0014: one SDID twice in a super pod.
    clash = a3("n2", "10.0.0.2", {0: "300", 1: "200"}, {0: "0", 1: "0"})
    with pytest.raises(RanktableError, match=r"n1 device 1 and n2 device 1 have one SDID \(200\) "
                                             "in super pod 0"):
        build_ranktable([one, clash], "910_93")
    # The same SDID in another pod is no clash.
    other = a3("n2", "10.0.0.2", {0: "100", 1: "200"}, {0: "1", 1: "1"})
    assert len(build_ranktable([one, other], "910_93")["super_pod_list"]) == 2
    with pytest.raises(RanktableError, match="n3: its dies name super pods 0, 1"):
        a3("n3", "10.0.0.3", {0: "1", 1: "2"}, {0: "0", 1: "1"})
