"""A chip is data: chips.yaml (and a site's overlay) is the only list of chip families.

What differs per chip (PCI id, npu-smi names, package tokens, RoCE, HCCL's exec-timeout range,
the rank table layout) is read from the data; no shipped code names a chip, and a chip added by
an overlay alone is planned, doctored and rank-tabled.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import TypeAdapter, ValidationError

from ascend_env.core.errors import SpecError, UsageError
from ascend_env.core.resources import load_yaml
from ascend_env.spec.chips import ChipName, load_chips
from ascend_env.spec.envspec import EnvSpec, build_spec
from ascend_env.spec.overlay import ENV_VAR
from tests.cli_invoke import invoke
from tests.sim.chips import CHIPS as SIM_CHIPS

ROOT = Path(__file__).resolve().parents[2]
REAL_TABLE = ROOT / "tests" / "data" / "real" / "910b3-23.0.7" / "npu-smi-info.txt"
NAMES = sorted(load_chips().chips)


# --- the names the code knows are the data's ------------------------------------------------


def test_chip_names_are_the_keys_of_chips_yaml() -> None:
    """The spec's hardware.chip takes exactly chips.yaml's names, and its schema lists them."""
    assert set(NAMES) == set(load_yaml("chips.yaml")["chips"])
    names = TypeAdapter(ChipName)
    for name in NAMES:
        assert names.validate_python(name) == name
    with pytest.raises(ValidationError, match="unknown chip 'x950'"):
        names.validate_python("x950")
    schema = EnvSpec.model_json_schema()
    assert json.dumps(schema).count(json.dumps(NAMES)) == 1


def test_every_chip_the_project_names_is_a_chips_yaml_chip() -> None:
    """Profiles, packages.yaml's per-chip patterns and the simulated hosts name only chips of
    chips.yaml, and a simulated chip looks like its entry."""
    profiles = sorted((ROOT / "ascend_env" / "data" / "profiles").glob("*.yaml"))
    named = {yaml.safe_load(p.read_text())["hardware"]["chip"] for p in profiles}
    for rule in load_yaml("packages.yaml")["rules"]:
        named |= set(rule.get("chip_patterns") or {})
    assert named <= set(NAMES)
    assert set(SIM_CHIPS) == set(NAMES)
    for name, sim in SIM_CHIPS.items():
        chip = load_chips().chips[name]
        assert int(chip.pci_device_id, 16) == sim.pci_device
        assert sim.npu_name in chip.npu_smi_names or sim.npu_name in chip.npu_smi_names_under
        assert sim.chips_per_npu >= chip.chips_per_card


def _chip_literals(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef)
                  and node.body and isinstance(node.body[0], ast.Expr)}
    return [f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and node.value in NAMES
            and id(node) not in docstrings]


def test_no_shipped_code_names_a_chip() -> None:
    """What differs per chip is read from chips.yaml: no string in the package, the checks or
    the playbooks' plugins is a chip's name."""
    files = [p for folder in ("ascend_env", "checks", "playbooks")
             for p in sorted((ROOT / folder).rglob("*.py"))]
    assert files
    assert [hit for path in files for hit in _chip_literals(path)] == []


def test_hccl_exec_timeout_range_and_roce_are_the_chips() -> None:
    chips = load_chips()
    for name in NAMES:
        low, high = chips.chips[name].hccl.exec_timeout_range
        document: dict[str, Any] = {"extends": "910b", "name": "t", "hardware": {
            "chip": name, "devices": chips.chips[name].devices.default}}
        assert build_spec({**document, "hccl": {"exec_timeout": high}}, "t").hccl.exec_timeout \
            == high
        if low > 0:
            with pytest.raises(SpecError, match=f"out of range for chip {name}: {low}..{high}"):
                build_spec({**document, "hccl": {"exec_timeout": low - 1}}, "t")
    assert [n for n in NAMES if not chips.chips[n].roce] == ["310p"]


# --- a chip from data alone -------------------------------------------------------------------

NEW_CHIP: dict[str, Any] = {
    "name": "x950",
    "family": "Ascend X950 (a family added by a site overlay in this test)",
    "pci_device_id": "0xd8f0",
    "pci_subsystems": {"0x19e5:0x3000": "Atlas X950 server"},
    "npu_smi_names": ["X950A"],
    "soc_versions": ["AscendX950A"],
    "products": ["Atlas X950 server"],
    "devices": {"default": 2, "allowed": [1, 2]},
    "hdk_token": "x950",
    "kernels_token": "x950",
    "ops_token": "x950",
    "roce": True,
    "hccl": {"exec_timeout_s": {"min": 5, "max": 600}, "sources": ["X950-SITE"]},
    # The SuperPoD layout, which no shipped chip but A3 reads: the table follows the data.
    "ranktable_layout": "1.2",
    "sources": ["X950-SITE"],
}


@pytest.fixture
def x950(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A site overlay adding chip x950, and a spec for a two-device x950 host."""
    overlay = tmp_path / "matrix.d" / "x950.yaml"
    overlay.parent.mkdir()
    overlay.write_text(yaml.safe_dump({
        "schema": "ascend-env/matrix-overlay/v1",
        "sources": {"X950-SITE": {"title": "the site's notes on its X950 hosts",
                                  "url": "https://example.org/x950"}},
        "chips": {"x950": NEW_CHIP}}))
    monkeypatch.setenv(ENV_VAR, str(overlay.parent))
    spec = tmp_path / "x950.yaml"
    spec.write_text(yaml.safe_dump({"extends": "910b", "name": "x950-site",
                                    "hardware": {"chip": "x950", "devices": 2}}))
    return spec


def _host(name: str, host: int) -> dict[str, Any]:
    """A capture of an x950 host: the real 910B3 table with the new chip's name, two cards
    of its PCI id, and each device's RoCE address."""
    table = REAL_TABLE.read_text().replace("910B3", "X950A")
    commands = {
        "npu-smi info": {"argv": ["npu-smi", "info"], "rc": 0, "stdout": table},
        "lspci -D -n -d 19e5:": {"argv": ["lspci", "-D", "-n", "-d", "19e5:"], "rc": 0,
                                 "stdout": "0000:c1:00.0 1200: 19e5:d8f0 (rev 20)\n"
                                           "0000:c2:00.0 1200: 19e5:d8f0 (rev 20)\n"},
        "ip -o addr show": {"argv": ["ip", "-o", "addr", "show"], "rc": 0, "stdout": (
            f"2: eth0    inet 192.0.2.{host}/24 brd 192.0.2.255 scope global eth0\\       "
            "valid_lft forever preferred_lft forever\n")}}
    for device in (0, 1):
        commands[f"hccn_tool -i {device} -ip -g"] = {
            "argv": ["hccn_tool", "-i", str(device), "-ip", "-g"], "rc": 0,
            "stdout": f"ipaddr:10.20.{device}.{10 + host}\nnetmask:255.255.255.0\n"}
    return {"schema": "ascend-env/capture/v1", "host": name,
            "captured_at": "2026-01-01T00:00:00+00:00", "commands": commands}


def test_a_chip_added_by_an_overlay_is_planned_doctored_and_rank_tabled(
        x950: Path, tmp_path: Path) -> None:
    planned = invoke("plan", "--spec", str(x950), "--json")
    assert planned.code == 0, planned.err
    plan = json.loads(planned.out)
    assert plan["chip"] == "x950" and plan["devices"] == 2
    files = {item["component"]: item["file"] for item in plan["items"]}
    assert "-x950-" in files["driver"] and "x950" in files["ops"], files

    captures = []
    for host in (1, 2):
        path = tmp_path / f"node{host}.json"
        path.write_text(json.dumps(_host(f"node{host}", host)))
        captures.append(str(path))
    doctored = invoke("doctor", "--from", captures[0], "--spec", str(x950), "--json")
    assert doctored.code in (0, 1), doctored.err
    checks = {check["id"]: check for check in json.loads(doctored.out)["checks"]}
    assert checks["hardware.chip"]["status"] == "pass", checks["hardware.chip"]
    assert checks["hardware.names"]["status"] == "pass", checks["hardware.names"]
    assert checks["hardware.cards"]["status"] == "pass", checks["hardware.cards"]

    table = tmp_path / "hccl.json"
    written = invoke("ranktable", "--from", captures[0], "--from", captures[1],
                     "-o", str(table), "--json")
    assert written.code == 0, written.err
    assert json.loads(written.out)["version"] == "1.2"
    servers = json.loads(table.read_text())["server_list"]
    assert [s["host_ip"] for s in servers] == ["192.0.2.1", "192.0.2.2"]
    assert servers[1]["device"][1] == {"device_id": "1", "device_ip": "10.20.1.12",
                                       "rank_id": "3"}
    # HCCL's range is the new chip's too.
    with pytest.raises(SpecError, match=r"out of range for chip x950: 5\.\.600"):
        build_spec({"extends": "910b", "name": "t", "hardware": {"chip": "x950", "devices": 2},
                    "hccl": {"exec_timeout": 601}}, "t")


def test_an_overlay_chip_citing_no_defined_source_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    overlay = tmp_path / "bad.yaml"
    overlay.write_text(yaml.safe_dump({"schema": "ascend-env/matrix-overlay/v1",
                                       "chips": {"x950": NEW_CHIP}}))
    monkeypatch.setenv(ENV_VAR, str(overlay))
    with pytest.raises(UsageError, match=r"bad.yaml: chips.x950 cites unknown source labels"):
        load_chips()
    overlay.write_text(yaml.safe_dump({"schema": "ascend-env/matrix-overlay/v1",
                                       "chips": {"x950": {**NEW_CHIP, "name": "x951"}}}))
    with pytest.raises(UsageError, match=r"bad.yaml: .*the key is the name"):
        load_chips()
