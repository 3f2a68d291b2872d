"""A profiler output folder (or file) to a Summary: find the files, read each, combine.

Where two files say the same thing, one is chosen so nothing counts twice: the cluster step
table over each rank's step_trace_time.csv over a trace's Overlap Analysis lanes; the
cluster communication file over each rank's communication.json; a rank's kernel table over
its trace's hardware tasks. A file that cannot be read leaves the figures it held absent,
and says so: another source's figures, which mean something else (a trace's task types are
not a kernel table's core types), never stand in for them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import TypeVar

from ascend_env.core.inputs import InputError
from ascend_env.perf.communication import CommTotals, read_communication
from ascend_env.perf.findings import judge
from ascend_env.perf.kernels import KernelTable, KernelTotals, read_kernels
from ascend_env.perf.layout import Found, find, is_ascend_output
from ascend_env.perf.model import Copies, FileNote, StepSplit, Summary
from ascend_env.perf.steps import read_cluster_steps, read_rank_steps, spread
from ascend_env.perf.tables import Table
from ascend_env.perf.trace import Timeline, read_trace

TOP = 10
T = TypeVar("T")
COPY_FIELDS = ("memcpy_calls", "memcpy_us", "syncs", "sync_us", "scalar_reads",
               "scalar_read_us", "to_device_calls", "to_device_us")
NOT_READ = {
    "msprof_step_trace": "msprof's iteration trace: not summarised (its marks span whole "
                         "iterations; the step split comes from step_trace_time.csv)",
    "msprof_hccl": "msprof's HCCL task timeline: not read (HCCL figures come from "
                   "communication.json / cluster_communication.json, which this output lacks)",
}


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
        table = result.table if isinstance(result, KernelTable) else result
        note = result.note() if isinstance(result, KernelTable) else ""
        self.summary.files.append(FileNote(str(found.path), found.kind, found.rank, note))
        if isinstance(table, Table) and table.unknown:
            self.summary.unknown_columns[str(found.path)] = table.unknown
        return result


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
    summary.unread.extend(FileNote(str(p), "unused", None, "written by the profiler, not used "
                                   "by perf") for p in layout.unused)
    summary.unread.extend(FileNote(str(p), "skipped", None, why) for p, why in layout.skipped)
    by_kind: dict[str, list[Found]] = {}
    for found in layout.files:
        by_kind.setdefault(found.kind, []).append(found)
    for kind, why in NOT_READ.items():
        summary.unread.extend(FileNote(str(f.path), f.kind, f.rank, why)
                              for f in by_kind.get(kind, []))

    _steps(by_kind, reader, summary)
    tables = KernelTotals()
    table_ranks = {f.rank for f in by_kind.get("kernels", [])}
    for found in by_kind.get("kernels", []):
        table = reader.read(found, partial(read_kernels, found.path))
        if table is not None:
            tables.merge(table.totals)
    failed = sorted({n.rank or "" for n in summary.unread if n.kind == "kernels"})
    summary.absent.extend(
        f"kernel figures of rank {r}: its kernel table could not be read (see files); a "
        "trace's task types do not stand in for them" for r in failed)
    timelines = _timelines(by_kind, reader)
    _device_and_host(summary, tables, table_ranks, timelines, top)
    _communication(by_kind, reader, summary)
    summary.absent.extend(_absent(summary))
    summary.steps.sort(key=lambda s: (len(s.rank), s.rank))
    summary.spread = spread(summary.steps)
    has_device = bool(summary.core_types or summary.task_types or summary.steps
                      or summary.hccl_ops or any(t.step_marks for t in timelines.values()))
    summary.host_only = not has_device and bool(timelines)
    summary.kind = _kind(by_kind, summary.host_only)
    if not summary.files:
        reasons = "; ".join(n.note for n in summary.unread
                            if n.kind not in ("unknown", "unused", "skipped"))
        raise InputError(f"--from {root}: no profiler file could be read: {reasons}")
    summary.findings = judge(summary, environment)
    return summary


ABSENT = {
    "step_trace": "the step split of rank {rank}",
    "cluster_step_trace": "the cluster's step split (each rank's step table stands in where "
                          "it was read: the same figures)",
    "trace": "rank {rank}'s timeline figures (host operators, host-device calls, hardware "
             "tasks, Overlap Analysis lanes)",
    "communication": "rank {rank}'s HCCL figures",
    "cluster_communication": "the cluster's HCCL figures",
}


def _absent(summary: Summary) -> list[str]:
    """What each file that could not be read leaves out (kernel tables are said apart)."""
    return [f"{ABSENT[n.kind].format(rank=n.rank)}: {n.path} could not be read (see files)"
            for n in summary.unread if n.kind in ABSENT
            and not n.note.startswith("the cluster communication file covers")]


def _timelines(by_kind: dict[str, list[Found]], reader: _Reader) -> dict[str, Timeline]:
    """Each rank's traces, merged: msprof writes one file per iteration, and a rank is a
    device, never a file."""
    merged: dict[str, Timeline] = {}
    for found in by_kind.get("trace", []):
        timeline = reader.read(found, partial(read_trace, found.path))
        if timeline is None:
            continue
        mine = merged.get(found.rank)
        if mine is None:
            merged[found.rank] = timeline
            continue
        mine.device.merge(timeline.device)
        mine.host_ops.merge(timeline.host_ops)
        mine.has_device |= timeline.has_device
        mine.step_marks += timeline.step_marks
        mine.host_ops_dropped |= timeline.host_ops_dropped
        mine.step_us.extend(timeline.step_us)
        for lane, time in timeline.lanes.items():
            mine.lanes[lane] = mine.lanes.get(lane, 0.0) + time
        for name in COPY_FIELDS:
            setattr(mine.copies, name, getattr(mine.copies, name)
                    + getattr(timeline.copies, name))
        mine.copies.acl_recorded |= timeline.copies.acl_recorded
        mine.copies.host_ops_recorded |= timeline.copies.host_ops_recorded
    return merged


def _overlap_split(rank: str, timeline: Timeline) -> StepSplit | None:
    """A rank's traced window as one step split, from its Overlap Analysis lanes."""
    if not timeline.lanes:
        return None
    steps = max(len(timeline.step_us), 1)
    lanes = timeline.lanes
    communication = lanes.get("Communication", 0.0)
    not_overlapped = lanes.get("Communication(Not Overlapped)", 0.0)
    return StepSplit(rank=rank, steps=steps, computing=lanes.get("Computing", 0.0) / steps,
                     communication_not_overlapped=not_overlapped / steps,
                     overlapped=(communication - not_overlapped) / steps,
                     free=lanes.get("Free", 0.0) / steps,
                     source=f"{timeline.path} (Overlap Analysis lanes)")


def _device_and_host(summary: Summary, tables: KernelTotals, table_ranks: set[str],
                     timelines: dict[str, Timeline], top: int) -> None:
    kernels = KernelTotals()
    kernels.merge(tables)
    tasks = KernelTotals()
    host_ops = KernelTotals()
    copies = Copies(acl_recorded=False, host_ops_recorded=False)
    # A rank whose step table could not be read gets no split from its trace either.
    split_ranks = {s.rank for s in summary.steps} | \
        {n.rank for n in summary.unread if n.kind == "step_trace" and n.rank}
    cluster_steps = any(n.kind == "cluster_step_trace" for n in summary.files)
    for rank, timeline in timelines.items():
        if rank not in table_ranks:  # a rank with a kernel table, read or not, uses only it
            tasks.merge(timeline.device)
        host_ops.merge(timeline.host_ops)
        for name in COPY_FIELDS:
            setattr(copies, name, getattr(copies, name) + getattr(timeline.copies, name))
        copies.acl_recorded |= timeline.copies.acl_recorded
        copies.host_ops_recorded |= timeline.copies.host_ops_recorded
        summary.host_steps_us.extend(timeline.step_us)
        split = _overlap_split(rank, timeline)
        if split is not None and rank not in split_ranks and not cluster_steps:
            summary.steps.append(split)
        if timeline.host_ops_dropped:
            summary.absent.append(f"host operators of rank {rank}: more spans than perf keeps "
                                  "in memory; not summed")
    kernels.merge(tasks)
    summary.core_types = tables.core_list()
    summary.task_types = tasks.core_list()
    summary.kernel_types = kernels.type_list()
    summary.top_kernels = kernels.top(top)
    summary.ai_cpu = kernels.on_core("AI_CPU")
    summary.top_host_ops = host_ops.top(top)
    if timelines and (copies.acl_recorded or copies.host_ops_recorded):
        summary.copies = copies
    elif timelines:
        summary.absent.append("host-device copies and syncs: the traces recorded neither "
                              "AscendCL calls nor host operators")


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
    if any(f.path.name.startswith(("op_summary", "msprof")) or "PROF_" in str(f.path)
           for files in by_kind.values() for f in files):
        return "msprof"
    return "torch_npu"
