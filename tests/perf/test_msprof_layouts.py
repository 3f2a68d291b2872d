"""msprof's `PROF_*` folders in the older `device_N/{timeline,summary}` layout: a rank is a
device, however many per-iteration files it holds; msprof's iteration marks on the hardware
process are never device work; hccl_*.json is listed as not read; host-device figures are
shown only where the trace recorded their layer.

The device tasks are the real hardware tasks of msprof-analyze's trace_view.json test data;
the iteration mark and the AscendCL calls are msprof's own unit-test events
(tests/data/real/msprof-timeline/SOURCE); the file and folder names follow msprof's export
naming (analysis/common_func/file_slice_helper.py in Ascend/msprof).
"""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from ascend_env.perf.summarize import summarize
from tests.cli_invoke import invoke
from tests.perf.profiler_files import KERNEL_DETAILS, TRACE_VIEW, needs_fixtures
from tests.perf.test_kernels import OP_SUMMARY_HEADER

REAL = Path(__file__).resolve().parents[1] / "data" / "real" / "msprof-timeline"
STEP_LANE = REAL / "step_trace_lane.json"
ACL_CALLS = REAL / "acl_calls.json"
ITERATIONS = 10


def _device_events() -> list[dict[str, Any]]:
    """The fixture's Ascend Hardware and Overlap Analysis processes (their metadata and
    tasks), and nothing of the host."""
    events: list[dict[str, Any]] = json.loads(TRACE_VIEW.read_text())
    keep = {e["pid"] for e in events if e.get("name") == "process_name"
            and e["args"]["name"] in ("Ascend Hardware", "Overlap Analysis")}
    return [e for e in events if e.get("pid") in keep]


def _hardware_sums(events: list[dict[str, Any]]) -> dict[str, float]:
    hardware = {e["pid"] for e in events if e.get("name") == "process_name"
                and e["args"]["name"] == "Ascend Hardware"}
    sums: dict[str, float] = defaultdict(float)
    for event in events:
        if event.get("ph") == "X" and event["pid"] in hardware:
            sums[event["args"]["Task Type"].upper()] += float(event["dur"])
    return sums


def _prof(root: Path, name: str, device: int, *, marks: bool = True) -> Path:
    """One process's PROF folder of a two-device MindSpore run: device_N's timeline, one
    msprof_*.json and one hccl_*.json per iteration."""
    timeline = root / name / f"device_{device}" / "timeline"
    timeline.mkdir(parents=True)
    events = _device_events()
    if marks:
        events += json.loads(STEP_LANE.read_text())
    for iteration in range(1, ITERATIONS + 1):
        (timeline / f"msprof_{device}_1_{iteration}.json").write_text(json.dumps(events))
        (timeline / f"hccl_{device}_1_{iteration}.json").write_text("[]")
    (root / name / "host" / "data").mkdir(parents=True)
    (root / name / "host" / "data" / "host_start.log").write_text("raw\n")
    return root / name


@needs_fixtures
def test_device_layout_ranks_are_devices_and_marks_are_not_work(tmp_path: Path) -> None:
    _prof(tmp_path, "PROF_000001_20260101000000_AAA", 0)
    _prof(tmp_path, "PROF_000002_20260101000000_BBB", 1)
    summary = summarize(tmp_path)
    assert summary.kind == "msprof"
    # 2 devices x 10 per-iteration files: two ranks, not twenty.
    assert {n.rank for n in summary.files} == {"0", "1"}
    assert len(summary.files) == 2 * ITERATIONS
    assert sorted(s.rank for s in summary.steps) == ["0", "1"]
    assert summary.spread is not None and summary.spread.spread == pytest.approx(0.0)
    # Device time is the hardware tasks', every iteration of both devices; the iteration
    # mark (Reduce_1_0, 2217.88 us, on the hardware process's Step Trace lane) is in none.
    expected = _hardware_sums(_device_events())
    got = {t.core: t.time_us for t in summary.task_types}
    assert got == pytest.approx({k: v * ITERATIONS * 2 for k, v in expected.items()})
    assert all(k.name != "Reduce_1_0" for k in summary.top_kernels)
    assert not summary.host_only
    # Without a kernel table the core-type table stays empty: task types are not core types.
    assert summary.core_types == []
    # hccl_*.json: listed, with why; the raw host data is one note for its folder.
    hccl = [n for n in summary.unread if n.kind == "msprof_hccl"]
    assert len(hccl) == 2 * ITERATIONS
    assert "HCCL task timeline: not read" in hccl[0].note
    raw = [n for n in summary.unread if n.kind == "skipped"]
    assert sorted(Path(n.path).name for n in raw) == ["data", "data"]
    # No AscendCL layer and no host operator in these traces: no line of zeros.
    assert summary.copies is None
    assert any("recorded neither" in a for a in summary.absent)


@needs_fixtures
def test_device_layout_text_and_json(tmp_path: Path) -> None:
    _prof(tmp_path, "PROF_000001_20260101000000_AAA", 0)
    result = invoke("perf", "--from", str(tmp_path))
    assert result.code == 0, result.err
    assert "[msprof]" in result.out
    assert "device tasks by task type" in result.out
    assert "host-device:" not in result.out
    assert "absent: host-device copies and syncs" in result.out
    document = json.loads(invoke("perf", "--from", str(tmp_path), "--json").out)
    assert {f["rank"] for f in document["files"]} == {"0"}
    assert document["copies"] is None


def test_iteration_mark_alone_is_no_device_work(tmp_path: Path) -> None:
    """msprof's unit-test timeline: the hardware process holds only the iteration mark."""
    timeline = tmp_path / "PROF_000001_20260101000000_AAA" / "device_0" / "timeline"
    timeline.mkdir(parents=True)
    (timeline / "msprof_0_1_1.json").write_bytes(STEP_LANE.read_bytes())
    summary = summarize(tmp_path)
    assert summary.task_types == [] and summary.top_kernels == []
    assert summary.steps == []
    assert not summary.host_only  # a device ran: its iteration was marked


def test_ascendcl_process_is_a_recorded_layer(tmp_path: Path) -> None:
    """msprof's "AscendCL" process names calls without torch_npu's prefix: recorded, with no
    copy or sync among them (zeros that are measurements), and none of it device work."""
    trace = tmp_path / "msprof_20250215160320.json"
    trace.write_bytes(ACL_CALLS.read_bytes())
    summary = summarize(trace)
    assert summary.copies is not None
    assert summary.copies.acl_recorded and not summary.copies.host_ops_recorded
    assert (summary.copies.memcpy_calls, summary.copies.syncs) == (0, 0)
    assert summary.task_types == []
    text = invoke("perf", "--from", str(trace)).out
    assert "0 aclrtMemcpy" in text
    assert ".item() and aten::to not recorded" in text


@needs_fixtures
def test_device_layout_with_summaries_uses_the_kernel_table(tmp_path: Path) -> None:
    """device_0/summary/op_summary_0_1_1.csv (msprof's header, the fixture's real kernels)
    gives the core types; the same device's trace tasks do not add to them."""
    prof = _prof(tmp_path, "PROF_000001_20260101000000_AAA", 0)
    summary_dir = prof / "device_0" / "summary"
    summary_dir.mkdir()
    with KERNEL_DETAILS.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    with (summary_dir / "op_summary_0_1_1.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(OP_SUMMARY_HEADER.split(","))
        for row in rows:
            writer.writerow(["0", row["Model ID"], row["Task ID"], row["Stream ID"], row["Name"],
                             row["Type"], row["OP State"], row["Accelerator Core"],
                             row["Start Time(us)"], row["Duration(us)"], row["Wait Time(us)"],
                             row["Block Dim"], row["HF32 Eligible"], row["Input Shapes"],
                             row["Input Data Types"], row["Input Formats"], row["Output Shapes"],
                             row["Output Data Types"], row["Output Formats"]])
    (summary_dir / "step_trace_0_1.csv").write_text("Iteration ID,Iteration Time(us)\n1,5\n")
    summary = summarize(tmp_path)
    expected: dict[str, float] = defaultdict(float)
    for row in rows:
        expected[row["Accelerator Core"]] += float(row["Duration(us)"])
    assert {c.core: c.time_us for c in summary.core_types} == pytest.approx(dict(expected))
    assert summary.task_types == []
    assert {n.rank for n in summary.files} == {"0"}
    step = next(n for n in summary.unread if n.kind == "msprof_step_trace")
    assert "iteration trace" in step.note


def test_rank_id_in_info_json_names_the_device(tmp_path: Path) -> None:
    """msprof-analyze takes a device's rank from `rank_id` in device_N/info.json.N
    (cluster_data_preprocess/msprof_data_preprocessor.py); so does perf."""
    device = tmp_path / "PROF_000001_20260101000000_AAA" / "device_3"
    (device / "timeline").mkdir(parents=True)
    (device / "info.json.3").write_text(json.dumps({"devices": "3", "rank_id": 11}))
    (device / "timeline" / "msprof_3_1_1.json").write_bytes(STEP_LANE.read_bytes())
    summary = summarize(tmp_path)
    assert {n.rank for n in summary.files} == {"11"}
    assert summary.unread == []  # info.json is the layout's own metadata
