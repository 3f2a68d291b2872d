"""Chrome-trace timelines: torch_npu's trace_view.json, msprof's msprof_*.json and a plain
torch.profiler `*.pt.trace.json`.

What is read: the "Ascend Hardware" process's tasks (args `Task Type`: AI_CORE, AI_CPU, ...),
the "Overlap Analysis" process's lanes (Computing, Communication, Communication(Not
Overlapped), Free), the "CANN" process's AscendCL calls (aclrtMemcpy, aclrtSynchronize*),
host operators (`cat: cpu_op`) with their self time, and `ProfilerStep#N` marks. Lane and
process names: the trace_view description on
https://www.hiascend.com/document/detail/zh/canncommercial/latest/devaids/Profiling/atlasprofiling_16_1149.html
and the Chrome trace event format (ph X/M, ts and dur in us).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ascend_env.core.inputs import InputError
from ascend_env.perf.kernels import KernelTotals
from ascend_env.perf.model import Copies, Kernel, StepSplit
from ascend_env.perf.tables import read_json

HARDWARE = "Ascend Hardware"
OVERLAP = "Overlap Analysis"
LANES = ("Computing", "Communication", "Communication(Not Overlapped)", "Free")
# Host operators that block on the device: .item() reads one value back (aten::item calls
# aten::_local_scalar_dense, which copies device-to-host and synchronises).
SCALAR_READS = ("aten::_local_scalar_dense",)
HOST_COPIES = ("aten::to", "aten::copy_", "aten::_to_copy")
MEMCPY = "aclrtMemcpy"
SYNCS = ("aclrtSynchronizeStream", "aclrtSynchronizeDevice")


@dataclass
class Timeline:
    """What one trace file says."""

    path: Path
    device: KernelTotals = field(default_factory=KernelTotals)
    has_device: bool = False
    lanes: dict[str, float] = field(default_factory=dict)
    host_ops: KernelTotals = field(default_factory=KernelTotals)
    copies: Copies = field(default_factory=Copies)
    step_us: list[float] = field(default_factory=list)
    processes: list[str] = field(default_factory=list)

    def overlap_split(self, rank: str) -> StepSplit | None:
        """The whole window as one step, from the Overlap Analysis lanes (None: no lanes)."""
        if not self.lanes:
            return None
        communication = self.lanes.get("Communication", 0.0)
        not_overlapped = self.lanes.get("Communication(Not Overlapped)", 0.0)
        return StepSplit(rank=rank, steps=max(len(self.step_us), 1),
                         computing=self.lanes.get("Computing", 0.0) / max(len(self.step_us), 1),
                         communication_not_overlapped=not_overlapped / max(len(self.step_us), 1),
                         overlapped=(communication - not_overlapped) / max(len(self.step_us), 1),
                         free=self.lanes.get("Free", 0.0) / max(len(self.step_us), 1),
                         source=f"{self.path} (Overlap Analysis lanes)")


def _float(value: Any) -> float | None:
    """ts/dur: torch_npu writes ts as a string to keep its nanoseconds."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _events(document: Any, path: Path) -> list[dict[str, Any]]:
    if isinstance(document, dict):
        document = document.get("traceEvents")
    if not isinstance(document, list):
        raise InputError(f"trace {path}: not a Chrome trace (no list of events)")
    return [e for e in document if isinstance(e, dict)]


def read_trace(path: Path) -> Timeline:
    """One trace file, summed."""
    events = _events(read_json(path, what="trace"), path)
    timeline = Timeline(path)
    process: dict[Any, str] = {}
    lane: dict[tuple[Any, Any], str] = {}
    for event in events:
        if event.get("ph") == "M":
            name = (event.get("args") or {}).get("name")
            if event.get("name") == "process_name" and isinstance(name, str):
                process[event.get("pid")] = name
            elif event.get("name") == "thread_name" and isinstance(name, str):
                lane[(event.get("pid"), event.get("tid"))] = name
    timeline.processes = sorted(set(process.values()))
    host: dict[tuple[Any, Any], list[tuple[float, float, dict[str, Any]]]] = defaultdict(list)
    for event in events:
        if event.get("ph") != "X":
            continue
        dur = _float(event.get("dur"))
        ts = _float(event.get("ts"))
        if dur is None or ts is None or dur < 0:
            continue
        owner = process.get(event.get("pid"), "")
        name = str(event.get("name", ""))
        args: dict[str, Any] = event["args"] if isinstance(event.get("args"), dict) else {}
        if owner == HARDWARE:
            timeline.has_device = True
            core = str(args.get("Task Type") or "UNKNOWN").upper()
            timeline.device.add(Kernel(name=name, type=name, core=core, count=1,
                                       total_us=dur, max_us=dur))
        elif owner == OVERLAP:
            which = lane.get((event.get("pid"), event.get("tid")), name)
            if which in LANES:
                timeline.lanes[which] = timeline.lanes.get(which, 0.0) + dur
        elif name.startswith("AscendCL@"):
            _acl(timeline.copies, name.removeprefix("AscendCL@"), dur)
        elif name.startswith("ProfilerStep#"):
            timeline.step_us.append(dur)
        elif event.get("cat") == "cpu_op":
            host[(event.get("pid"), event.get("tid"))].append((ts, dur, event))
    for spans in host.values():
        _self_times(spans, timeline)
    return timeline


def _acl(copies: Copies, call: str, dur: float) -> None:
    if call.startswith(MEMCPY):
        copies.memcpy_calls += 1
        copies.memcpy_us += dur
    elif call in SYNCS:
        copies.syncs += 1
        copies.sync_us += dur


def _self_times(spans: list[tuple[float, float, dict[str, Any]]], timeline: Timeline) -> None:
    """Host operators on one thread with their self time (children's time taken out)."""
    spans.sort(key=lambda s: (s[0], -s[1]))
    stack: list[list[Any]] = []  # [end, own time left, event]

    def close(item: list[Any]) -> None:
        event = item[2]
        args: dict[str, Any] = event["args"] if isinstance(event.get("args"), dict) else {}
        name = str(event.get("name", ""))
        own = max(item[1], 0.0)
        timeline.host_ops.add(Kernel(
            name=name, type=name, core="HOST", count=1, total_us=own, max_us=own,
            input_shapes=_text(args.get("Input Dims")),
            input_dtypes=_text(args.get("Input type"))))
        if name in SCALAR_READS:
            timeline.copies.scalar_reads += 1
            timeline.copies.scalar_read_us += float(event["dur"])
        elif name == "aten::to":  # the outermost of to -> _to_copy -> copy_
            timeline.copies.to_device_calls += 1
            timeline.copies.to_device_us += float(event["dur"])

    for start, dur, event in spans:
        while stack and stack[-1][0] <= start:
            close(stack.pop())
        if stack:
            stack[-1][1] -= dur
        stack.append([start + dur, dur, event])
    while stack:
        close(stack.pop())


def _text(value: Any) -> str:
    if value is None or value == "":
        return ""
    if isinstance(value, list):
        return ";".join(",".join(str(d) for d in v) if isinstance(v, list) else str(v)
                        for v in value)
    return str(value)
