"""Kernel tables as torch_npu writes them at Level0 (type `N/A`: kernels by name), per-type
totals over every kernel, one line per row whatever a cell holds, a table that cannot be read
leaving its figures absent, and memory that does not grow with the rows.

The rows are the real kernels of msprof-analyze's kernel_details.csv test data; the Level0
header is torch_npu's (OP_SUMMARY_KERNEL_BASE_HEADERS + OP_SUMMARY_ADDITIONAL_HEADERS,
torch_npu/profiler/analysis/prof_common_func/_csv_headers.py in Ascend/pytorch, which its
test_kernel_view_parser.py expects for Level0 with shapes); msprof writes `N/A` as the type
at Level0 (analysis/mscalculate/cann/cann_analysis_gear.py in Ascend/msprof).
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from ascend_env.perf import kernel_batches
from ascend_env.perf.summarize import summarize
from tests.cli_invoke import invoke
from tests.perf.profiler_files import KERNEL_DETAILS, TRACE_VIEW, needs_fixtures

pytestmark = needs_fixtures
ROOT = Path(__file__).resolve().parents[2]
LEVEL0_HEADER = ["Device_id", "Name", "Type", "Accelerator Core", "Start Time(us)",
                 "Duration(us)", "Wait Time(us)", "Block Num", "Mix Block Num", "Input Shapes",
                 "Input Data Types", "Input Formats", "Output Shapes", "Output Data Types",
                 "Output Formats"]


def _rows() -> list[dict[str, str]]:
    with KERNEL_DETAILS.open(newline="") as handle:
        return list(csv.DictReader(handle))


def _level0(folder: Path) -> Path:
    output = folder / "node1_1_20260101000000000_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    output.mkdir(parents=True)
    with (output / "kernel_details.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(LEVEL0_HEADER)
        for row in _rows():
            writer.writerow(["0", row["Name"], "N/A", row["Accelerator Core"],
                             row["Start Time(us)"], row["Duration(us)"], row["Wait Time(us)"],
                             row["Block Dim"], row["Mix Block Dim"], row["Input Shapes"],
                             row["Input Data Types"], row["Input Formats"], row["Output Shapes"],
                             row["Output Data Types"], row["Output Formats"]])
    return output.parent


def test_level0_kernels_are_named_not_na(tmp_path: Path) -> None:
    _level0(tmp_path)
    summary = summarize(tmp_path, top=100)
    by_name: dict[str, float] = defaultdict(float)
    for row in _rows():
        by_name[row["Name"]] += float(row["Duration(us)"])
    assert {t.type: t.total_us for t in summary.kernel_types} == pytest.approx(dict(by_name))
    assert "N/A" not in {t.type for t in summary.kernel_types}
    assert all(k.type == "N/A" for k in summary.top_kernels)  # what the file says, kept
    text = invoke("perf", "--from", str(tmp_path), "--top", "3").out
    assert "aclnnFlashAttentionScoreGrad_FlashAtt..." in text
    assert " N/A " not in text


def test_level0_core_times_equal_msprof_analyze(tmp_path: Path) -> None:
    """msprof-analyze's advisor reads the Level0 table too: its op summary's sums per task
    type and per operator name are ours."""
    profiling = pytest.importorskip("msprof_analyze.advisor.dataset.profiling.profiling_dataset")
    folder = _level0(tmp_path)
    dataset = profiling.ProfilingDataset(str(folder), {})
    cores: dict[str, float] = defaultdict(float)
    names: dict[str, float] = defaultdict(float)
    for op in dataset.op_summary.op_list:
        cores[op.task_type] += float(op.task_duration)
        names[op.op_name] += float(op.task_duration)
    summary = summarize(tmp_path, top=100)
    assert {c.core: c.time_us for c in summary.core_types} == pytest.approx(dict(cores))
    assert {t.type: t.total_us for t in summary.kernel_types} == pytest.approx(dict(names))


def test_per_type_totals_cover_every_kernel() -> None:
    """--top cuts the kernel list; `kernel_types` in the JSON sums every kernel of a type over
    all its shapes."""
    document = json.loads(invoke("perf", "--from", str(KERNEL_DETAILS), "--top", "1",
                                 "--json").out)
    assert len(document["top_kernels"]) == 1
    by_type: dict[str, float] = defaultdict(float)
    shapes: dict[str, set[str]] = defaultdict(set)
    for row in _rows():
        by_type[row["Type"]] += float(row["Duration(us)"])
        shapes[row["Type"]].add(row["Input Shapes"] + row["Input Data Types"])
    got = {t["type"]: t for t in document["kernel_types"]}
    assert {k: v["total_us"] for k, v in got.items()} == pytest.approx(dict(by_type))
    assert {k: v["signatures"] for k, v in got.items()} == {k: len(v) for k, v in shapes.items()}
    assert sum(t["count"] for t in got.values()) == len(_rows())
    assert got["MatMulV3"]["signatures"] > 1  # one type, several shapes, one total


def test_one_line_per_row_whatever_the_cells_hold(tmp_path: Path) -> None:
    """A shapes cell with line breaks (a quoted CSV field may hold them) stays on its row."""
    rows = _rows()
    header = list(rows[0])
    target = tmp_path / "kernel_details.csv"
    with target.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, header)
        writer.writeheader()
        for row in rows:
            broken = {"Input Shapes": row["Input Shapes"].replace(";", ";\n"),
                      "Name": row["Name"] + "\r\nsecond line"}
            writer.writerow(dict(row, **broken) if row["Type"] == "FlashAttentionScoreGrad"
                            else row)
    summary = summarize(target)
    assert "\n" in summary.top_kernels[0].input_shapes  # the JSON keeps the cell as written
    lines = invoke("perf", "--from", str(target), "--top", "3").out.splitlines()
    kernel_lines = [line for line in lines if " ms  x" in line]
    assert len(kernel_lines) == 3
    assert "FlashAttentionScoreGrad" in kernel_lines[0]
    assert "in 4096,2,512; 4096,2,512;" in kernel_lines[0]
    top = lines.index("top device kernels (total, count, type, core, input shapes and dtypes)")
    assert lines[top + 1:top + 4] == kernel_lines


def test_an_unreadable_table_leaves_its_figures_absent(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The rank's kernel table breaks blocks past its start (a duration that is no number):
    no figure of it is kept, not even the blocks before, and its trace's task types do not
    replace them."""
    monkeypatch.setattr(kernel_batches, "BLOCK", 16 * 1024)
    output = tmp_path / "node1_1_20260101000000000_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    output.mkdir(parents=True)
    (output.parent / "profiler_info_0.json").write_text("{}")
    header, *body = KERNEL_DETAILS.read_text().splitlines()
    cells = body[0].split(",")
    broken = ",".join([*cells[:9], "garbage", *cells[10:]])
    (output / "kernel_details.csv").write_text("\n".join([header, *body * 20, broken]) + "\n")
    (output / "trace_view.json").write_bytes(TRACE_VIEW.read_bytes())
    summary = summarize(tmp_path)
    [unread] = [n for n in summary.unread if n.kind == "kernels"]
    assert "invalid value 'garbage'" in unread.note
    assert summary.core_types == [] and summary.task_types == []
    assert summary.top_kernels == [] and summary.kernel_types == []
    assert any("kernel figures of rank 0" in a for a in summary.absent)
    text = invoke("perf", "--from", str(tmp_path)).out
    assert "device time by core type" not in text
    assert "absent: kernel figures of rank 0" in text


def test_an_unreadable_step_table_is_not_replaced_by_the_trace(tmp_path: Path) -> None:
    """A rank's step_trace_time.csv that cannot be read leaves its step split absent: the
    trace's Overlap Analysis lanes (a whole-window split) do not stand in for it."""
    output = tmp_path / "node1_1_20260101000000000_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    output.mkdir(parents=True)
    (output.parent / "profiler_info_0.json").write_text("{}")
    (output / "step_trace_time.csv").write_text('Step,Computing,Free\n1,"' + "x" * 200_000
                                                + '",3\n')
    (output / "trace_view.json").write_bytes(TRACE_VIEW.read_bytes())
    summary = summarize(tmp_path)
    assert summary.steps == []
    assert any(a.startswith("the step split of rank 0:") for a in summary.absent)
    alone = summarize(TRACE_VIEW)  # the same trace alone does give its lanes' split
    assert [s.rank for s in alone.steps] == ["0"]


def _replicated(path: Path, rows: int) -> Path:
    header, *body = KERNEL_DETAILS.read_text().splitlines()
    with path.open("w") as handle:
        handle.write(header + "\n")
        for index in range(rows):
            handle.write(body[index % len(body)] + "\n")
    return path


PEAK = ("import resource, sys; from pathlib import Path; "
        "from ascend_env.perf.kernels import read_kernels; "
        "read = read_kernels(Path(sys.argv[1])); "
        "print(sum(c.count for c in read.totals.core_list()), "
        "resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)")


@pytest.mark.slow
def test_memory_does_not_follow_the_file(tmp_path: Path) -> None:
    """Rows are summed block by block: from 50,000 rows to 400,000 (a 20 MB table to a 162 MB
    one) the peak resident memory of a fresh interpreter grows by less than half what the file
    grows (it grows by what the reader's block pool and allocator settle at, some 30 MB; a
    reader that held the file would grow by more than the file)."""
    peaks = {}
    for rows in (50_000, 400_000):
        path = _replicated(tmp_path / f"{rows}_kernel_details.csv", rows)
        done = subprocess.run([sys.executable, "-c", PEAK, str(path)], cwd=ROOT,
                              capture_output=True, text=True, check=True)
        counted, peak_kb = done.stdout.split()
        assert int(counted) == rows
        peaks[rows] = int(peak_kb) / 1024
    sizes = {rows: (tmp_path / f"{rows}_kernel_details.csv").stat().st_size / 2**20
             for rows in peaks}
    assert sizes[400_000] > 150
    assert peaks[400_000] - peaks[50_000] < (sizes[400_000] - sizes[50_000]) / 2, (peaks, sizes)
