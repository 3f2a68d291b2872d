"""torch_npu's trace_view.json: hardware tasks by type, AI CPU tasks, Overlap Analysis lanes and
AscendCL copies/syncs, against counts made here and msprof-analyze's reading of the file."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from ascend_env.perf.summarize import summarize
from ascend_env.perf.trace import read_trace
from tests.perf.profiler_files import TRACE_VIEW, needs_fixtures

pytestmark = needs_fixtures


def _events() -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = json.loads(TRACE_VIEW.read_text())
    return events


def _pid(events: list[dict[str, Any]], name: str) -> int:
    return int(next(e["pid"] for e in events
                    if e.get("name") == "process_name" and e["args"]["name"] == name))


def test_hardware_tasks_by_type() -> None:
    events = _events()
    hardware = _pid(events, "Ascend Hardware")
    expected: dict[str, float] = defaultdict(float)
    for event in events:
        if event.get("ph") == "X" and event["pid"] == hardware:
            expected[event["args"]["Task Type"].upper()] += float(event["dur"])
    timeline = read_trace(TRACE_VIEW)
    got = {c.core: c.time_us for c in timeline.device.core_list()}
    assert got == pytest.approx(dict(expected))
    assert set(got) == {"OTHER", "AI_CPU"}


def test_ai_cpu_tasks_equal_msprof_analyze(tmp_path: Path) -> None:
    """msprof-analyze's computation dataset picks the tasks by Task Type from the same file
    (laid out as a *_ascend_pt folder, the file linked)."""
    timeline_dataset = pytest.importorskip("msprof_analyze.advisor.dataset.timeline_event_dataset")
    output = tmp_path / "w_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    output.mkdir(parents=True)
    (output / "trace_view.json").symlink_to(TRACE_VIEW.resolve())
    dataset = timeline_dataset.ComputationAnalysisDataset(str(tmp_path / "w_ascend_pt"), {})
    theirs = {(v["name"], float(v["dur"])) for v in dataset.ops_with_task_type.values()
              if v["Task Type"] == "AI_CPU"}
    summary = summarize(TRACE_VIEW)
    ours = {(k.name, k.total_us) for k in summary.ai_cpu}
    assert ours == theirs and len(ours) == 2
    finding = next(f for f in summary.findings if f.id == "aicpu-ops")
    assert finding.threshold == 20.0 and "aicpu_checker.py" in finding.source
    assert finding.observed == pytest.approx(max(d for _, d in theirs), abs=1e-3)


def test_overlap_lanes_make_the_step_split() -> None:
    events = _events()
    overlap = _pid(events, "Overlap Analysis")
    lanes = {e["tid"]: e["args"]["name"] for e in events
             if e.get("name") == "thread_name" and e["pid"] == overlap}
    sums: dict[str, float] = defaultdict(float)
    for event in events:
        if event.get("ph") == "X" and event["pid"] == overlap:
            sums[lanes[event["tid"]]] += float(event["dur"])
    [split] = summarize(TRACE_VIEW).steps
    assert split.computing == pytest.approx(sums["Computing"])
    assert split.free == pytest.approx(sums["Free"])
    assert split.communication_not_overlapped == 0.0  # one device, no HCCL lane events
    free = next(f for f in summarize(TRACE_VIEW).findings if f.id == "free-time")
    assert free.observed == pytest.approx(sums["Free"] / (sums["Free"] + sums["Computing"]),
                                          abs=1e-4)


def test_copies_and_syncs() -> None:
    events = [e for e in _events() if e.get("ph") == "X"]
    memcpy = [e for e in events if e["name"].startswith("AscendCL@aclrtMemcpy")]
    syncs = [e for e in events if e["name"] in ("AscendCL@aclrtSynchronizeStream",
                                                "AscendCL@aclrtSynchronizeDevice")]
    scalar = [e for e in events if e["name"] == "aten::_local_scalar_dense"]
    copies = summarize(TRACE_VIEW).copies
    assert copies is not None
    assert (copies.memcpy_calls, copies.syncs, copies.scalar_reads) == \
        (len(memcpy), len(syncs), len(scalar)) == (6, 6, 45)
    assert copies.memcpy_us == pytest.approx(sum(float(e["dur"]) for e in memcpy))


def test_host_ops_self_time_is_at_most_inclusive() -> None:
    events = [e for e in _events() if e.get("ph") == "X" and e.get("cat") == "cpu_op"
              and not e["name"].startswith("ProfilerStep#")]
    inclusive: dict[str, float] = defaultdict(float)
    for event in events:
        inclusive[event["name"]] += float(event["dur"])
    timeline = read_trace(TRACE_VIEW)
    for kernel in timeline.host_ops.kernels.values():
        assert 0.0 <= kernel.total_us <= inclusive[kernel.name] + 1e-6
    # A leaf operator (nothing runs inside aten::empty) keeps its whole time.
    empty = sum(k.total_us for k in timeline.host_ops.kernels.values() if k.name == "aten::empty")
    assert empty == pytest.approx(inclusive["aten::empty"])
    assert timeline.step_us == [pytest.approx(14091.97)]


def test_step_split_equals_msprof_analyze_overall(tmp_path: Path) -> None:
    """msprof-analyze's overall disaggregation (its compare tool, which the advisor's 10% free
    time rule reads) of the same trace: end-to-end, computing, uncovered communication and
    free time."""
    interface = pytest.importorskip(
        "msprof_analyze.compare_tools.compare_interface.comparison_interface")
    constant = pytest.importorskip("msprof_analyze.prof_common.constant")
    output = tmp_path / "w_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    output.mkdir(parents=True)
    (output / "trace_view.json").symlink_to(TRACE_VIEW.resolve())
    theirs = interface.ComparisonInterface(str(tmp_path / "w_ascend_pt")).disaggregate_perf(
        constant.Constant.OVERALL_COMPARE)["overall"]
    [split] = summarize(TRACE_VIEW).steps
    assert split.total / 1000 == pytest.approx(theirs["e2e_time_ms"], abs=1e-6)
    assert split.computing / 1000 == pytest.approx(theirs["computing_time_ms"], abs=1e-6)
    assert split.communication_not_overlapped / 1000 == pytest.approx(
        theirs["uncovered_communication_time_ms"], abs=1e-6)
    assert split.free / 1000 == pytest.approx(theirs["free_time_ms"], abs=1e-6)
