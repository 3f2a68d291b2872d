"""The fake npu-smi prints the published layouts verbatim (tests/data/real)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from ascend_env.facts.npu_smi import chip_for_npu_name
from ascend_env.facts.npu_smi_table import parse_npu_smi_info
from tests.facts.real_corpus import REAL
from tests.sim import faults, hardware
from tests.sim.chips import CHIPS
from tests.sim.target import npu_smi
from tests.sim_tests import samples

pytestmark = pytest.mark.sim


def _versions(monkeypatch: pytest.MonkeyPatch, drv: str, fw: str = "7.1.0.7.220",
              compat: str = "OK") -> None:
    monkeypatch.setattr(npu_smi, "driver_version", lambda: drv)
    monkeypatch.setattr(npu_smi, "firmware_version", lambda: fw)
    monkeypatch.setattr(npu_smi, "compatibility", lambda: compat)


def _state(chip: str, npus: int) -> dict[str, Any]:
    return hardware.initial_state(CHIPS[chip], npus)


def test_info_910b_matches_sample(monkeypatch: pytest.MonkeyPatch) -> None:
    _versions(monkeypatch, "23.0.7")
    assert npu_smi.info_table(_state("910b", 2)) == samples.INFO_910B


def test_info_910_first_generation(monkeypatch: pytest.MonkeyPatch) -> None:
    _versions(monkeypatch, "24.1.0")
    state = _state("910", 2)
    out = npu_smi.info_table(state)
    assert out.startswith(samples.INFO_910_HEAD + "\n")


def test_info_310p_dual_chip_layout(monkeypatch: pytest.MonkeyPatch) -> None:
    _versions(monkeypatch, "25.2.0")
    state = _state("310p", 1)
    state["npus"][0]["npu_id"] = 2  # NPU IDs need not start at 0 (Syllo/nvtop #421)
    out = npu_smi.info_table(state)
    assert out.startswith(samples.INFO_310P_HEAD + "\n")
    assert "No running processes found in NPU 2" in out
    assert {len(line) for line in out.splitlines()} == {106}


def test_info_lines_keep_table_width(monkeypatch: pytest.MonkeyPatch) -> None:
    _versions(monkeypatch, "25.5.0")
    state = _state("910b", 8)
    faults_state = state["npus"][3]
    faults_state["processes"] = [dict(faults.BUSY_PROCESS, chip=0)]
    out = npu_smi.info_table(state)
    assert {len(line) for line in out.splitlines()} == {98}
    assert "| 3       0                 | 436712        | python3" in out


def test_info_list_total_count_form() -> None:
    state = _state("910b", 8)
    out = npu_smi.info_list(state)
    expected = samples.LIST_HEAD.replace(": 16", ": 8")
    assert out.startswith(expected)
    assert out.count("NPU ID") == 8


def test_info_list_a3_two_dies() -> None:
    out = npu_smi.info_list(_state("910_93", 1))
    assert "Total Count                    : 1" in out
    assert "Chip Count                     : 2" in out


def test_board_910_matches_sample(monkeypatch: pytest.MonkeyPatch) -> None:
    _versions(monkeypatch, "23.0.5", "7.1.0.7.220", "OK")
    state = _state("910", 1)
    state["npus"][0]["bus_id"] = "0000:61:00.0"
    assert npu_smi.board(state, state["npus"][0]) == samples.BOARD_910


@pytest.mark.parametrize(("chip", "device"), [("910b", "0xD802"), ("910", "0xD801"),
                                              ("910_93", "0xD803"), ("310p", "0xD500")])
def test_board_pci_ids_per_chip(monkeypatch: pytest.MonkeyPatch, chip: str, device: str) -> None:
    _versions(monkeypatch, "25.5.0")
    state = _state(chip, 1)
    out = npu_smi.board(state, state["npus"][0])
    assert f"PCI Device ID                  : {device}" in out
    assert "PCI Vendor ID                  : 0x19e5" in out


def test_health_formats() -> None:
    state = _state("910b", 1)
    npu = state["npus"][0]
    assert npu_smi.health(state, npu, None) == samples.HEALTH_NPU
    assert npu_smi.health(state, npu, 0) == samples.HEALTH_CHIP_OK
    npu["fault"] = "health-alarm"
    assert npu_smi.health(state, npu, 0) == samples.HEALTH_CHIP_ALARM
    assert "Health                         : Alarm" in npu_smi.health(state, npu, None)


def test_answers_follow_every_input(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Each call reads the state and version files afresh and writes nothing."""
    state_file, info = tmp_path / "state.json", tmp_path / "install.info"
    for name, value in (("STATE", state_file), ("INSTALL_INFO", info)):
        monkeypatch.setattr(npu_smi, name, str(value))
    (tmp_path / "driver").mkdir()
    (tmp_path / "driver" / "version.info").write_text("Version=25.5.0\n")
    info.write_text(f"Driver_Install_Path_Param={tmp_path}\n")
    state = _state("910b", 2)
    board = ["info", "-t", "board", "-i", "1"]
    state_file.write_text(json.dumps(state))
    files = sorted(tmp_path.rglob("*"))
    first = npu_smi.answer(["info"])
    assert first[0] == 0 and first == npu_smi.answer(["info"])
    state["npus"][1]["fault"] = "health-alarm"
    state_file.write_text(json.dumps(state))
    alarm = npu_smi.answer(["info"])
    assert alarm != first and b"Alarm" in alarm[1]
    state["npus"][1]["fault"] = None
    state_file.write_text(json.dumps(state))
    assert npu_smi.answer(["info"]) == first
    assert npu_smi.answer(board)[1].count(b"25.5.0") == 1
    (tmp_path / "driver" / "version.info").write_text("Version=25.3.0\n")
    assert b"25.3.0" in npu_smi.answer(board)[1]
    rc, out = npu_smi.answer(["info", "-t", "board", "-i", "9"])
    assert rc == 255 and out.startswith(b"Invalid card id.\nError parameter of -i\nUsage:")
    assert sorted(tmp_path.rglob("*")) == files
    state_file.unlink()
    assert npu_smi.answer(["info"]) == (
        255, f"dcmi module initialize failed. ret is -8001 ({state_file} missing)\n".encode())


def _skeleton(line: str) -> tuple[list[int], list[str]]:
    """A table line without its figures: where its cell borders are, and its words."""
    return ([i for i, ch in enumerate(line) if ch == "|"],
            re.findall(r"[A-Za-z][\w().%-]*|(?<=\s)-(?=\s)", line))


def test_info_a3_matches_real_layout(monkeypatch: pytest.MonkeyPatch) -> None:
    """A3 as real hosts print it: `Chip  Phy-ID`, two dies per NPU id, each with its own Bus-Id,
    the second die's power `-`, a full-width rule between the dies
    (tests/data/real/a3-24.1.rc3.7, vllm-ascend #2035)."""
    _versions(monkeypatch, "24.1.rc3.7")
    real = (REAL / "a3-24.1.rc3.7" / "npu-smi-info.txt").read_text().splitlines()
    out = npu_smi.info_table(_state("910_93", 1)).splitlines()
    assert [_skeleton(line) for line in out[:len(real)]] == [_skeleton(line) for line in real]
    table = parse_npu_smi_info("\n".join(out))
    assert [(c.chip_id, c.phy_id, c.bus_id) for c in table.chips] == [
        (0, 0, "0000:9d:00.0"), (1, 1, "0000:9f:00.0")]


@pytest.mark.parametrize("chip", sorted(CHIPS))
def test_sim_tables_read_like_real_ones(monkeypatch: pytest.MonkeyPatch, chip: str) -> None:
    """Every simulated chip's table reads fully, as its family (no unread cell or line)."""
    _versions(monkeypatch, "25.2.0")
    table = parse_npu_smi_info(npu_smi.info_table(_state(chip, 2)))
    assert not table.unparsed and all(not c.unparsed for c in table.chips)
    assert {chip_for_npu_name(c.name, table.chip_header) for c in table.chips} == {chip}


def test_a3_dies_are_pci_functions(tmp_path: Path) -> None:
    """Each A3 die is its own PCI function (its own Bus-Id); 310P Duo chips share their card's."""
    for name in ("a3", "duo"):
        (tmp_path / name / "usr/sbin").mkdir(parents=True)  # a bare root has /usr/sbin
    hardware.install(tmp_path / "a3", CHIPS["910_93"], 2, kernel_headers=False)
    hardware.install(tmp_path / "duo", CHIPS["310p"], 2, kernel_headers=False)
    a3 = sorted(p.name for p in (tmp_path / "a3/sys/bus/pci/devices").iterdir())
    duo = sorted(p.name for p in (tmp_path / "duo/sys/bus/pci/devices").iterdir())
    assert a3 == ["0000:99:00.0", "0000:9b:00.0", "0000:9d:00.0", "0000:9f:00.0"]
    assert duo == ["0000:01:00.0", "0000:81:00.0"]
