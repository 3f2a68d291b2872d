"""`ascend-env ranktable --from CAPTURE...`: the table of saved captures, refused precisely.

The captures hold what the probe records: `hccn_tool -i N -ip -g` answers in the real
format (tests/data/hccn_ip/: `ipaddr:`/`netmask:` lines, and `Get ipconf failed, because no
ip was preset there!` for a port without an address) and `ip -o addr show` lines.
"""

from __future__ import annotations

import json
from pathlib import Path

from ascend_env.cluster.ranktable import check_ranktable, load_ranktable
from ascend_env.facts.assemble import facts_from_capture
from ascend_env.facts.capture import Capture, CommandResult, load_capture
from ascend_env.remote import probe
from tests.cli_invoke import invoke

NOT_PRESET = (Path(__file__).parents[1] / "data" / "hccn_ip" / "not-preset.txt").read_text()


def capture(host: int, devices: int = 2, lost: int | None = None,
            nic: str | None = None, moved: dict[int, str] | None = None) -> Capture:
    """Host k of a fleet: device i at 10.20.i.(10+k) (or `moved[i]`), the host at 192.0.2.k
    (or `nic`)."""
    commands = {}
    for d in range(devices):
        address = (moved or {}).get(d, f"10.20.{d}.{10 + host}")
        text = NOT_PRESET if d == lost else f"ipaddr:{address}\nnetmask:255.255.255.0\n"
        commands[probe.HCCN_IP.format(dev=d)] = CommandResult(
            argv=["hccn_tool", "-i", str(d), "-ip", "-g"], rc=1 if d == lost else 0,
            stdout=text)
    address = nic or f"192.0.2.{host}"
    commands[probe.IP_ADDR] = CommandResult(argv=["ip", "-o", "addr", "show"], rc=0, stdout=(
        "1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever preferred_lft forever\n"
        f"2: eth0    inet {address}/24 brd 192.0.2.255 scope global eth0\\       valid_lft "
        "forever preferred_lft forever\n"))
    return Capture(host=f"node{host}", captured_at="2026-01-01T00:00:00+00:00",
                   commands=commands)


def saved(tmp_path: Path, *captures: Capture) -> list[str]:
    paths = []
    for item in captures:
        path = tmp_path / f"{item.host}.json"
        path.write_text(json.dumps(item.model_dump(by_alias=True)))
        paths.append(str(path))
    return paths


def from_args(paths: list[str]) -> list[str]:
    return [arg for path in paths for arg in ("--from", path)]


def test_the_table_of_saved_captures(tmp_path: Path) -> None:
    paths = saved(tmp_path, capture(1), capture(2))
    out = tmp_path / "hccl.json"
    result = invoke("ranktable", *from_args(paths), "-o", str(out), "--json")
    assert result.code == 0, result.err
    summary = json.loads(result.out)
    assert summary["schema"] == "ascend-env/ranktable/v1"
    assert (summary["version"], summary["servers"], summary["ranks"]) == ("1.0", 2, 4)
    assert summary["server_ids"] == ["192.0.2.1", "192.0.2.2"]
    assert any("its first interface address in the capture" in n for n in summary["notes"])
    table = json.loads(out.read_text())
    assert table["server_list"][1] == {"server_id": "192.0.2.2", "device": [
        {"device_id": "0", "device_ip": "10.20.0.12", "rank_id": "2"},
        {"device_id": "1", "device_ip": "10.20.1.12", "rank_id": "3"}],
        "host_nic_ip": "reserve"}
    fleet = {c.host: (None, facts_from_capture(c))
             for p in paths for c in load_capture(p)}
    assert check_ranktable(load_ranktable(out), fleet) == []
    text = invoke("ranktable", *from_args(paths), "-o", str(out))
    assert text.code == 0 and text.out.startswith(
        f"wrote {out}: version 1.0, 2 server(s), 4 rank(s)")


def test_a_fleet_capture_in_one_file(tmp_path: Path) -> None:
    fleet = tmp_path / "fleet.json"
    fleet.write_text(json.dumps([capture(k).model_dump(by_alias=True) for k in (1, 2, 3)]))
    out = tmp_path / "hccl.json"
    result = invoke("ranktable", "--from", str(fleet), "-o", str(out), "--json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["ranks"] == 6
    assert load_ranktable(out).servers[2].devices[1].rank_id == "5"


def test_a_port_without_an_address_is_named_and_nothing_written(tmp_path: Path) -> None:
    paths = saved(tmp_path, capture(1), capture(2, lost=1))
    out = tmp_path / "hccl.json"
    result = invoke("ranktable", *from_args(paths), "-o", str(out))
    assert result.code == 1
    assert "node2 device 1 has no address (hccn_tool -i 1 -ip -g)" in result.err
    assert not out.exists()


def test_two_hosts_on_one_address_are_refused(tmp_path: Path) -> None:
    paths = saved(tmp_path, capture(1), capture(2, nic="192.0.2.1"))
    result = invoke("ranktable", *from_args(paths), "-o", str(tmp_path / "hccl.json"))
    assert result.code == 1
    assert "node1 and node2 resolve to one address (192.0.2.1)" in result.err


def test_the_spec_device_count_is_held_to(tmp_path: Path) -> None:
    paths = saved(tmp_path, capture(1), capture(2))
    result = invoke("ranktable", *from_args(paths), "--profile", "910b",
                    "-o", str(tmp_path / "hccl.json"))
    assert result.code == 1
    assert "node1 has 2 NPU ports, the spec's hardware.devices says 8" in result.err


def test_live_addresses_are_cross_checked_with_the_plan(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text("extends: 910b\nname: two-ports\nhardware:\n  devices: 2\nnetwork:\n"
                    "  subnets: [10.20.0.0/24, 10.20.1.0/24]\n  first_host: 11\n")
    paths = saved(tmp_path, capture(1), capture(2, moved={1: "10.20.1.99"}))
    out = tmp_path / "hccl.json"
    result = invoke("ranktable", *from_args(paths), "--spec", str(spec), "-o", str(out),
                    "--json")
    assert result.code == 0, result.err
    notes = json.loads(result.out)["notes"]
    assert "node2 device 1 has 10.20.1.99, the spec's network plan says 10.20.1.12 (the " \
           "table holds the live address; doctor --fix network-ip sets the plan's)" in notes
    assert not any("node1 device" in n for n in notes)
    assert load_ranktable(out).servers[1].devices[1].device_ip == "10.20.1.99"


def test_a_host_without_ports_is_refused(tmp_path: Path) -> None:
    paths = saved(tmp_path, capture(1), capture(2, devices=0))
    result = invoke("ranktable", *from_args(paths), "-o", str(tmp_path / "hccl.json"))
    assert result.code == 1
    assert "node2: hccn_tool reported no NPU port" in result.err


def test_usage_errors_could_not_run(tmp_path: Path) -> None:
    neither = invoke("ranktable", "-o", str(tmp_path / "hccl.json"))
    assert neither.code == 2 and "name one of --inventory or --from" in neither.err
    paths = saved(tmp_path, capture(1))
    both = invoke("ranktable", "--inventory", str(tmp_path / "hosts.ini"), *from_args(paths),
                  "-o", str(tmp_path / "hccl.json"))
    assert both.code == 2 and "name one of --inventory or --from" in both.err
    into_folder = invoke("ranktable", *from_args(paths), "-o", str(tmp_path))
    assert into_folder.code == 2 and "--output" in into_folder.err
    missing = invoke("ranktable", "--from", str(tmp_path / "nope.json"), "-o",
                     str(tmp_path / "hccl.json"))
    assert missing.code == 2 and "nope.json" in missing.err
