"""Host operators (`cat: cpu_op`) of a trace with their self time, kept compactly while the
trace streams by: per thread, three arrays (start, duration, signature), so a million host
operators take some 24 MB rather than a million dicts."""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import Any

from ascend_env.perf.kernels import KernelTotals
from ascend_env.perf.model import Copies, Kernel

# Host operators that block on the device: .item() reads one value back (aten::item calls
# aten::_local_scalar_dense, which copies device-to-host and synchronises).
SCALAR_READS = ("aten::_local_scalar_dense",)
# The outermost of aten::to -> _to_copy -> copy_: one tensor move or cast.
TO_DEVICE = "aten::to"
# Spans kept for the self-time pass; past this, host operators are not summed (and said so).
MAX_SPANS = 4_000_000


@dataclass
class HostSpans:
    """Host operator spans per thread, each span's signature interned."""

    threads: dict[tuple[Any, Any], tuple[array[float], array[float], array[int]]] = \
        field(default_factory=dict)
    signatures: dict[tuple[str, str, str], int] = field(default_factory=dict)
    count: int = 0
    dropped: bool = False

    def add(self, lane: tuple[Any, Any], ts: float, dur: float, name: str,
            args: dict[str, Any]) -> None:
        if self.count >= MAX_SPANS:
            self.dropped = True
            return
        key = (name, _text(args.get("Input Dims")), _text(args.get("Input type")))
        signature = self.signatures.setdefault(key, len(self.signatures))
        arrays = self.threads.get(lane)
        if arrays is None:
            arrays = self.threads[lane] = (array("d"), array("d"), array("q"))
        arrays[0].append(ts)
        arrays[1].append(dur)
        arrays[2].append(signature)
        self.count += 1

    def summarize(self, totals: KernelTotals, copies: Copies) -> None:
        """Each operator's self time (its time minus the operators it called) into TOTALS;
        .item() reads and aten::to calls into COPIES."""
        if self.dropped:
            return
        names = [key for key, _ in sorted(self.signatures.items(), key=lambda item: item[1])]
        for starts, durations, signatures in self.threads.values():
            order = sorted(range(len(starts)), key=lambda i: (starts[i], -durations[i]))
            stack: list[tuple[float, list[float], int]] = []  # end, [own time left], index
            closed: list[tuple[int, float]] = []  # index, self time
            for index in order:
                start, dur = starts[index], durations[index]
                while stack and stack[-1][0] <= start:
                    _, own, done = stack.pop()
                    closed.append((done, own[0]))
                if stack:
                    stack[-1][1][0] -= dur
                stack.append((start + dur, [dur], index))
            closed.extend((index, own[0]) for _, own, index in reversed(stack))
            for index, left in closed:
                name, dims, types = names[signatures[index]]
                mine = max(left, 0.0)
                totals.add(Kernel(name=name, type=name, core="HOST", count=1, total_us=mine,
                                  max_us=mine, input_shapes=dims, input_dtypes=types))
                if name in SCALAR_READS:
                    copies.scalar_reads += 1
                    copies.scalar_read_us += durations[index]
                elif name == TO_DEVICE:
                    copies.to_device_calls += 1
                    copies.to_device_us += durations[index]


def _text(value: Any) -> str:
    """Input Dims / Input type as one line: inputs joined by ';', dims by ','."""
    if value is None or value == "":
        return ""
    if isinstance(value, list):
        return ";".join(",".join(str(d) for d in v) if isinstance(v, list) else str(v)
                        for v in value)
    return str(value)
