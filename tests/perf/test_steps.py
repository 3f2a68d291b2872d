"""Step time per rank from the real cluster step table, against figures computed here from the
file and against msprof-analyze's slow-rank analysis of the same file."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from ascend_env.perf.steps import read_cluster_steps, read_rank_steps, spread
from ascend_env.perf.summarize import summarize
from tests.perf.profiler_files import CLUSTER_STEPS, needs_fixtures


def _rank_rows() -> list[dict[str, str]]:
    with CLUSTER_STEPS.open(newline="") as handle:
        return [r for r in csv.DictReader(handle) if r["Type"] == "rank"]


@needs_fixtures
def test_each_rank_holds_the_files_figures() -> None:
    splits, table = read_cluster_steps(CLUSTER_STEPS)
    rows = _rank_rows()
    assert len(splits) == len(rows) == 8
    assert table.unknown == []
    by_rank = {s.rank: s for s in splits}
    for row in rows:
        split = by_rank[row["Index"]]
        assert split.computing == pytest.approx(float(row["Computing"]))
        assert split.communication_not_overlapped == pytest.approx(
            float(row["Communication(Not Overlapped)"]))
        assert split.overlapped == pytest.approx(float(row["Overlapped"]))
        assert split.free == pytest.approx(float(row["Free"]))
        assert split.bubble == pytest.approx(float(row["Bubble"]))
        assert split.preparing is None  # this release wrote no Preparing column
        # The parts add up to the file's own Stage column (to its rounding).
        assert split.total == pytest.approx(float(row["Stage"]), rel=1e-6)


@needs_fixtures
def test_slowest_rank_and_spread() -> None:
    splits, _ = read_cluster_steps(CLUSTER_STEPS)
    rows = _rank_rows()
    totals = {r["Index"]: float(r["Computing"]) + float(r["Communication(Not Overlapped)"])
              + float(r["Free"]) for r in rows}
    result = spread(splits)
    assert result is not None
    assert result.slowest_rank == max(totals, key=lambda k: totals[k]) == "0"
    assert result.fastest_rank == min(totals, key=lambda k: totals[k]) == "7"
    mean = sum(totals.values()) / len(totals)
    assert result.spread == pytest.approx((max(totals.values()) - min(totals.values())) / mean)


@needs_fixtures
def test_gaps_equal_msprof_analyze(tmp_path: Path) -> None:
    """msprof-analyze's slow-rank analysis reads the same file from a cluster_analysis_output
    folder (a link to the fixture here) and measures each part's (max - min) / mean step."""
    cluster_dataset = pytest.importorskip("msprof_analyze.advisor.dataset.cluster.cluster_dataset")
    slow_rank = pytest.importorskip("msprof_analyze.advisor.analyzer.cluster.slow_rank_analyzer")
    (tmp_path / "cluster_analysis_output").mkdir()
    (tmp_path / "cluster_analysis_output" / "cluster_step_trace_time.csv").symlink_to(
        CLUSTER_STEPS.resolve())
    theirs = dict(cluster_dataset.ClusterStepTraceTimeDataset(str(tmp_path), {}).get_data())
    assert len(theirs) == 8
    totals = [sum(v) for v in theirs.values()]
    mean = sum(totals) / len(totals)
    ours = spread(read_cluster_steps(CLUSTER_STEPS)[0])
    assert ours is not None
    for index, part in enumerate(("computing", "communication", "free")):
        values = [v[index] for v in theirs.values()]
        expected = slow_rank.SlowRankAnalyzer.compute_max_gap_ratio(values, mean)
        assert ours.gaps[part] == pytest.approx(expected)
    # Their per-rank sums are our step totals.
    for key, values in theirs.items():
        rank = key.split("_")[-1]
        assert sum(values) == pytest.approx(next(s.total for s in read_cluster_steps(
            CLUSTER_STEPS)[0] if s.rank == rank))


@needs_fixtures
def test_findings_cite_the_thresholds() -> None:
    summary = summarize(CLUSTER_STEPS)
    ids = [f.id for f in summary.findings]
    # Every rank idles more than 10% of its step (rank 5 least: 892.8 of 1730.6 ms): one
    # finding names them all and the idlest (rank 1: 1488.6 of 1702.4 ms).
    assert ids.count("free-time") == 1
    free = summary.findings[ids.index("free-time")]
    assert "51.6% to 87.4% of the step on 8 of 8 rank(s) (most: rank 1)" in free.message
    spread_finding = next(f for f in summary.findings if f.id == "rank-spread")
    assert spread_finding.threshold == 0.05
    assert "slow_rank_analyzer.py" in spread_finding.source
    assert "rank 0 is the slowest" in spread_finding.message
    assert "communication 36.4%" in spread_finding.message  # (756.4 - 133.4) / 1711.2 ms
    assert "devices.health" in spread_finding.doctor_checks


# msprof-analyze's own unit test writes this step_trace_time.csv (its file_manager test,
# Ascend/msprof-analyze test/ut): an early header without Overlapped, Stage or Bubble.
EARLY_STEP_TRACE = ("Step,Computing,Communication(Not Overlapped),Communication,Free\n"
                    "10,201420.74,195349.64,224087.84,230068.36")
# torch_npu's own header (torch_npu/profiler/analysis/prof_view/trace_step_time.py, title) with
# the Device_id and Preparing columns newer releases add; two steps of one device.
NEWER_STEP_TRACE = (
    "Device_id,Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,"
    "Stage,Bubble,Communication(Not Overlapped and Exclude Receive),Preparing\n"
    "0,1,3000.0,200.0,100.0,300.0,50.0,3250.0,0.0,200.0,10.0\n"
    "0,2,3100.0,220.0,120.0,340.0,70.0,3390.0,0.0,220.0,30.0\n")


def test_step_trace_header_variants(tmp_path: Path) -> None:
    early = tmp_path / "step_trace_time.csv"
    early.write_text(EARLY_STEP_TRACE)
    [split], table = read_rank_steps(early, "3")
    assert (split.rank, split.steps, split.computing, split.free) == ("3", 1, 201420.74,
                                                                      230068.36)
    assert split.overlapped == 0.0 and split.bubble is None and table.unknown == []
    newer = tmp_path / "newer_step_trace_time.csv"
    newer.write_text(NEWER_STEP_TRACE)
    [split], table = read_rank_steps(newer, "0")
    assert split.steps == 2
    assert split.computing == pytest.approx(3050.0)
    assert split.preparing == pytest.approx(20.0)
    assert table.unknown == []


def test_a_folder_of_ranks_names_each_by_its_profiler_info(tmp_path: Path) -> None:
    """torch_npu's layout: one *_ascend_pt folder per rank, profiler_info_{rank}.json beside
    ASCEND_PROFILER_OUTPUT."""
    for rank, free in (("3", "230068.36"), ("11", "530068.36")):
        folder = tmp_path / f"node1_{rank}000_20260101000000000_ascend_pt"
        (folder / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
        (folder / f"profiler_info_{rank}.json").write_text("{}")
        (folder / "ASCEND_PROFILER_OUTPUT" / "step_trace_time.csv").write_text(
            EARLY_STEP_TRACE.replace("230068.36", free))
    summary = summarize(tmp_path)
    assert sorted(s.rank for s in summary.steps) == ["11", "3"]
    assert summary.spread is not None and summary.spread.slowest_rank == "11"
    assert summary.spread.gaps["free"] == pytest.approx(
        300000.0 / ((201420.74 + 195349.64) + (230068.36 + 530068.36) / 2))
    assert summary.unread == []
