"""`doctor --fix` network-ip on 2 simulated hosts of their own: refused without a plan, shown
by a dry run, applied from the spec's plan, then a no-op; a --limit keeps each host's number.

The ports are the fake hccn_tool's (tests/sim/target/hccn_tool.py) over the fleet's fabric;
the faults are tests/sim/network_faults.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from ascend_env.ansible.runner import PlaybookRun, run_playbook
from ascend_env.doctor.fix import host_vars, network_ports
from ascend_env.doctor.report import Report
from ascend_env.doctor.run import DoctorOptions, probe_options
from ascend_env.facts.assemble import facts_from_capture
from ascend_env.spec.envspec import build_spec
from ascend_env.targets.collect import capture_hosts, resolve_hosts
from tests.sim.fixtures import FleetFactory, SimFleet
from tests.sim_tests.network_doctor import SIM_PLAN, doctor, ids_by_host

pytestmark = [pytest.mark.sim, pytest.mark.slow]

TOOL = "/usr/local/Ascend/driver/tools/hccn_tool"
SPEC = {"extends": "910b", "name": "sim-fleet", "network": SIM_PLAN}
SET_ADDRESS = "fix_network_ip : Set the address and netmask where they differ from the plan"
WOULD_SET_ADDRESS = "fix_network_ip : Would set the address and netmask (dry run)"
KEEP_CONF = "fix_network_ip : Keep each port's lines of /etc/hccn.conf as planned"


def fixes(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["host"]: r["fixes"] for r in document["hosts"] if r.get("fixes")}


def ports(fleet: SimFleet) -> dict[str, str]:
    """Every port's `-ip -g` answer, "<host> <device>" -> text: what the fix may change."""
    out = {}
    for name in fleet.hosts:
        loop = f"for i in 0 1 2 3 4 5 6 7; do {TOOL} -i $i -ip -g; echo; done"
        answers = fleet.ssh(name, loop).stdout.split("\n\n")
        out.update({f"{name} {d}": text.strip() for d, text in enumerate(answers[:8])})
    return out


def role_again(fleet: SimFleet, log_dir: Path) -> list[str]:
    """Run fix.yml's network-ip on every host with all 8 ports planned, whatever the doctor
    thinks of them (molecule's idempotence test); the tasks that changed something."""
    options = DoctorOptions(spec=build_spec(SPEC, "t"), inventory=fleet.inventory)
    captured = capture_hosts(resolve_hosts(inventory=fleet.inventory), probe_options(options))
    variables = {}
    for item in captured:
        assert item.capture is not None, item.error
        facts = facts_from_capture(item.capture)
        variables[item.name] = host_vars(facts, options.spec, (), Report(host=item.name),
                                         network_ports(options.spec, fleet.hosts, item.name,
                                                       facts))
        assert len(variables[item.name]["network_ports"]) == 8
    rc, log, events = run_playbook({"ascend_fix_hosts": variables}, PlaybookRun(
        inventory=fleet.inventory, log_dir=log_dir, tags=["network-ip"]),
        playbook="fix.yml")
    assert rc == 0, log.read_text()[-3000:]
    results = [e for e in events if e.get("event") == "result"]
    assert {e["host"] for e in results
            if e["task"] == "fix_network_ip : Read each port's address"} == \
        set(fleet.hosts)
    return [f"{e['host']}: {e['task']}" for e in results if e.get("changed")]


def test_fix_network_ip_from_the_plan_then_nothing_to_change(
        sim_private_fleet: FleetFactory, tmp_path: Path) -> None:
    fleet = sim_private_fleet(hosts=2, state="provisioned")
    spec = tmp_path / "spec.yaml"
    spec.write_text(json.dumps(SPEC))
    fleet.network_fault("sim1", "no-address", device=5)
    fleet.network_fault("sim2", "wrong-subnet", device=6)
    broken = ports(fleet)
    assert "no ip was preset" in broken["sim1 5"] and "10.20.6.12" not in broken["sim2 6"]

    # No plan, no addresses to set: refused, saying why; nothing runs. Without a plan a
    # missing address only warns (a single-host job needs none).
    code, refused = doctor(fleet, "--fix")
    assert code == 1 and ids_by_host(refused) == {"fleet": ["network.subnets"]}
    assert "network.addresses" in ids_by_host(refused, ("warn",))["sim1"]
    assert fixes(refused)["sim1"]["failed"] == [
        "network-ip: not applied: no spec, so no address plan; give --spec with a `network` "
        "section (per device index a subnet, or addresses per host)"]
    assert fixes(refused)["sim1"]["ids"] == []
    assert ports(fleet) == broken

    # A dry run shows the setters it would run and changes nothing.
    code, shown = doctor(fleet, "--spec", str(spec), "--fix", "--check",
                         "--log-dir", str(tmp_path / "dry"))
    assert code == 1
    runs = fixes(shown)
    assert set(runs) == {"sim1", "sim2"} and all(r["mode"] == "dry-run" for r in runs.values())
    assert all(WOULD_SET_ADDRESS in r["changed"] and SET_ADDRESS not in r["changed"]
               and not r["failed"] for r in runs.values()), runs
    assert ports(fleet) == broken

    code, fixed = doctor(fleet, "--spec", str(spec), "--fix", "--log-dir", str(tmp_path / "fix"))
    assert code == 0 and ids_by_host(fixed) == {}, ids_by_host(fixed)
    runs = fixes(fixed)
    assert set(runs) == {"sim1", "sim2"}
    assert all(r["ids"] == ["network-ip"] and r["status"] == "changed" and not r["failed"]
               for r in runs.values()), runs
    assert all(SET_ADDRESS in r["changed"] for r in runs.values())
    live = ports(fleet)
    assert live["sim1 5"] == "ipaddr:10.20.5.11\nnetmask:255.255.255.0"
    assert live["sim2 6"] == "ipaddr:10.20.6.12\nnetmask:255.255.255.0"
    conf = fleet.ssh("sim1", "cat /etc/hccn.conf").stdout
    assert "address_5=10.20.5.11" in conf and "netdetect_5=10.20.5.1" in conf
    passed = {c["id"] for c in fixed["hosts"][0]["checks"] if c["status"] == "pass"}
    assert {"network.addresses", "network.plan", "network.conf-matches"} <= passed
    addresses = next(c for c in fixed["hosts"][0]["checks"] if c["id"] == "network.addresses")
    assert addresses["fix"]["id"] == "network-ip" and addresses["fix"]["applied"] is True

    # The second --fix finds nothing to fix.
    code, again = doctor(fleet, "--spec", str(spec), "--fix")
    assert code == 0 and fixes(again) == {}

    # And the role itself, run again on both hosts, reads every port and changes nothing.
    assert role_again(fleet, tmp_path / "idem") == []

    # /etc/hccn.conf edited by hand while the live ports are right; fixed on sim2 alone. With
    # --limit sim2 the plan still numbers sim2 second: its live ports keep their .12.
    conf_path = fleet.root("sim2") / "etc" / "hccn.conf"
    text = conf_path.read_text()
    conf_path.write_text(re.sub(r"(?m)^address_3=.*$", "address_3=10.20.3.99", text))
    code, drift = doctor(fleet, "--spec", str(spec), "--limit", "sim2")
    assert code == 1 and ids_by_host(drift) == {"sim2": ["network.conf-matches"]}, \
        ids_by_host(drift)
    code, fixed = doctor(fleet, "--spec", str(spec), "--limit", "sim2", "--fix")
    assert code == 0 and ids_by_host(fixed) == {}, ids_by_host(fixed)
    assert fixes(fixed)["sim2"]["changed"] == [KEEP_CONF]
    assert "address_3=10.20.3.12" in conf_path.read_text()
    assert ports(fleet) == live
