"""Real hosts, real verdicts: every parser and chip rule on the corpus of tests/data/real/.

Each sample is what one real host printed, quoted in a public page its SOURCE names. The
facts must read as expected.json says, `doctor --from` on a capture of it must give the
expected verdicts, and a table corrupted anywhere in a device's rows must never let
devices.health pass (what is not understood is never taken for OK).
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ascend_env.doctor.findings import CheckFailure, CheckWarning
from ascend_env.facts.assemble import facts_from_capture
from ascend_env.facts.capture import save_capture
from ascend_env.facts.model import Facts
from ascend_env.facts.npu_smi import chip_for_npu_name
from ascend_env.facts.npu_smi_table import parse_npu_smi_info
from tests.cli_invoke import invoke
from tests.facts.real_corpus import NPU_SMI_INFO, REAL, RealHost, capture_of, real_hosts

HOSTS = real_hosts()
IDS = [h.id for h in HOSTS]
DEVICE_KEYS = ("npu_id", "chip_id", "phy_id", "device_id", "name", "chip", "health", "bus_id",
               "hbm_used_mb", "hbm_total_mb", "memory_total_mb", "unparsed")
# The checks whose verdict rests on npu-smi's table alone; the others need what a page does
# not quote (PCI, /dev nodes, a spec).
JUDGED = ("devices.started", "devices.health", "devices.free", "hardware.names")


def test_corpus_covers_the_families() -> None:
    """At least 15 real hosts over 910B (several SKUs), A3, 310P and 910, each with a source."""
    assert len(HOSTS) >= 15
    names: dict[str, set[str]] = {}
    for host in HOSTS:
        source = (host.folder / "SOURCE").read_text()
        assert re.search(r"https://github\.com/\S+/(issues|pull)/\d+", source), host.id
        for device in host.expected["devices"]:
            names.setdefault(str(device["chip"]), set()).add(device["name"])
    assert {"910B1", "910B2", "910B2C", "910B3", "910B4-1"} <= names["910b"]
    assert names["910_93"] == {"Ascend910"}
    assert "310P3" in names["310p"]
    assert {"910ProB", "910PremiumA"} <= names["910"]
    assert names["None"] == {"910B"}  # the name two families share


@pytest.mark.parametrize("host", HOSTS, ids=IDS)
def test_facts_read_as_expected(host: RealHost) -> None:
    facts = facts_from_capture(capture_of(host))
    expected = host.expected
    assert facts.chip == expected["chip"]
    assert {"tool_version": facts.npu_smi.tool_version,
            "driver_version": facts.npu_smi.driver_version,
            "unparsed": facts.npu_smi.unparsed} == expected["npu_smi"]
    devices = [{key: getattr(d, key) for key in DEVICE_KEYS} for d in facts.devices]
    assert devices == expected["devices"]
    if "cann_version" in expected:
        assert facts.cann is not None and str(facts.cann.version) == expected["cann_version"]


def _chip_rows(text: str) -> int:
    """How many chips a table shows, counted apart from the parser: `| <id> <Name> |` rows."""
    return sum(1 for line in text.splitlines()
               if re.match(r"^\|\s*\d+\s+[0-9]*[A-Za-z]\S*\s*\|", line))


@pytest.mark.parametrize("host", HOSTS, ids=IDS)
def test_no_chip_row_is_dropped(host: RealHost) -> None:
    """Every chip row becomes a device (a redacted Bus-Id included), with its raw name kept."""
    text = host.text(NPU_SMI_INFO) or ""
    table = parse_npu_smi_info(text)
    assert len(table.chips) == _chip_rows(text)
    for row in table.chips:
        assert row.name is not None
        family = chip_for_npu_name(row.name, table.chip_header)
        if family is None:  # never a silent None: the facts say which name it was
            notes = facts_from_capture(capture_of(host)).notes
            assert any(f"'{row.name}'" in note for note in notes)


def test_a3_is_two_dies_per_npu_under_phy_id() -> None:
    """A3: Ascend910 counts as 910_93 only under `Chip  Phy-ID`; each die is a device."""
    text = (REAL / "a3-25.2.1" / NPU_SMI_INFO).read_text()
    table = parse_npu_smi_info(text)
    assert table.chip_header == "Chip Phy-ID"
    assert [(c.npu_id, c.chip_id, c.phy_id) for c in table.chips] == [(0, 0, 0), (0, 1, 1),
                                                                        (1, 0, 2)]
    assert chip_for_npu_name("Ascend910", "Chip Phy-ID") == "910_93"
    assert chip_for_npu_name("Ascend910", "Chip") is None
    assert chip_for_npu_name("910B4-1") == "910b"
    assert chip_for_npu_name("910B") is None


@pytest.mark.parametrize("host", HOSTS, ids=IDS)
def test_doctor_from_gives_expected_verdicts(host: RealHost, tmp_path: Path) -> None:
    capture = save_capture(tmp_path / f"{host.id}.json", capture_of(host))
    result = invoke("doctor", "--from", str(capture), "--only", "devices", "--only",
                    "hardware", "--json")
    assert result.code in (0, 1), result.err
    report = json.loads(result.out)
    verdicts = {c["id"]: c["status"] for c in report["checks"] if c["id"] in JUDGED}
    assert verdicts == host.expected["verdicts"]
    for check in report["checks"]:
        if check["id"] in JUDGED and check["status"] == "warn":
            # A warning names what it could not read or recognise, verbatim.
            raw = [d["name"] for d in host.expected["devices"] if d["chip"] is None]
            raw += [u for d in host.expected["devices"] for u in d["unparsed"]]
            # Most quotes stop before the process table: not knowing is not "free".
            raw += ["printed no process table"] if check["id"] == "devices.free" else []
            assert any(text in check["message"] for text in raw), check["message"]


# -- what is not understood is never a pass -----------------------------------------------------

@pytest.fixture(scope="module")
def checks(pytestconfig: pytest.Config) -> ModuleType:
    """checks/test_devices.py itself, called directly (the doctor's suite would take seconds
    per example); its markers are the doctor's, declared here as the doctor's plugin does."""
    for marker in ("category(name): doctor check category", "level(n): doctor check level"):
        pytestconfig.addinivalue_line("markers", marker)
    path = Path(__file__).resolve().parents[2] / "checks" / "test_devices.py"
    spec = importlib.util.spec_from_file_location("corpus_devices_checks", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _health_verdict(checks: ModuleType, facts: Facts) -> str:
    try:
        checks.test_health(facts, facts.devices)
    except CheckFailure:
        return "fail"
    except CheckWarning:
        return "warn"
    return "pass"


def _device_lines(text: str) -> list[int]:
    """Indexes of the lines holding chip rows (two per chip), found apart from the parser."""
    out = []
    for index, line in enumerate(text.splitlines()):
        if "Process id" in line:
            break
        if line.startswith("|") and not re.search(r"npu-smi|Name|Bus-Id", line):
            out.append(index)
    return out


TABLES = [(h.id, h.text(NPU_SMI_INFO) or "") for h in HOSTS if h.expected["devices"]]
# Characters outside every cell's grammar (numbers, names, health words, Bus-Ids, `a / b`).
GARBAGE = "#@?~%&*!^$;|"


@st.composite
def corrupted_tables(draw: Any) -> tuple[str, str]:
    name, text = draw(st.sampled_from(TABLES))
    lines = text.splitlines()
    index = draw(st.sampled_from(_device_lines(text)))
    line = lines[index]
    at = draw(st.integers(min_value=0, max_value=len(line)))
    char = draw(st.sampled_from(GARBAGE))
    if draw(st.booleans()) and at < len(line):
        line = line[:at] + char + line[at + 1:]  # substitute
    else:
        line = line[:at] + char + line[at:]  # insert
    lines[index] = line
    return name, "\n".join(lines) + "\n"


@settings(database=None, max_examples=300, deadline=None)
@given(corrupted_tables())
def test_corrupted_rows_never_pass_health(checks: ModuleType, case: tuple[str, str]) -> None:
    name, text = case
    host = next(h for h in HOSTS if h.id == name)
    assume(text != host.text(NPU_SMI_INFO))
    facts = facts_from_capture(capture_of(host, npu_smi_info=text))
    assert _health_verdict(checks, facts) != "pass"


@pytest.mark.parametrize("host", [h for h in HOSTS if h.expected["devices"]], ids=lambda h: h.id)
def test_clean_tables_judge_health(checks: ModuleType, host: RealHost) -> None:
    """The property above is not vacuous: the same tables, uncorrupted, do pass (or warn only
    for what expected.json says the host itself left unreadable)."""
    facts = facts_from_capture(capture_of(host))
    unreadable = any(d["unparsed"] for d in host.expected["devices"])
    assert _health_verdict(checks, facts) == ("warn" if unreadable else "pass")


def test_unknown_health_word_is_not_ok(checks: ModuleType) -> None:
    text = (REAL / "910b1-24.1.0" / NPU_SMI_INFO).read_text()
    host = next(h for h in HOSTS if h.id == "910b1-24.1.0")
    odd = text.replace("| OK            | 93.1", "| Degraded      | 93.1", 1)
    facts = facts_from_capture(capture_of(host, npu_smi_info=odd))
    assert facts.devices[0].health == "Degraded"  # kept raw
    assert _health_verdict(checks, facts) == "warn"


def test_a3_cards_count_one_device_per_die(tmp_path: Path) -> None:
    """hardware.cards on an A3 host: each die is a PCI function at the Bus-Id npu-smi prints
    for it, so two functions are two devices (not four). The PCI attributes are those of an
    A3 function (vendor 0x19e5, device 0xd803, class 0x1200) at the sample's two Bus-Ids."""
    host = next(h for h in HOSTS if h.id == "a3-24.1.rc3.7")
    capture = capture_of(host)
    for bus in ("0000:9d:00.0", "0000:9f:00.0"):
        for attr, value in (("vendor", "0x19e5"), ("device", "0xd803"), ("class", "0x120000"),
                            ("subsystem_vendor", "0x19e5"), ("subsystem_device", "0x3000")):
            capture.files[f"/sys/bus/pci/devices/{bus}/{attr}"] = value + "\n"
    spec = tmp_path / "a3-two-dies.yaml"
    spec.write_text("extends: a3\nname: a3-two-dies\nhardware:\n  devices: 2\n")
    path = save_capture(tmp_path / "a3.json", capture)
    result = invoke("doctor", "--from", str(path), "--spec", str(spec), "--only",
                    "hardware.cards", "--json")
    checks = {c["id"]: c for c in json.loads(result.out)["checks"]}
    assert checks["hardware.cards"]["status"] == "pass", checks["hardware.cards"]["message"]


@pytest.mark.parametrize("where", ["start", "end"])
def test_doubled_border_is_not_read_as_the_row(checks: ModuleType, where: str) -> None:
    """`|| 1  310P3 | ...` (what the property test once found): an empty cell, not the row."""
    host = next(h for h in HOSTS if h.id == "310p3-24.1.rc2")
    text = host.text(NPU_SMI_INFO) or ""
    row = next(line for line in text.splitlines() if "310P3" in line)
    doubled = "|" + row if where == "start" else row + "|"
    facts = facts_from_capture(capture_of(host, npu_smi_info=text.replace(row, doubled, 1)))
    assert _health_verdict(checks, facts) == "warn"
