"""npu-smi readings: table layouts, process rows, health, a failing npu-smi."""

from __future__ import annotations

from ascend_env.facts.assemble import facts_from_capture
from ascend_env.facts.capture import (
    Capture,
    CommandResult,
)
from ascend_env.facts.npu_smi import worst_health
from ascend_env.facts.npu_smi_table import parse_npu_smi_info
from ascend_env.remote import probe
from tests.facts.captures import sample


def test_garbage_npu_smi_info_is_a_note_not_a_crash() -> None:
    info = parse_npu_smi_info("| zz  | what |\n| 1 910B3 | OK | 1 2 |\nstray text\n")
    assert info.chips == []
    assert any("unparsed" in n or "second line" in n for n in info.notes)


# -- 3. specific readings ---------------------------------------------------------------------

def test_310p_dual_chip_repeats_npu_id() -> None:
    info = parse_npu_smi_info(sample("npu_smi_info", "310p3-25.2.0-duo"))
    assert [(c.npu_id, c.chip_id, c.device_id) for c in info.chips] == [(2, 0, 0), (2, 1, 1)]
    assert {c.bus_id for c in info.chips} == {"0000:01:00.0"}
    assert all(c.power_w is None and c.hbm_total_mb is None for c in info.chips)


def test_process_rows_and_idle_lines() -> None:
    info = parse_npu_smi_info(sample("npu_smi_info", "sim-910b-busy"))
    assert info.idle_npus == [0]
    assert [(p.npu_id, p.pid, p.name) for p in info.processes] == [(1, 436712, "python3")]


def test_na_bus_id_is_none() -> None:
    text = sample("npu_smi_info", "910b3-23.0.7").replace("0000:C1:00.0", "NA          ")
    info = parse_npu_smi_info(text)
    assert info.chips[0].bus_id is None
    assert info.chips[1].bus_id == "0000:c2:00.0"


def test_worst_health() -> None:
    assert worst_health(["OK", "Alarm", "Warning"]) == "Alarm"
    assert worst_health(["OK", "UNKNOWN"]) == "UNKNOWN"
    assert worst_health([None, ""]) is None


def test_npu_smi_failure_is_reported_not_raised() -> None:
    capture = Capture(commands={
        probe.NPU_SMI_INFO: CommandResult(rc=255, stdout=sample("npu_smi_info",
                                                                 "dcmi-init-failed-8001")),
        probe.NPU_SMI_LIST: CommandResult(rc=127, stderr="npu-smi: command not found")})
    facts = facts_from_capture(capture)
    assert facts.npu_smi.available is True
    assert facts.npu_smi.error == "dcmi module initialize failed. ret is -8001"
    assert facts.devices == []
