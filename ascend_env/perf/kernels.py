"""Device operators from kernel_details.csv (torch_npu, MindSpore) or op_summary_*.csv (msprof):
time by core type, per kernel type, the top kernels with their shapes and dtypes, the AI CPU
ones. A table is summed as it is read: memory grows with the kinds of kernels, not the rows.

At Level0 the profiler records no operator type: msprof writes `N/A` in the type column
(analysis/mscalculate/cann/cann_analysis_gear.py in Ascend/msprof: `op_type = Constant.NA if
is_level0`), so such kernels are told apart by name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ascend_env.core.inputs import InputError
from ascend_env.perf.kernel_batches import kernel_batches
from ascend_env.perf.model import CoreTime, Kernel, KernelType
from ascend_env.perf.tables import Table, read_header

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
    table = read_header(path, KERNEL_FIELDS, what="kernel table")
    if not table.has("duration"):
        raise InputError(f"kernel table {path}: no duration column (Duration(us) / "
                         "Task Duration(us))")
    sums: dict[tuple[bytes, ...], list[Any]] = {}
    rows = skipped = 0
    for batch in kernel_batches(path, table):
        rows += batch.rows
        skipped += batch.skipped
        for key, count, total, longest, firsts in batch.groups:
            known = sums.get(key)
            if known is None:
                if len(sums) >= MAX_SIGNATURES:
                    raise InputError(f"kernel table {path}: more than {MAX_SIGNATURES} "
                                     "distinct kernel signatures: not summed")
                sums[key] = [count, total, longest, firsts]
            else:
                known[0] += count
                known[1] += total
                known[2] = max(known[2], longest)
    if rows and rows == skipped:
        raise InputError(f"kernel table {path}: none of its {rows} rows has a duration")
    totals = KernelTotals()
    for (kind, core, shapes, dtypes), (count, total, longest, firsts) in sums.items():
        name, out_shapes, out_dtypes = (_text(v) for v in firsts)
        written = _text(kind)
        totals.add(Kernel(
            name=name, type="N/A" if written.startswith("\0") or written in NO_TYPE
            else written, core=_text(core).upper() or "UNKNOWN", count=count,
            total_us=total, max_us=longest, input_shapes=_text(shapes),
            input_dtypes=_text(dtypes), output_shapes=out_shapes, output_dtypes=out_dtypes))
    return KernelTable(table, totals, rows, skipped)


def _text(value: bytes | None) -> str:
    """A cell as text, cleaned as `tables.cell` cleans one."""
    return (value or b"").decode("utf-8", errors="replace").strip().strip('"').strip()
