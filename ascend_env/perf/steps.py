"""Step time per rank: step_trace_time.csv (one rank), cluster_step_trace_time.csv (all ranks),
and the spread across ranks.

Column meanings: the profiler's "step_trace_time.csv" page (Computing: device compute time;
Communication(Not Overlapped): communication not hidden under compute; Overlapped: compute
and communication at once; Free: the device idle; Stage: the step without Bubble; Bubble:
pipeline waits on receives; Preparing: from the step start to its first operator),
https://www.hiascend.com/document/detail/zh/canncommercial/latest/devaids/Profiling/atlasprofiling_16_1149.html
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from ascend_env.perf.model import RankSpread, StepSplit
from ascend_env.perf.tables import Table, number, read_table

STEP_FIELDS = ("step", "device", "computing", "comm_not_overlapped", "overlapped",
               "communication", "free", "stage", "bubble", "preparing",
               "comm_not_overlapped_no_receive")
CLUSTER_FIELDS = ("step", "row_type", "index", *STEP_FIELDS[2:])
PARTS = ("computing", "comm_not_overlapped", "free")


def _split(rank: str, rows: list[dict[str, str]], table: Table, source: str) -> StepSplit:
    """The mean step of ROWS (each one step of one rank)."""
    def mean(field_name: str) -> float | None:
        if not table.has(field_name):
            return None
        values = [number(r.get(field_name)) or 0.0 for r in rows]
        return sum(values) / len(values) if values else 0.0

    return StepSplit(rank=rank, steps=len(rows), computing=mean("computing") or 0.0,
                     communication_not_overlapped=mean("comm_not_overlapped") or 0.0,
                     overlapped=mean("overlapped") or 0.0, free=mean("free") or 0.0,
                     preparing=mean("preparing"), bubble=mean("bubble"), source=source)


def read_rank_steps(path: Path, rank: str) -> tuple[list[StepSplit], Table]:
    """One rank's step_trace_time.csv (one row per step; Device_id names the rank where
    present)."""
    table = read_table(path, STEP_FIELDS, what="step_trace_time.csv")
    devices = {row.get("device", "").strip() for row in table.rows}
    by_rank: dict[str, list[dict[str, str]]] = defaultdict(list)
    for row in table.rows:  # one file, one rank, unless it names several devices
        by_rank[row.get("device", "").strip() if len(devices) > 1 else rank].append(row)
    return [_split(r, rows, table, str(path)) for r, rows in by_rank.items()], table


def read_cluster_steps(path: Path) -> tuple[list[StepSplit], Table]:
    """cluster_step_trace_time.csv: its `rank` rows (its `stage` rows are the maxima over a
    pipeline stage's ranks, not a rank)."""
    table = read_table(path, CLUSTER_FIELDS, what="cluster_step_trace_time.csv")
    by_rank: dict[str, list[dict[str, str]]] = defaultdict(list)
    for row in table.rows:
        if row.get("row_type", "").strip().lower() == "rank":
            by_rank[row.get("index", "").strip()].append(row)
    return [_split(r, rows, table, str(path)) for r, rows in by_rank.items()], table


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
