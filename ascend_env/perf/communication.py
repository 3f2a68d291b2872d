"""HCCL time by operation and transport from communication.json (one rank) and
cluster_communication.json (msprof-analyze's merge of every rank), streamed: each record's
figures are summed as the parser reaches them, whatever the file's size.

One rank's file nests step -> collective|p2p -> operator -> record; the cluster file nests
group -> step -> operator -> rank -> record. A record holds "Communication Time Info"
(Elapse, Transit, Wait, Synchronization, Idle Time(ms)) and "Communication Bandwidth Info"
per transport (RDMA, HCCS, PCIE, SDMA, ...: Transit Size(MB), Transit Time(ms),
Bandwidth(GB/s)). Field list: the profiler's "communication.json" description,
https://www.hiascend.com/document/detail/zh/canncommercial/latest/devaids/Profiling/atlasprofiling_16_1149.html

Totals rows are never operations: the files hold their own sum of each group's operators,
`Total Op Info`, which msprof-analyze 26 names `Total Op Info@<group>` (msprof_analyze/
cluster_analyse/analysis/communication_analysis.py, `f"{Constant.TOTAL_OP_INFO}@{group_name}"`).
Anything under a key that starts so is skipped, else it would count twice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ijson

from ascend_env.core.inputs import InputError
from ascend_env.perf.model import HcclOp, Transport
from ascend_env.perf.tables import open_regular

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

    def record(self, op_name: str) -> None:
        kind = _op_kind(op_name)
        op = self.ops.setdefault(kind, HcclOp(kind, 0, 0.0, 0.0, 0.0))
        op.count += 1

    def times(self, op_name: str, times: Any) -> None:
        if not isinstance(times, dict):
            return
        op = self.ops[_op_kind(op_name)]
        op.elapse_ms += _num(times.get("Elapse Time(ms)"))
        op.wait_ms += _num(times.get("Wait Time(ms)"))
        op.transit_ms += _num(times.get("Transit Time(ms)"))

    def bandwidth(self, rank: str, links: Any) -> None:
        if not isinstance(links, dict):
            return
        for transport, info in links.items():
            if isinstance(info, dict):
                self._move(transport, rank, _num(info.get("Transit Size(MB)")),
                           _num(info.get("Transit Time(ms)")))

    def _move(self, transport: str, rank: str | None, size: float, time: float) -> None:
        whole = self.transports.setdefault(transport, Transport(transport, None, 0.0, 0.0))
        items = [whole]
        if rank is not None:
            items.append(self.rank_transports.setdefault(
                (transport, rank), Transport(transport, rank, 0.0, 0.0)))
        for item in items:
            item.size_mb += size
            item.time_ms += time

    def merge(self, other: CommTotals) -> None:
        for kind, op in other.ops.items():
            mine = self.ops.setdefault(kind, HcclOp(kind, 0, 0.0, 0.0, 0.0))
            mine.count += op.count
            mine.elapse_ms += op.elapse_ms
            mine.wait_ms += op.wait_ms
            mine.transit_ms += op.transit_ms
        for (transport, rank), item in other.rank_transports.items():
            self._move(transport, rank, item.size_mb, item.time_ms)


def _num(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        else 0.0


def _op_kind(name: str) -> str:
    match = _OP.match(name)
    return match.group(1) if match else name.split("@", maxsplit=1)[0]


class _Walk:
    """The parser's events to records: the keys down to each record, the record's two info
    objects built (they are small), everything under a totals key skipped."""

    def __init__(self, rank: str, totals: CommTotals) -> None:
        self.rank = rank
        self.totals = totals
        self.keys: list[str | None] = []
        self.pending: str | None = None
        self.skip = 0  # depth inside a skipped subtree
        self.builder: Any = None
        self.building = 0
        self.target: tuple[tuple[str, ...], str] | None = None
        self.last: tuple[str, ...] | None = None
        self.records = 0

    def event(self, event: str, value: Any) -> None:
        if self.builder is not None:
            self._build(event, value)
        elif self.skip:
            self.skip += 1 if event in ("start_map", "start_array") else \
                -1 if event in ("end_map", "end_array") else 0
        elif event == "map_key":
            self.pending = value
        elif event in ("start_map", "start_array"):
            key, self.pending = self.pending, None
            if key is not None and key.startswith(TOTAL):
                self.skip = 1
            elif event == "start_map" and key in (TIME_INFO, BANDWIDTH_INFO):
                path = tuple(k for k in self.keys if k is not None)
                if path and len(path) <= MAX_NESTING:
                    self.target = (path, key)
                    self.builder = ijson.ObjectBuilder()
                    self._build(event, value)
                else:
                    self.skip = 1
            else:
                self.keys.append(key)
        elif event in ("end_map", "end_array"):
            if self.keys:
                self.keys.pop()
        else:
            self.pending = None

    def _build(self, event: str, value: Any) -> None:
        self.builder.event(event, value)
        self.building += 1 if event in ("start_map", "start_array") else \
            -1 if event in ("end_map", "end_array") else 0
        if self.building:
            return
        assert self.target is not None
        path, which = self.target
        built = self.builder.value
        self.builder, self.target = None, None
        # The key that holds a record is its operator, or its rank when the key above is the
        # operator (the cluster file).
        if path[-1].isdigit() and len(path) > 1:
            op_name, rank = path[-2], path[-1]
        else:
            op_name, rank = path[-1], self.rank
        if path != self.last:
            self.last = path
            self.records += 1
            self.totals.record(op_name)
        if which == TIME_INFO:
            self.totals.times(op_name, built)
        else:
            self.totals.bandwidth(rank, built)


def read_communication(path: Path, rank: str, totals: CommTotals) -> int:
    """Add one communication.json or cluster_communication.json to TOTALS (nothing of it when
    it cannot be read to its end); how many operator records it held."""
    part = CommTotals()
    walk = _Walk(rank, part)
    handle = open_regular(path, what="communication file")
    try:
        for event, value in ijson.basic_parse(handle, use_float=True):
            walk.event(event, value)
    except ijson.JSONError as exc:
        raise InputError(f"communication file {path}: not JSON "
                         f"({str(exc).splitlines()[0]})") from exc
    finally:
        handle.close()
    totals.merge(part)
    return walk.records
