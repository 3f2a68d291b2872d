"""Device operators from kernel_details.csv (torch_npu, MindSpore) or op_summary_*.csv (msprof):
time by core type, per kernel type, the top kernels with their shapes and dtypes, the AI CPU
ones. A table is summed as it is read: memory grows with the kinds of kernels, not the rows.

At Level0 the profiler records no operator type: msprof writes `N/A` in the type column
(analysis/mscalculate/cann/cann_analysis_gear.py in Ascend/msprof: `op_type = Constant.NA if
is_level0`), so such kernels are told apart by name.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import Any

from ascend_env.core.inputs import InputError
from ascend_env.perf.model import CoreTime, Kernel, KernelType
from ascend_env.perf.tables import Table, TableReader, cell

KERNEL_FIELDS = ("name", "type", "core", "duration", "wait", "block", "mix_block", "step",
                 "device", "input_shapes", "input_dtypes", "output_shapes", "output_dtypes")
NO_TYPE = frozenset({"", "N/A", "NA"})
# Distinct (type, core, shapes, dtypes) signatures kept per table: a real run has thousands;
# past this a table is not summed (its figures would not fit the memory perf allows itself).
MAX_SIGNATURES = 500_000


def label(kernel: Kernel) -> str:
    """What a kernel is called in a listing: its type, or its name where there is no type."""
    return kernel.name if kernel.type in NO_TYPE else kernel.type


@dataclass
class KernelTotals:
    """Per-signature sums of a kernel list, and the per-core totals."""

    kernels: dict[tuple[str, ...], Kernel] = field(default_factory=dict)
    cores: dict[str, CoreTime] = field(default_factory=dict)

    def add(self, kernel: Kernel) -> None:
        key = (label(kernel), kernel.core, kernel.input_shapes, kernel.input_dtypes)
        known = self.kernels.get(key)
        if known is None:
            self.kernels[key] = Kernel(**vars(kernel))
        else:
            known.count += kernel.count
            known.total_us += kernel.total_us
            known.max_us = max(known.max_us, kernel.max_us)
        core = self.cores.setdefault(kernel.core, CoreTime(kernel.core, 0, 0.0))
        core.count += kernel.count
        core.time_us += kernel.total_us

    def merge(self, other: KernelTotals) -> None:
        for kernel in other.kernels.values():
            self.add(kernel)

    def top(self, count: int) -> list[Kernel]:
        return sorted(self.kernels.values(), key=lambda k: -k.total_us)[:count]

    def on_core(self, prefix: str) -> list[Kernel]:
        return sorted((k for k in self.kernels.values() if k.core.startswith(prefix)),
                      key=lambda k: -k.total_us)

    def core_list(self) -> list[CoreTime]:
        return sorted(self.cores.values(), key=lambda c: -c.time_us)

    def type_list(self) -> list[KernelType]:
        """Every kernel type (name where there is none) summed over all its signatures."""
        types: dict[str, KernelType] = {}
        for kernel in self.kernels.values():
            name = label(kernel)
            item = types.setdefault(name, KernelType(name, 0, 0.0, 0.0, 0, []))
            item.count += kernel.count
            item.total_us += kernel.total_us
            item.max_us = max(item.max_us, kernel.max_us)
            item.signatures += 1
            if kernel.core not in item.cores:
                item.cores.append(kernel.core)
        return sorted(types.values(), key=lambda t: -t.total_us)


@dataclass
class KernelTable:
    """What one kernel table held: its header, its sums, and the rows it could not use."""

    table: Table
    totals: KernelTotals
    rows: int = 0
    skipped: int = 0  # rows without a duration, or shorter than the header

    def note(self) -> str:
        if not self.skipped:
            return ""
        return f"{self.skipped} of {self.rows} rows without a duration (or cut short): not counted"


def read_kernels(path: Path) -> KernelTable:
    """One kernel_details.csv / op_summary.csv, summed as it is read; an InputError (and no
    figures at all) when the file cannot be read to its end."""
    with TableReader(path, KERNEL_FIELDS, what="kernel table") as reader:
        table = reader.table
        if not table.has("duration"):
            raise InputError(f"kernel table {path}: no duration column "
                             f"({' / '.join(('Duration(us)', 'Task Duration(us)'))})")
        at = table.index
        # The signature's cells, fetched together; a table without a type column (none seen
        # yet) is keyed by name, as a Level0 table is.
        first = at.get("type", at.get("name"))
        columns = [i for i in (first, at.get("core"), at.get("input_shapes"),
                               at.get("input_dtypes")) if i is not None]
        signature = itemgetter(*columns) if len(columns) > 1 else \
            (lambda row, i=columns[0]: (row[i],))
        name_at, duration_at = at.get("name", first), at["duration"]
        sums: dict[tuple[str, ...], list[Any]] = {}
        found = sums.get
        rows = skipped = 0
        for row in reader.rows():
            rows += 1
            try:
                key = signature(row)
                duration = float(row[duration_at])
            except (IndexError, ValueError):
                skipped += 1
                continue
            if not 0.0 <= duration < math.inf:
                skipped += 1
                continue
            if key[0].strip() in NO_TYPE and name_at is not None:
                key = ("\0" + row[name_at], *key[1:])
            known = found(key)
            if known is None:
                if len(sums) >= MAX_SIGNATURES:
                    raise InputError(f"kernel table {path}: more than {MAX_SIGNATURES} "
                                     "distinct kernel signatures: not summed")
                sums[key] = [1, duration, duration, row]
            else:
                known[0] += 1
                known[1] += duration
                known[2] = max(known[2], duration)
    totals = KernelTotals()
    for count, total, longest, row in sums.values():
        totals.add(_kernel(row, at, count, total, longest))
    return KernelTable(table, totals, rows, skipped)


def _kernel(row: list[str], at: dict[str, int], count: int, total: float,
            longest: float) -> Kernel:
    kind = cell(row, at.get("type"))
    return Kernel(
        name=cell(row, at.get("name")), type=kind if kind not in NO_TYPE else "N/A",
        core=cell(row, at.get("core")).upper() or "UNKNOWN", count=count, total_us=total,
        max_us=longest, input_shapes=cell(row, at.get("input_shapes")),
        input_dtypes=cell(row, at.get("input_dtypes")),
        output_shapes=cell(row, at.get("output_shapes")),
        output_dtypes=cell(row, at.get("output_dtypes")))
