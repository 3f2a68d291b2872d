"""kernel_details.csv (CANN 8.x header) summed by core type and by kernel signature, against
sums computed here from the file; a renamed-column variant gives the same figures."""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path

import pytest

from ascend_env.perf.kernels import read_kernels
from ascend_env.perf.summarize import summarize
from tests.perf.profiler_files import KERNEL_DETAILS, needs_fixtures


def _rows(path: Path = KERNEL_DETAILS) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


@needs_fixtures
def test_core_types_hold_the_files_sums() -> None:
    read = read_kernels(KERNEL_DETAILS)
    totals, table = read.totals, read.table
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


@needs_fixtures
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


@needs_fixtures
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
    variant.write_text(renamed + "\n" + "".join(f"{row},made up\n" for row in rest.splitlines()))
    ours = read_kernels(KERNEL_DETAILS).totals
    read = read_kernels(variant)
    theirs, table = read.totals, read.table
    assert table.columns["block"] == "Block Num" and table.columns["core"] == "Task Type"
    assert table.unknown == ["Made Up Column"]
    assert [(c.core, c.count, c.time_us) for c in ours.core_list()] == \
        [(c.core, c.count, c.time_us) for c in theirs.core_list()]
    summary = summarize(variant)
    assert summary.unknown_columns == {str(variant): ["Made Up Column"]}


# The header msprof writes for op_summary_*.csv, verbatim from the expected header of msprof's
# own analysis unit test (OpSummaryAssemblerUTest); fields described on the vendor's
# "op_summary" page (https://www.hiascend.com/document/detail/zh/canncommercial/latest/devaids/Profiling/atlasprofiling_16_1149.html
# and its neighbours). The two rows below it are ours, to give the columns values.
OP_SUMMARY_HEADER = ("Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,"
                     "Task Start Time(us),Task Duration(us),Task Wait Time(us),Block Dim,"
                     "HF32 Eligible,Input Shapes,Input Data Types,Input Formats,Output Shapes,"
                     "Output Data Types,Output Formats")


def test_msprof_op_summary_in_a_prof_folder(tmp_path: Path) -> None:
    output = tmp_path / "PROF_000001_20260101_ABCDEF" / "mindstudio_profiler_output"
    output.mkdir(parents=True)
    (output / "op_summary_20260101120000.csv").write_text(
        OP_SUMMARY_HEADER + "\n"
        '0,4294967295,10,2,aclnnMm_MatMulCommon_MatMulV2,MatMulV2,dynamic,AI_CORE,'
        '1700000000000.1\t,120.5,0.2,20,NO,"""1024,1024;1024,1024""",FLOAT16;FLOAT16,ND;ND,'
        '"""1024,1024""",FLOAT16,ND\n'
        '0,4294967295,11,2,aclnnNonzero_NonZero_NonZero,NonZero,dynamic,AI_CPU,'
        '1700000000200.0\t,35.0,1.0,1,NO,"""4096""",INT64,ND,"""4096,1""",INT64,ND\n')
    summary = summarize(tmp_path)
    assert summary.kind == "msprof"
    assert summary.unknown_columns == {}
    assert [(k.type, k.core, k.total_us) for k in summary.top_kernels] == [
        ("MatMulV2", "AI_CORE", 120.5), ("NonZero", "AI_CPU", 35.0)]
    assert summary.top_kernels[0].input_shapes == "1024,1024;1024,1024"
    assert [k.type for k in summary.ai_cpu] == ["NonZero"]
    assert "aicpu-ops" in [f.id for f in summary.findings]  # 35 us >= 20 us
    assert {n.rank for n in summary.files} == {"PROF_000001_20260101_ABCDEF"}


@needs_fixtures
def test_msprof_copy_inside_a_framework_output_is_not_counted_twice(tmp_path: Path) -> None:
    run = tmp_path / "node1_1_20260101_ascend_pt"
    (run / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    (run / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv").write_bytes(
        KERNEL_DETAILS.read_bytes())
    copy = run / "PROF_000001_20260101_ABCDEF" / "mindstudio_profiler_output"
    copy.mkdir(parents=True)
    (copy / "op_summary_20260101120000.csv").write_text(OP_SUMMARY_HEADER + "\n")
    summary = summarize(tmp_path)
    assert [n.kind for n in summary.files] == ["kernels"]
    assert "ASCEND_PROFILER_OUTPUT is read instead" in summary.unread[0].note
    assert sum(c.count for c in summary.core_types) == len(_rows())


@needs_fixtures
def test_kernel_times_equal_msprof_analyze(tmp_path: Path) -> None:
    """msprof-analyze's op summary reads the same kernel_details.csv (its advisor's profiling
    dataset): per core type, the sums of its task durations are ours."""
    profiling = pytest.importorskip("msprof_analyze.advisor.dataset.profiling.profiling_dataset")
    output = tmp_path / "w_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    output.mkdir(parents=True)
    (output / "kernel_details.csv").symlink_to(KERNEL_DETAILS.resolve())
    dataset = profiling.ProfilingDataset(str(tmp_path / "w_ascend_pt"), {})
    theirs: dict[str, float] = defaultdict(float)
    for op in dataset.op_summary.op_list:
        theirs[op.task_type] += float(op.task_duration)
    assert dataset.op_summary.get_total_task_duration() == pytest.approx(sum(theirs.values()))
    ours = read_kernels(KERNEL_DETAILS).totals
    assert {c.core: c.time_us for c in ours.core_list()} == pytest.approx(dict(theirs))
