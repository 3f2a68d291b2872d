"""Rank tables: the real layouts read, ours written from facts, each corruption named."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ascend_env.cluster.ranktable import (
    RanktableError,
    build_ranktable,
    check_ranktable,
    host_devices,
    load_ranktable,
    parse_ranktable,
)
from ascend_env.core.inputs import InputError
from ascend_env.facts.model import DeviceNetwork, Facts, NetworkFacts

SAMPLES = Path(__file__).parents[1] / "data" / "ranktable"


def facts(host: int, devices: int = 4) -> Facts:
    ports = {d: DeviceNetwork(device=d, address=f"10.20.{d}.{10 + host}",
                              netmask="255.255.255.0") for d in range(devices)}
    return Facts(host=f"sim{host}", network=NetworkFacts(captured=True, hccn_tool=True,
                                                         devices=ports))


def fleet(hosts: int = 2) -> dict[str, tuple[str | None, Facts]]:
    return {f"sim{k}": (f"127.0.0.{10 + k}", facts(k)) for k in range(1, hosts + 1)}


def table(hosts: int = 2, chip: str = "910b") -> dict[str, Any]:
    return build_ranktable([host_devices(name, address or name, f)
                            for name, (address, f) in fleet(hosts).items()], chip)


def problems(document: dict[str, Any], hosts: int = 2) -> list[str]:
    return [p.message for p in check_ranktable(parse_ranktable(json.dumps(document)),
                                               fleet(hosts))]


def test_the_real_layouts_load() -> None:
    a2 = load_ranktable(SAMPLES / "atb-two-servers-910b.json")
    assert a2.version == "1.0" and [s.server_id for s in a2.servers] == [
        "90.90.152.89", "90.90.152.91"]
    assert [d.rank_id for s in a2.servers for d in s.devices] == [str(r) for r in range(8)]
    a3 = load_ranktable(SAMPLES / "a3-superpod-two-servers.json")
    assert a3.version == "1.2" and a3.servers[1].host_ip == "172.16.0.101"
    assert a3.servers[1].devices[0].device_ip == "192.168.1.8"


def test_written_tables_have_the_real_layout() -> None:
    written = table()
    real = json.loads((SAMPLES / "atb-two-servers-910b.json").read_text())
    assert written["version"] == real["version"] == "1.0"
    assert set(written) == set(real)
    assert set(written["server_list"][0]["device"][0]) == set(real["server_list"][0]["device"][0])
    assert written["server_list"][1]["device"][3] == {"device_id": "3",
                                                      "device_ip": "10.20.3.12", "rank_id": "7"}
    a3 = table(chip="910_93")
    assert a3["version"] == "1.2" and a3["server_list"][0]["host_ip"] == "127.0.0.11"
    assert problems(written) == []


def test_a_device_without_an_address_is_refused() -> None:
    lost = facts(2)
    lost.network.devices[3].address = None
    with pytest.raises(RanktableError, match="sim2 device 3 has no address"):
        build_ranktable([host_devices("sim2", "127.0.0.12", lost)], "910b")


def test_each_corruption_is_named() -> None:
    missing = table()
    del missing["server_list"][1]["device"][2]
    assert problems(missing) == ["ranks are not 0..6: 6 is missing (listed instead: 7)",
                                "device 2 of sim2 is missing"]
    duplicate = table()
    duplicate["server_list"][1]["device"][1]["rank_id"] = "5"
    duplicate["server_list"][1]["device"][0]["rank_id"] = "5"
    assert "rank 5 is listed twice (sim2 device 0, sim2 device 1)" in problems(duplicate)
    wrong_ip = table()
    wrong_ip["server_list"][1]["device"][3]["device_ip"] = "10.20.3.99"
    assert problems(wrong_ip) == [
        "sim2 device 3: rank table says 10.20.3.99, the device has 10.20.3.12"]
    wrong_server = table()
    wrong_server["server_list"][1]["server_id"] = "127.0.0.99"
    found = problems(wrong_server)
    assert found[0] == "server_id 127.0.0.99 is no host of the fleet (sim2 is reached at " \
        "127.0.0.12)"
    assert "host sim2 is not in the rank table" in found
    by_name = table()
    by_name["server_list"][0]["server_id"] = "sim1"
    assert problems(by_name) == ["server_id sim1 is not an address: sim1 is reached at "
                                 "127.0.0.11"]


@pytest.mark.parametrize(("text", "words"), [
    ("{not json", "not JSON"),
    ('{"version": "1.0", "version": "1.0"}', "key 'version' appears twice"),
    ('["a"]', "top level must be an object"),
    ('{"version": "2.0", "server_list": []}', "known layouts are 1.0, 1.2"),
    ('{"version": "1.0", "server_list": []}', "server_list must be a non-empty list"),
    ('{"version": "1.0", "server_list": [{"server_id": "a", "device": [{"device_id": 0, '
     '"device_ip": "1.1.1.1", "rank_id": "0"}]}]}', "server_list[0].device[0].device_id must "
     "be a non-empty string"),
    ('{"version": "1.0", "server_count": "2", "server_list": [{"server_id": "a", "device": '
     '[{"device_id": "0", "device_ip": "1.1.1.1", "rank_id": "0"}]}]}', "server_count is '2'"),
    ('{"version": "1.0", "server_list": [{"server_id": "a", "device": [{"device_id": "0", '
     '"device_ip": "1.1.1.1", "rank_id": "0"}, {"device_id": "0", "device_ip": "1.1.1.2", '
     '"rank_id": "1"}]}]}', "device 0 of server a is listed twice"),
])
def test_bad_tables_name_file_and_key(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "hccl.json"
    path.write_text(text)
    with pytest.raises(RanktableError) as info:
        load_ranktable(path)
    assert str(path) in str(info.value) and words in str(info.value)
    assert info.value.exit_code == 1


def test_unreadable_tables_could_not_run(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        load_ranktable(tmp_path)
    assert info.value.exit_code == 2
