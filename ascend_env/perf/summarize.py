"""A profiler output folder (or file) to a Summary: find the files, read each, combine.

Where two files say the same thing, one is chosen so nothing counts twice: the cluster step
table over each rank's step_trace_time.csv over a trace's Overlap Analysis lanes; the
cluster communication file over each rank's communication.json; kernel_details.csv over the
trace's hardware tasks of the same rank.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import TypeVar

from ascend_env.core.inputs import InputError
from ascend_env.perf.communication import CommTotals, read_communication
from ascend_env.perf.findings import judge
from ascend_env.perf.kernels import KernelTotals, read_kernels
from ascend_env.perf.layout import Found, find, is_ascend_output
from ascend_env.perf.model import Copies, FileNote, Summary
from ascend_env.perf.steps import read_cluster_steps, read_rank_steps, spread
from ascend_env.perf.tables import Table
from ascend_env.perf.trace import Timeline, read_trace

TOP = 10
T = TypeVar("T")


class _Reader:
    """Reads files one by one, noting each one read and each one that could not be."""

    def __init__(self, summary: Summary) -> None:
        self.summary = summary

    def read(self, found: Found, action: Callable[[], T]) -> T | None:
        """ACTION's result, or None when the file could not be read (noted as unread)."""
        try:
            result = action()
        except InputError as exc:
            self.summary.unread.append(FileNote(str(found.path), found.kind, found.rank,
                                                str(exc)))
            return None
        self.summary.files.append(FileNote(str(found.path), found.kind, found.rank))
        if isinstance(result, Table) and result.unknown:
            self.summary.unknown_columns[str(found.path)] = result.unknown
        return result


def _add_copies(total: Copies, more: Copies) -> None:
    for name in ("memcpy_calls", "memcpy_us", "syncs", "sync_us", "scalar_reads",
                 "scalar_read_us", "to_device_calls", "to_device_us"):
        setattr(total, name, getattr(total, name) + getattr(more, name))


def summarize(root: Path, *, top: int = TOP, environment: Mapping[str, str] | None = None,
              fallbacks: dict[str, list[str]] | None = None) -> Summary:
    """The summary of the profiler output at ROOT; an InputError (exit 2) when nothing
    there could be read."""
    layout = find(root)
    if not layout.files:
        hint = ""
        if is_ascend_output(root) or any(is_ascend_output(p) for p in root.glob("*_ascend_*")):
            # torch_npu leaves raw data unparsed when its analysis was off or was cut short.
            hint = ("; a *_ascend_pt/_ascend_ms folder without ASCEND_PROFILER_OUTPUT is not "
                    "parsed yet: run torch_npu.profiler.profiler.analyse(PATH) (MindSpore: "
                    "its profiler's offline analyse) first")
        raise InputError(f"--from {root}: no profiler output found (trace_view.json, "
                         "kernel_details.csv, step_trace_time.csv, communication.json, "
                         f"*.pt.trace.json){hint}")
    summary = Summary(source=str(root), kind="", host_only=False, cpu_fallbacks=fallbacks)
    reader = _Reader(summary)
    summary.unread.extend(FileNote(str(p), "unknown", None, "not a file perf reads")
                          for p in layout.unknown)
    summary.unread.extend(FileNote(str(p), "skipped", None, why) for p, why in layout.skipped)
    by_kind: dict[str, list[Found]] = {}
    for found in layout.files:
        by_kind.setdefault(found.kind, []).append(found)

    _steps(by_kind, reader, summary)
    kernels = KernelTotals()
    kernel_ranks = {f.rank for f in by_kind.get("kernels", [])
                    if reader.read(f, partial(read_kernels, f.path, kernels)) is not None}
    timelines: list[tuple[Found, Timeline]] = []
    for found in by_kind.get("trace", []):
        timeline = reader.read(found, partial(read_trace, found.path))
        if timeline is not None:
            timelines.append((found, timeline))
    host_ops = KernelTotals()
    copies = Copies()
    split_ranks = {s.rank for s in summary.steps}
    cluster_steps = any(n.kind == "cluster_step_trace" for n in summary.files)
    for found, timeline in timelines:
        if found.rank not in kernel_ranks:
            for kernel in timeline.device.kernels.values():
                kernels.add(kernel)
        for kernel in timeline.host_ops.kernels.values():
            host_ops.add(kernel)
        _add_copies(copies, timeline.copies)
        summary.host_steps_us.extend(timeline.step_us)
        split = timeline.overlap_split(found.rank)
        if split is not None and found.rank not in split_ranks and not cluster_steps:
            summary.steps.append(split)
    _communication(by_kind, reader, summary)

    summary.core_types = kernels.core_list()
    summary.top_kernels = kernels.top(top)
    summary.ai_cpu = kernels.on_core("AI_CPU")
    summary.top_host_ops = host_ops.top(top)
    summary.copies = copies if timelines else None
    summary.steps.sort(key=lambda s: (len(s.rank), s.rank))
    summary.spread = spread(summary.steps)
    has_device = bool(kernels.kernels or summary.steps or summary.hccl_ops)
    summary.host_only = not has_device and bool(timelines)
    summary.kind = _kind(by_kind, summary.host_only)
    if not summary.files:
        reasons = "; ".join(n.note for n in summary.unread if n.kind != "unknown")
        raise InputError(f"--from {root}: no profiler file could be read: {reasons}")
    summary.findings = judge(summary, environment)
    return summary


def _steps(by_kind: dict[str, list[Found]], reader: _Reader, summary: Summary) -> None:
    for found in by_kind.get("cluster_step_trace", []):
        def cluster(f: Found = found) -> Table:
            splits, table = read_cluster_steps(f.path)
            summary.steps.extend(splits)
            return table
        reader.read(found, cluster)
    have = bool(summary.steps)
    for found in by_kind.get("step_trace", []):
        def rank_steps(f: Found = found) -> Table:
            splits, table = read_rank_steps(f.path, f.rank)
            if not have:
                summary.steps.extend(splits)
            return table
        reader.read(found, rank_steps)
    for found in by_kind.get("msprof_step_trace", []):
        summary.unread.append(FileNote(str(found.path), found.kind, found.rank,
                                       "msprof's iteration trace: not summarised (use the "
                                       "torch_npu/MindSpore step_trace_time.csv)"))


def _communication(by_kind: dict[str, list[Found]], reader: _Reader, summary: Summary) -> None:
    totals = CommTotals()
    cluster = [f for f in by_kind.get("cluster_communication", [])
               if reader.read(f, partial(read_communication, f.path, f.rank, totals))
               is not None]
    for found in by_kind.get("communication", []):
        if cluster:
            summary.unread.append(FileNote(str(found.path), found.kind, found.rank,
                                           "the cluster communication file covers it"))
        else:
            reader.read(found, partial(read_communication, found.path, found.rank, totals))
    summary.hccl_ops = sorted(totals.ops.values(), key=lambda o: -o.elapse_ms)
    summary.transports = sorted(totals.transports.values(), key=lambda t: t.transport)
    summary.rank_transports = sorted(totals.rank_transports.values(),
                                     key=lambda t: (t.transport, len(t.rank or ""), t.rank))


def _kind(by_kind: dict[str, list[Found]], host_only: bool) -> str:
    if host_only:
        return "torch.profiler"
    if any(k.startswith("cluster_") for k in by_kind):
        return "cluster"
    if any(f.path.name.startswith("op_summary") for f in by_kind.get("kernels", [])):
        return "msprof"
    return "torch_npu"

