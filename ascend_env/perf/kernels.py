"""Device operators from kernel_details.csv (torch_npu, MindSpore) or op_summary_*.csv (msprof):
time by core type, the top kernels with their shapes and dtypes, the AI CPU ones."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ascend_env.perf.model import CoreTime, Kernel
from ascend_env.perf.tables import Table, number, read_table

KERNEL_FIELDS = ("name", "type", "core", "duration", "wait", "block", "mix_block", "step",
                 "device", "input_shapes", "input_dtypes", "output_shapes", "output_dtypes")


@dataclass
class KernelTotals:
    """Per-signature sums of a kernel list, and the per-core totals."""

    kernels: dict[tuple[str, ...], Kernel] = field(default_factory=dict)
    cores: dict[str, CoreTime] = field(default_factory=dict)

    def add(self, kernel: Kernel) -> None:
        key = (kernel.type or kernel.name, kernel.core, kernel.input_shapes,
               kernel.input_dtypes)
        known = self.kernels.get(key)
        if known is None:
            self.kernels[key] = kernel
        else:
            known.count += kernel.count
            known.total_us += kernel.total_us
            known.max_us = max(known.max_us, kernel.max_us)
        core = self.cores.setdefault(kernel.core, CoreTime(kernel.core, 0, 0.0))
        core.count += kernel.count
        core.time_us += kernel.total_us

    def top(self, count: int) -> list[Kernel]:
        return sorted(self.kernels.values(), key=lambda k: -k.total_us)[:count]

    def on_core(self, prefix: str) -> list[Kernel]:
        return sorted((k for k in self.kernels.values() if k.core.startswith(prefix)),
                      key=lambda k: -k.total_us)

    def core_list(self) -> list[CoreTime]:
        return sorted(self.cores.values(), key=lambda c: -c.time_us)


def read_kernels(path: Path, totals: KernelTotals) -> Table:
    """Add one kernel_details.csv / op_summary.csv to TOTALS; the table (for its columns)."""
    table = read_table(path, KERNEL_FIELDS, what="kernel table")
    for row in table.rows:
        duration = number(row.get("duration")) or 0.0
        totals.add(Kernel(
            name=row.get("name", ""), type=row.get("type", ""),
            core=(row.get("core") or "UNKNOWN").strip().upper(), count=1,
            total_us=duration, max_us=duration,
            input_shapes=row.get("input_shapes", ""), input_dtypes=row.get("input_dtypes", ""),
            output_shapes=row.get("output_shapes", ""),
            output_dtypes=row.get("output_dtypes", "")))
    return table
