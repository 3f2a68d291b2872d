"""kernel_details.csv (CANN 8.x header) summed by core type and by kernel signature, against
sums computed here from the file; a renamed-column variant gives the same figures."""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path

import pytest

from ascend_env.perf.kernels import KernelTotals, read_kernels
from ascend_env.perf.summarize import summarize
from tests.perf.profiler_files import KERNEL_DETAILS


def _rows(path: Path = KERNEL_DETAILS) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_core_types_hold_the_files_sums() -> None:
    totals = KernelTotals()
    table = read_kernels(KERNEL_DETAILS, totals)
    expected: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    for row in _rows():
        expected[row["Accelerator Core"]] += float(row["Duration(us)"])
        counts[row["Accelerator Core"]] += 1
    got = {c.core: c for c in totals.core_list()}
    assert set(got) == set(expected) == {"AI_CORE", "MIX_AIC", "AI_VECTOR_CORE"}
    for core, time_us in expected.items():
        assert got[core].time_us == pytest.approx(time_us)
        assert got[core].count == counts[core]
    assert table.unknown == []  # every column of this release is known


def test_top_kernel_with_shapes_and_dtypes() -> None:
    summary = summarize(KERNEL_DETAILS, top=3)
    by_signature: dict[tuple[str, str, str], float] = defaultdict(float)
    for row in _rows():
        key = (row["Type"], row["Input Shapes"].strip('"'), row["Input Data Types"])
        by_signature[key] += float(row["Duration(us)"])
    best = max(by_signature, key=lambda k: by_signature[k])
    top = summary.top_kernels[0]
    assert (top.type, top.input_shapes, top.input_dtypes) == best
    assert top.type == "FlashAttentionScoreGrad" and top.core == "MIX_AIC"
    assert top.total_us == pytest.approx(by_signature[best])
    assert top.input_dtypes.startswith("DT_BF16;")
    assert [k.total_us for k in summary.top_kernels] == sorted(by_signature.values(),
                                                               reverse=True)[:3]
    assert summary.ai_cpu == []  # no AI_CPU row in this file


def test_renamed_columns_read_the_same(tmp_path: Path) -> None:
    """`Block Num`/`Mix Block Num` (msprof-analyze's op_perf.py reads both spellings) and
    `Task Type` (the core column's older name, still msprof's op_summary's) instead of this
    release's names, plus a column no release wrote: same figures, the stranger reported."""
    text = KERNEL_DETAILS.read_text()
    header, rest = text.split("\n", 1)
    assert "Block Dim" in header and "Accelerator Core" in header
    renamed = (header.replace("Mix Block Dim", "Mix Block Num").replace("Block Dim", "Block Num")
               .replace("Accelerator Core", "Task Type") + ",Made Up Column")
    variant = tmp_path / "kernel_details.csv"
    variant.write_text(renamed + "\n" + rest)
    ours, theirs = KernelTotals(), KernelTotals()
    read_kernels(KERNEL_DETAILS, ours)
    table = read_kernels(variant, theirs)
    assert table.columns["block"] == "Block Num" and table.columns["core"] == "Task Type"
    assert table.unknown == ["Made Up Column"]
    assert [(c.core, c.count, c.time_us) for c in ours.core_list()] == \
        [(c.core, c.count, c.time_us) for c in theirs.core_list()]
    summary = summarize(variant)
    assert summary.unknown_columns == {str(variant): ["Made Up Column"]}
