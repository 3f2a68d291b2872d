"""A3 SuperPoD identity: the probe asks for it only on A3 tables, and each die's spod-info lands
on the logical device `npu-smi info -m` names (tests/data/npu_smi_spod_info/, npu_smi_map/)."""

from __future__ import annotations

from typing import Any

from ascend_env.facts.assemble import facts_from_capture
from ascend_env.facts.capture import Capture, CommandResult
from ascend_env.remote import probe
from tests.facts.captures import ok, sample
from tests.facts.real_corpus import NPU_SMI_INFO, REAL

A3_TABLE = (REAL / "a3-25.2.1" / NPU_SMI_INFO).read_text()
A3_LIST = sample("npu_smi_list", "a3-total-count-1")


def record(stdout: str, rc: int = 0) -> dict[str, Any]:
    return {"argv": [], "rc": rc, "stdout": stdout, "stderr": ""}


def test_the_probe_reads_spod_info_only_on_a3_tables() -> None:
    jobs = probe.npu_jobs({probe.NPU_SMI_INFO: record(A3_TABLE),
                           probe.NPU_SMI_LIST: record(A3_LIST)})
    keys = [key for key, _, _ in jobs]
    assert probe.NPU_SMI_MAP in keys
    assert [k for k in keys if "spod-info" in k] == [
        "npu-smi info -t spod-info -i 0 -c 0", "npu-smi info -t spod-info -i 0 -c 1"]
    b3 = sample("npu_smi_info", "910b3-23.0.7")
    jobs = probe.npu_jobs({probe.NPU_SMI_INFO: record(b3),
                           probe.NPU_SMI_LIST: record(sample("npu_smi_list", "total-count-16"))})
    assert not [key for key, _, _ in jobs if "spod" in key or key == probe.NPU_SMI_MAP]


def spod(sdid: str, server: str = "4") -> str:
    return sample("npu_smi_spod_info", "shmem-a3").replace("16777216", sdid).replace(
        "Server Index : 4", f"Server Index : {server}")


def capture(commands: dict[str, CommandResult]) -> Capture:
    return Capture(host="a3", captured_at="2026-01-01T00:00:00+00:00",
                   options={"install_path": "/usr/local/Ascend"}, commands=commands)


def test_each_dies_sdid_lands_on_its_logical_device() -> None:
    # The map's A3 sample: NPU 1 chip 0 is logical device 2, not device 1.
    facts = facts_from_capture(capture({
        probe.NPU_SMI_MAP: ok(sample("npu_smi_map", "a3-phy-id")),
        "npu-smi info -t spod-info -i 0 -c 0": ok(spod("16777216")),
        "npu-smi info -t spod-info -i 0 -c 1": ok(spod("16842752")),
        "npu-smi info -t spod-info -i 1 -c 0": ok(spod("16908288", server="5")),
        "npu-smi info -t spod-info -i 1 -c 1": ok(spod("16973824")),
    }))
    devices = facts.network.devices
    assert {d: (p.super_device_id, p.super_pod_id, p.server_index)
            for d, p in devices.items()} == {0: ("16777216", "0", "4"), 1: ("16842752", "0", "4"),
                                             2: ("16908288", "0", "5")}
    # NPU 1 chip 1 is in no row of the map: a note, not a guess.
    assert any("-i 1 -c 1: npu-smi info -m names no device" in n for n in facts.notes)


def test_an_answer_without_an_sdid_is_kept_raw() -> None:
    busy = sample("npu_smi_spod_info", "device-busy")
    facts = facts_from_capture(capture({
        probe.NPU_SMI_MAP: ok(sample("npu_smi_map", "a3-phy-id")),
        "npu-smi info -t spod-info -i 0 -c 0": CommandResult(argv=[], rc=255, stdout=busy),
    }))
    port = facts.network.devices[0]
    assert port.super_device_id is None
    assert port.unparsed == {"npu-smi info -t spod-info -i 0 -c 0": busy.strip()}
    facts = facts_from_capture(capture({"npu-smi info -t spod-info -i 0 -c 0": ok(spod("1"))}))
    assert not facts.network.devices
    assert any("npu-smi info -m gave no chip map" in n for n in facts.notes)
