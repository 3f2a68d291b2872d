"""Chrome-trace timelines: torch_npu's trace_view.json, msprof's msprof_*.json and a plain
torch.profiler `*.pt.trace.json`, streamed event by event (ijson): memory grows with the
kinds of events, not their number.

What is read: the "Ascend Hardware" process's tasks (args `Task Type`: AI_CORE, AI_CPU, ...),
the "Overlap Analysis" process's lanes (Computing, Communication, Communication(Not
Overlapped), Free), AscendCL calls (aclrtMemcpy, aclrtSynchronize*; `AscendCL@...` under
torch_npu's "CANN" process, plain names under msprof's "AscendCL" process), host operators
(`cat: cpu_op`) with their self time, and `ProfilerStep#N` marks. Lane and process names: the
trace_view description on
https://www.hiascend.com/document/detail/zh/canncommercial/latest/devaids/Profiling/atlasprofiling_16_1149.html
and the Chrome trace event format (ph X/M, ts and dur in us).

msprof puts its iteration marks in the hardware process too, on a lane of their own
("Step Trace(Model ID:1)", events such as Reduce_1_0 with an `Iteration ID` and no
`Task Type`: msprof's own unit test test_msprof_data_storage.py and analysis/viewer/training/
step_trace_viewer.py in Ascend/msprof). They span whole iterations: they are never device work.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ijson

from ascend_env.core.inputs import InputError
from ascend_env.perf.host_ops import HostSpans
from ascend_env.perf.kernels import KernelTotals
from ascend_env.perf.model import Copies, Kernel
from ascend_env.perf.tables import open_regular

HARDWARE = "Ascend Hardware"
OVERLAP = "Overlap Analysis"
LANES = ("Computing", "Communication", "Communication(Not Overlapped)", "Free")
ACL_PROCESSES = ("AscendCL", "CANN")
STEP_LANE = "Step Trace"
MEMCPY = "aclrtMemcpy"
SYNCS = ("aclrtSynchronizeStream", "aclrtSynchronizeDevice")
# Distinct (lane, event name, task type) sums kept per trace; a real trace has thousands.
MAX_KINDS = 500_000


@dataclass
class Timeline:
    """What one trace file says."""

    path: Path
    device: KernelTotals = field(default_factory=KernelTotals)
    has_device: bool = False
    step_marks: int = 0  # msprof's iteration marks on the hardware process: not device work
    lanes: dict[str, float] = field(default_factory=dict)
    host_ops: KernelTotals = field(default_factory=KernelTotals)
    host_ops_dropped: bool = False
    copies: Copies = field(default_factory=Copies)
    step_us: list[float] = field(default_factory=list)
    processes: list[str] = field(default_factory=list)


def _float(value: Any) -> float | None:
    """ts/dur: torch_npu writes ts as a string to keep its nanoseconds."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


@dataclass
class _Scan:
    """The running sums of one pass over the events, resolved once the names are known."""

    process: dict[Any, str] = field(default_factory=dict)
    lane: dict[tuple[Any, Any], str] = field(default_factory=dict)
    # (pid, tid) -> (name, task type, iteration mark) -> [count, total, longest]
    sums: dict[tuple[Any, Any], dict[tuple[str, str, bool], list[float]]] = \
        field(default_factory=lambda: defaultdict(dict))
    kinds: int = 0
    acl_calls: dict[str, list[float]] = field(default_factory=dict)
    host: HostSpans = field(default_factory=HostSpans)
    steps: list[float] = field(default_factory=list)

    def event(self, event: dict[str, Any], path: Path) -> None:
        phase = event.get("ph")
        if phase == "M":
            name = (event.get("args") or {}).get("name")
            if event.get("name") == "process_name" and isinstance(name, str):
                self.process[event.get("pid")] = name
            elif event.get("name") == "thread_name" and isinstance(name, str):
                self.lane[(event.get("pid"), event.get("tid"))] = name
            return
        if phase != "X":
            return
        dur = _float(event.get("dur"))
        ts = _float(event.get("ts"))
        if dur is None or ts is None or dur < 0:
            return
        name = str(event.get("name", ""))
        args = event.get("args")
        args = args if isinstance(args, dict) else {}
        if name.startswith("AscendCL@"):
            self._acl(name.removeprefix("AscendCL@"), dur)
        elif name.startswith("ProfilerStep#"):
            self.steps.append(dur)
        elif event.get("cat") == "cpu_op":
            self.host.add((event.get("pid"), event.get("tid")), ts, dur, name, args)
        else:
            task = args.get("Task Type")
            mark = task is None and "Iteration ID" in args
            lane = self.sums[(event.get("pid"), event.get("tid"))]
            key = (name, str(task).upper() if task is not None else "", mark)
            known = lane.get(key)
            if known is None:
                self.kinds += 1
                if self.kinds > MAX_KINDS:
                    raise InputError(f"trace {path}: more than {MAX_KINDS} distinct kinds of "
                                     "events: not summed")
                lane[key] = [1.0, dur, dur]
            else:
                known[0] += 1
                known[1] += dur
                known[2] = max(known[2], dur)

    def _acl(self, call: str, dur: float) -> None:
        known = self.acl_calls.setdefault(call, [0.0, 0.0])
        known[0] += 1
        known[1] += dur

    def resolve(self, timeline: Timeline) -> None:
        timeline.processes = sorted(set(self.process.values()))
        for (pid, tid), kinds in self.sums.items():
            owner = self.process.get(pid, "")
            lane = self.lane.get((pid, tid), "")
            for (name, task, mark), (count, total, longest) in kinds.items():
                if owner == HARDWARE:
                    if mark or lane.startswith(STEP_LANE):
                        timeline.step_marks += int(count)
                        continue
                    timeline.has_device = True
                    timeline.device.add(Kernel(name=name, type=name, core=task or "UNKNOWN",
                                               count=int(count), total_us=total,
                                               max_us=longest))
                elif owner == OVERLAP and (lane or name) in LANES:
                    which = lane or name
                    timeline.lanes[which] = timeline.lanes.get(which, 0.0) + total
                elif owner == "AscendCL":  # msprof names the calls without a prefix
                    known = self.acl_calls.setdefault(name, [0.0, 0.0])
                    known[0] += count
                    known[1] += total
        copies = timeline.copies
        for call, (count, total) in self.acl_calls.items():
            if call.startswith(MEMCPY):
                copies.memcpy_calls += int(count)
                copies.memcpy_us += total
            elif call in SYNCS:
                copies.syncs += int(count)
                copies.sync_us += total
        copies.acl_recorded = bool(self.acl_calls) or any(
            p in ACL_PROCESSES for p in self.process.values())
        copies.host_ops_recorded = self.host.count > 0
        timeline.step_us = self.steps
        timeline.host_ops_dropped = self.host.dropped
        self.host.summarize(timeline.host_ops, copies)


def events(path: Path) -> Any:
    """The trace's events one by one: a top-level list, or `traceEvents` of an object."""
    handle = open_regular(path, what="trace")
    try:
        start = handle.read(64).lstrip()[:1]
        handle.seek(0)
        if start not in (b"[", b"{"):
            raise InputError(f"trace {path}: not JSON (neither a list nor an object)")
        prefix = "item" if start == b"[" else "traceEvents.item"
        seen = 0
        for event in ijson.items(handle, prefix, use_float=True):
            seen += 1
            if isinstance(event, dict):
                yield event
        if start == b"{" and seen == 0:
            raise InputError(f"trace {path}: not a Chrome trace (no list of events)")
    except ijson.JSONError as exc:
        raise InputError(f"trace {path}: not JSON ({str(exc).splitlines()[0]})") from exc
    finally:
        handle.close()


def read_trace(path: Path) -> Timeline:
    """One trace file, summed as it streams by."""
    scan = _Scan()
    for event in events(path):
        scan.event(event, path)
    timeline = Timeline(path)
    scan.resolve(timeline)
    return timeline
