"""The rank table of 4 simulated hosts (fake hccn_tool over the fleet's fabric, ports at
10.20.<device>.<10+k>): written from the live ports, then checked against a saved capture of
the same fleet, as `doctor --from` reads it (no reaching addresses there)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ascend_env.cluster.ranktable import check_ranktable, load_ranktable, parse_ranktable
from ascend_env.facts.assemble import facts_from_capture
from ascend_env.facts.capture import load_capture
from tests.cli_invoke import invoke
from tests.sim.fixtures import FleetFactory

pytestmark = [pytest.mark.sim, pytest.mark.slow]


def test_written_live_then_checked_against_a_saved_capture(
        sim_fleet_factory: FleetFactory, tmp_path: Path) -> None:
    fleet = sim_fleet_factory(hosts=4, state="provisioned")
    out = tmp_path / "hccl.json"
    written = invoke("ranktable", "--inventory", str(fleet.inventory), "-o", str(out), "--json")
    assert written.code == 0, written.err
    summary = json.loads(written.out)
    assert (summary["servers"], summary["ranks"]) == (4, 32)
    assert summary["server_ids"] == [fleet.fleet.host(h).address for h in fleet.hosts]
    table = load_ranktable(out)
    assert [d.device_ip for d in table.servers[3].devices] == [
        f"10.20.{d}.14" for d in range(8)]
    saved = tmp_path / "fleet.json"
    collected = invoke("collect", "--inventory", str(fleet.inventory), "-o", str(saved))
    assert collected.code == 0, collected.err
    hosts = {c.host: (None, facts_from_capture(c)) for c in load_capture(saved)}
    assert set(hosts) == set(fleet.hosts)
    assert check_ranktable(table, hosts) == []
    bad = json.loads(out.read_text())
    bad["server_list"][1]["device"][5]["device_ip"] = "10.20.5.99"
    del bad["server_list"][2]["device"][0]
    found = [p.message for p in check_ranktable(parse_ranktable(json.dumps(bad)), hosts)]
    assert "sim2 device 5: rank table says 10.20.5.99, the device has 10.20.5.12" in found
    assert "device 0 of sim3 is missing" in found
