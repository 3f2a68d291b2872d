"""Step time per rank: step_trace_time.csv (one rank), cluster_step_trace_time.csv (all ranks),
and the spread across ranks.

Column meanings: the profiler's "step_trace_time.csv" page (Computing: device compute time;
Communication(Not Overlapped): communication not hidden under compute; Overlapped: compute
and communication at once; Free: the device idle; Stage: the step without Bubble; Bubble:
pipeline waits on receives; Preparing: from the step start to its first operator),
https://www.hiascend.com/document/detail/zh/canncommercial/latest/devaids/Profiling/atlasprofiling_16_1149.html
"""

from __future__ import annotations

from pathlib import Path

from ascend_env.perf.model import RankSpread, StepSplit
from ascend_env.perf.tables import Table, TableReader, cell, number

STEP_FIELDS = ("step", "device", "computing", "comm_not_overlapped", "overlapped",
               "communication", "free", "stage", "bubble", "preparing",
               "comm_not_overlapped_no_receive")
CLUSTER_FIELDS = ("step", "row_type", "index", *STEP_FIELDS[2:])
PARTS = ("computing", "comm_not_overlapped", "free")


class _Sums:
    """One rank's per-step figures, summed row by row."""

    def __init__(self, table: Table) -> None:
        self.fields = [f for f in ("computing", "comm_not_overlapped", "overlapped", "free",
                                   "preparing", "bubble") if table.has(f)]
        self.at = [table.index[f] for f in self.fields]
        self.sums = [0.0] * len(self.fields)
        self.steps = 0

    def add(self, row: list[str]) -> None:
        self.steps += 1
        for position, at in enumerate(self.at):
            self.sums[position] += number(cell(row, at)) or 0.0

    def split(self, rank: str, source: str) -> StepSplit:
        """The mean step of the rows added."""
        means = {f: s / self.steps if self.steps else 0.0
                 for f, s in zip(self.fields, self.sums, strict=True)}
        return StepSplit(rank=rank, steps=self.steps, computing=means.get("computing", 0.0),
                         communication_not_overlapped=means.get("comm_not_overlapped", 0.0),
                         overlapped=means.get("overlapped", 0.0), free=means.get("free", 0.0),
                         preparing=means.get("preparing"), bubble=means.get("bubble"),
                         source=source)


def read_rank_steps(path: Path, rank: str) -> tuple[list[StepSplit], Table]:
    """One rank's step_trace_time.csv (one row per step; Device_id names the rank where the
    file holds several devices)."""
    with TableReader(path, STEP_FIELDS, what="step_trace_time.csv") as reader:
        table = reader.table
        device = table.index.get("device")
        by_device: dict[str, _Sums] = {}
        for row in reader.rows():
            key = cell(row, device)
            sums = by_device.get(key)
            if sums is None:
                sums = by_device[key] = _Sums(table)
            sums.add(row)
    if len(by_device) <= 1:  # one file, one rank
        return [s.split(rank, str(path)) for s in by_device.values()], table
    return [s.split(d, str(path)) for d, s in by_device.items()], table


def read_cluster_steps(path: Path) -> tuple[list[StepSplit], Table]:
    """cluster_step_trace_time.csv: its `rank` rows (its `stage` rows are the maxima over a
    pipeline stage's ranks, not a rank)."""
    with TableReader(path, CLUSTER_FIELDS, what="cluster_step_trace_time.csv") as reader:
        table = reader.table
        kind, index = table.index.get("row_type"), table.index.get("index")
        by_rank: dict[str, _Sums] = {}
        for row in reader.rows():
            if cell(row, kind).lower() != "rank":
                continue
            rank = cell(row, index)
            sums = by_rank.get(rank)
            if sums is None:
                sums = by_rank[rank] = _Sums(table)
            sums.add(row)
    return [s.split(r, str(path)) for r, s in by_rank.items()], table


def spread(splits: list[StepSplit]) -> RankSpread | None:
    """Slowest and fastest rank, and how far apart: (max - min) / mean, as msprof-analyze's
    slow-rank analysis measures each part (advisor/analyzer/cluster/slow_rank_analyzer.py,
    compute_max_gap_ratio)."""
    if len(splits) < 2:
        return None
    totals = [s.total for s in splits]
    mean_total = sum(totals) / len(totals)
    if mean_total <= 0:
        return None
    slowest = max(splits, key=lambda s: s.total)
    fastest = min(splits, key=lambda s: s.total)
    gaps = {}
    for part, attribute in zip(("computing", "communication", "free"),
                               ("computing", "communication_not_overlapped", "free"),
                               strict=True):
        values = [getattr(s, attribute) for s in splits]
        gaps[part] = (max(values) - min(values)) / mean_total
    return RankSpread(slowest_rank=slowest.rank, fastest_rank=fastest.rank,
                      spread=(slowest.total - fastest.total) / mean_total, gaps=gaps)
