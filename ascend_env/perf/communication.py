"""HCCL time by operation and transport from communication.json (one rank) and
cluster_communication.json (msprof-analyze's merge of every rank).

One rank's file nests step -> collective|p2p -> operator -> record; the cluster file nests
group -> step -> operator -> rank -> record. A record holds "Communication Time Info"
(Elapse, Transit, Wait, Synchronization, Idle Time(ms)) and "Communication Bandwidth Info"
per transport (RDMA, HCCS, PCIE, SDMA, ...: Transit Size(MB), Transit Time(ms),
Bandwidth(GB/s)). Field list: the profiler's "communication.json" description,
https://www.hiascend.com/document/detail/zh/canncommercial/latest/devaids/Profiling/atlasprofiling_16_1149.html
`Total Op Info` is the file's own sum of its operators: skipped, else counted twice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ascend_env.perf.model import HcclOp, Transport
from ascend_env.perf.tables import read_json

TIME_INFO = "Communication Time Info"
BANDWIDTH_INFO = "Communication Bandwidth Info"
TOTAL = "Total Op Info"
# hcom_allReduce__123_0_1@8923... -> allReduce; hcom_broadcast__501_0@... -> broadcast
_OP = re.compile(r"^hcom_([A-Za-z]+)_")
MAX_NESTING = 8


@dataclass
class CommTotals:
    """Sums over every record read."""

    ops: dict[str, HcclOp] = field(default_factory=dict)
    transports: dict[str, Transport] = field(default_factory=dict)
    rank_transports: dict[tuple[str, str], Transport] = field(default_factory=dict)

    def add(self, op_name: str, rank: str, record: dict[str, Any]) -> None:
        times = record.get(TIME_INFO) or {}
        kind = _op_kind(op_name)
        op = self.ops.setdefault(kind, HcclOp(kind, 0, 0.0, 0.0, 0.0))
        op.count += 1
        op.elapse_ms += _num(times.get("Elapse Time(ms)"))
        op.wait_ms += _num(times.get("Wait Time(ms)"))
        op.transit_ms += _num(times.get("Transit Time(ms)"))
        for transport, info in (record.get(BANDWIDTH_INFO) or {}).items():
            if not isinstance(info, dict):
                continue
            size, time = _num(info.get("Transit Size(MB)")), _num(info.get("Transit Time(ms)"))
            whole = self.transports.setdefault(transport, Transport(transport, None, 0.0, 0.0))
            mine = self.rank_transports.setdefault(
                (transport, rank), Transport(transport, rank, 0.0, 0.0))
            for item in (whole, mine):
                item.size_mb += size
                item.time_ms += time


def _num(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        else 0.0


def _op_kind(name: str) -> str:
    match = _OP.match(name)
    return match.group(1) if match else name.split("@", maxsplit=1)[0]


def _walk(node: Any, path: list[str], default_rank: str, totals: CommTotals) -> None:
    """Records wherever they are nested; the key that holds a record is its operator, or its
    rank when the key above is the operator (the cluster file)."""
    if not isinstance(node, dict) or len(path) > MAX_NESTING:
        return
    for key, value in node.items():
        if key == TOTAL or not isinstance(value, dict):
            continue
        if TIME_INFO in value or BANDWIDTH_INFO in value:
            if key.isdigit() and path:  # cluster file: operator -> rank -> record
                totals.add(path[-1], key, value)
            else:
                totals.add(key, default_rank, value)
        else:
            _walk(value, [*path, key], default_rank, totals)


def read_communication(path: Path, rank: str, totals: CommTotals) -> int:
    """Add one communication.json or cluster_communication.json to TOTALS; how many operator
    records it held."""
    before = sum(op.count for op in totals.ops.values())
    _walk(read_json(path, what="communication file"), [], rank, totals)
    return sum(op.count for op in totals.ops.values()) - before
