"""`doctor --fix` network-ip without hosts: the values it hands the role, the host order the
plan numbers, when it refuses and what the report then says, and the role's shape."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from ascend_env.doctor import fix
from ascend_env.doctor.report import CheckResult, FixRef, FleetReport, Report
from ascend_env.doctor.run import DoctorOptions, plan_order
from ascend_env.facts.model import Facts, NetworkFacts
from ascend_env.spec.envspec import EnvSpec, build_spec
from ascend_env.spec.network_plan import PlanError
from ascend_env.targets.collect import Captured
from tests.doctor.test_network_checks import host, run

ROLE = Path(__file__).parents[2] / "playbooks" / "roles" / "fix_network_ip" / "tasks" / "main.yml"
# The simulated hosts' plan (contract: subnets 10.20.<i>.0/24, host k at .10+k).
SIM_PLAN = {"subnets": [f"10.20.{i}.0/24" for i in range(8)], "first_host": 11,
            "gateway": "first", "netdetect": "gateway"}


def spec(network: dict[str, Any] | None = SIM_PLAN, devices: int = 8) -> EnvSpec:
    document: dict[str, Any] = {"extends": "910b", "name": "fleet",
                                "hardware": {"chip": "910b", "devices": devices}}
    if network is not None:
        document["network"] = network
    return build_spec(document, "test")


def test_the_ports_are_the_plans_for_the_hosts_number_in_the_fleet() -> None:
    ports = fix.network_ports(spec(), ["sim1", "sim2", "sim3"], "sim2", host(2, devices=3))
    assert ports == [{"device": d, "address": f"10.20.{d}.12", "netmask": "255.255.255.0",
                      "gateway": f"10.20.{d}.1", "netdetect": f"10.20.{d}.1"}
                     for d in range(3)]


def test_only_the_ports_the_host_has_and_none_the_plan_leaves_alone() -> None:
    facts = host(1, devices=4)
    del facts.network.devices[2]  # hccn_tool did not answer for it: nothing to set there
    plan = {"subnets": ["10.30.0.0/24", "10.30.1.0/24", "10.30.2.0/24", "10.30.3.0/24"],
            "first_host": 21, "gateway": "none", "netdetect": "none"}
    ports = fix.network_ports(spec(plan, devices=4), ["sim1"], "sim1", facts)
    assert [p["device"] for p in ports] == [0, 1, 3]
    assert ports[2] == {"device": 3, "address": "10.30.3.21", "netmask": "255.255.255.0",
                        "gateway": None, "netdetect": None}


def test_explicit_addresses_per_host() -> None:
    plan = {"netmask": "255.255.0.0", "hosts": {"sim1": ["29.1.112.213", "29.1.113.213"],
                                                 "sim2": ["29.1.112.214", "29.1.113.214"]},
            "gateway": ["29.1.0.1", "29.1.0.1"], "netdetect": "gateway"}
    ports = fix.network_ports(spec(plan, devices=2), ["sim2", "sim1"], "sim2", host(2))
    assert [(p["address"], p["netmask"], p["gateway"], p["netdetect"]) for p in ports] == [
        ("29.1.112.214", "255.255.0.0", "29.1.0.1", "29.1.0.1"),
        ("29.1.113.214", "255.255.0.0", "29.1.0.1", "29.1.0.1")]


def test_a_host_with_more_ports_than_the_plan_is_a_usage_error_before_anything_runs() -> None:
    plan = {"subnets": ["10.20.0.0/24"], "first_host": 11}
    with pytest.raises(PlanError) as caught:
        fix.network_ports(spec(plan, devices=1), ["sim1"], "sim1", host(1, devices=2))
    assert caught.value.exit_code == 1 and "network.subnets" in str(caught.value)


def test_the_host_vars_carry_the_tool_and_the_ports_as_data() -> None:
    facts = host(1)
    ports = fix.network_ports(spec(), ["sim1"], "sim1", facts)
    variables = fix.host_vars(facts, spec(), (), Report(host="sim1"), ports)
    assert variables["network_tool"] == "/usr/local/Ascend/driver/tools/hccn_tool"
    assert variables["network_ports"] == ports and ports[0]["address"] == "10.20.0.11"


@pytest.mark.parametrize(("given", "words"), [
    (None, "no spec, so no address plan; give --spec with a `network` section"),
    (spec(None), "spec fleet has no `network` section"),
], ids=["no-spec", "no-network-section"])
def test_without_a_plan_the_fix_is_refused_saying_why(given: EnvSpec | None,
                                                      words: str) -> None:
    reason = fix.network_refusal(given, host(1))
    assert reason is not None and reason.startswith("not applied: ") and words in reason


def test_without_ports_the_fix_is_refused() -> None:
    facts = Facts(host="sim1", network=NetworkFacts(captured=True, hccn_tool=False))
    reason = fix.network_refusal(spec(), facts)
    assert reason is not None and "no NPU port" in reason
    assert fix.network_refusal(spec(), host(1)) is None


def failing_network(fix_id: str = "network-ip") -> Report:
    check = CheckResult(id="network.addresses", title="every port has an address",
                        category="network", status="fail", message="device 1 has no address",
                        fix=FixRef(id=fix_id, command="ascend-env doctor --fix --spec SPEC"))
    return Report(host="sim1", checks=[check]).summarize()


def test_fixable_keeps_network_ip_only_with_a_plan() -> None:
    assert fix.fixable(failing_network()) == ["network-ip"]
    assert fix.fixable(failing_network(), network_plan=False) == []


def test_doctor_fix_without_a_plan_runs_nothing_and_says_why(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    report = failing_network()
    monkeypatch.setattr(fix, "captured_targets",
                        lambda options: [Captured(name="sim1", capture=object())])  # type: ignore[arg-type]
    monkeypatch.setattr(fix, "evaluate_fleet", lambda captured, options: ([report], []))
    monkeypatch.setattr(fix, "facts_from_capture", lambda capture: host(1))

    def no_ansible(*args: object, **kwargs: object) -> None:
        raise AssertionError("ansible-playbook ran without a plan")

    monkeypatch.setattr(fix, "run_playbook", no_ansible)
    document = fix.doctor_fix(DoctorOptions(spec=spec(None), inventory=tmp_path / "hosts"))
    assert isinstance(document, FleetReport) and document.exit_code() == 1
    fixes = document.hosts[0].fixes
    assert fixes is not None and fixes.ids == [] and fixes.status == "not run"
    assert fixes.failed == ["network-ip: not applied: spec fleet has no `network` section, so "
                            "no address plan; add one (per device index a subnet, or addresses "
                            "per host)"]
    assert "FAILED: network-ip: not applied" in fixes.summary()
    check = document.hosts[0].checks[0]
    assert check.fix is not None and check.fix.applied is False


def test_the_plan_numbers_the_whole_inventory_whatever_limit_picked(tmp_path: Path) -> None:
    inventory = tmp_path / "hosts.ini"
    inventory.write_text("[npu]\nsim1 ansible_host=127.0.0.11\nsim2 ansible_host=127.0.0.12\n"
                         "sim3 ansible_host=127.0.0.13\n")
    limited = DoctorOptions(spec=spec(), inventory=inventory, limit="sim3")
    assert plan_order(limited, [Captured(name="sim3")]) == ["sim1", "sim2", "sim3"]
    # Without --limit the captures are the inventory, unreachable hosts too, in its order.
    whole = DoctorOptions(spec=spec(), inventory=inventory)
    named = [Captured(name=n, unreachable=n == "sim2") for n in ("sim1", "sim2", "sim3")]
    assert plan_order(whole, named) == ["sim1", "sim2", "sim3"]
    ports = fix.network_ports(spec(), plan_order(limited, [Captured(name="sim3")]), "sim3",
                              host(3))
    assert ports[0]["address"] == "10.20.0.13"  # not sim1's .11, as numbering sim3 first would


def test_the_plan_check_numbers_hosts_as_the_fix_does() -> None:
    alone = build_spec({"extends": "910b", "name": "t", "network": SIM_PLAN}, "test")
    hosts, _ = run(host(3), spec=alone, plan_hosts=["sim1", "sim2", "sim3"])
    assert hosts["sim3"]["network.plan"].status == "pass"
    hosts, _ = run(host(3), spec=alone)  # a lone target is host 1 of its plan
    assert "device 0 address: 10.20.0.13, plan 10.20.0.11" in \
        hosts["sim3"]["network.plan"].message


def test_the_role_reads_before_it_sets_and_never_uses_a_shell() -> None:
    tasks = yaml.safe_load(ROLE.read_text())
    modules = [next(k for k in task if k.startswith("ansible.builtin.")) for task in tasks]
    assert not {"ansible.builtin.shell", "ansible.builtin.raw"} & set(modules)
    commands = [t for t, m in zip(tasks, modules, strict=True) if m == "ansible.builtin.command"]
    reads = [t for t in commands if t["ansible.builtin.command"]["argv"][-1] == "-g"]
    sets = [t for t in commands if "-s" in t["ansible.builtin.command"]["argv"]]
    assert len(reads) == len(sets) == 3 and len(commands) == 6
    # Reads change nothing, run in a dry run too and never stop the play (a port without an
    # address answers with an error); every set runs only where its read differs.
    assert all(t["changed_when"] is False and t["failed_when"] is False
               and t["check_mode"] is False for t in reads)
    assert all("when" in t and isinstance(t["ansible.builtin.command"]["argv"], list)
               for t in sets)
    for read, setter in zip(reads, sets, strict=True):
        assert setter["loop"] == "{{ " + read["register"] + ".results }}"
        assert setter["when"].startswith("not ansible_check_mode and ")
    # A dry run runs no command: each setter has a twin that lists it there, same condition.
    twins = [t for t, m in zip(tasks, modules, strict=True) if m == "ansible.builtin.debug"]
    assert [t["when"] for t in twins] == [
        t["when"].removeprefix("not ") for t in sets]
