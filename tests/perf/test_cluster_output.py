"""msprof-analyze 26.2.0's own cluster output, made in the test by msprof-analyze itself from
rank folders: its per-group totals rows (`Total Op Info@<group>`) are never operations, and
every figure perf reads from its files is the one msprof-analyze's own datasets read.

The rank folders hold the real records of msprof-analyze's test data (its cluster
communication file split back into each rank's communication.json, its cluster step table
into each rank's step_trace_time.csv), laid out as torch_npu writes them.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from ascend_env.perf.summarize import summarize
from tests.cli_invoke import invoke
from tests.perf.profiler_files import CLUSTER_COMM, CLUSTER_STEPS, needs_fixtures

pytestmark = needs_fixtures
STEP_HEADER = ("Step", "Computing", "Communication(Not Overlapped)", "Overlapped",
               "Communication", "Free", "Stage", "Bubble",
               "Communication(Not Overlapped and Exclude Receive)")


def _records() -> list[tuple[str, str, dict[str, Any]]]:
    """(operator, rank, record) for each record of the real cluster communication file."""
    document = json.loads(CLUSTER_COMM.read_text())
    return [(op, rank, record) for group in document.values() for step in group.values()
            for op, ranks in step.items() for rank, record in ranks.items()]


def _rank_rows() -> list[dict[str, str]]:
    with CLUSTER_STEPS.open(newline="") as handle:
        return [r for r in csv.DictReader(handle) if r["Type"] == "rank"]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Rank folders, then `msprof-analyze cluster -m all` on them (its text output)."""
    tool = Path(sys.executable).with_name("msprof-analyze")
    if not tool.is_file():
        pytest.skip("msprof-analyze (the dev extra, 26.2.0) is not installed beside python")
    root = tmp_path_factory.mktemp("cluster")
    per_rank: dict[str, dict[str, Any]] = defaultdict(dict)
    for op, rank, record in _records():
        per_rank[rank].setdefault("step1", {}).setdefault("collective", {})[op] = record
    for row in _rank_rows():
        rank = row["Index"]
        output = root / f"node1_{rank}_20260101000000000_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
        output.mkdir(parents=True)
        (output.parent / f"profiler_info_{rank}.json").write_text("{}")
        if rank in per_rank:
            (output / "communication.json").write_text(json.dumps(per_rank[rank]))
        with (output / "step_trace_time.csv").open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(STEP_HEADER)
            writer.writerow(["1", *(row[k] for k in STEP_HEADER[1:])])
    done = subprocess.run([str(tool), "cluster", "-d", str(root), "-m", "all", "--force"],
                          capture_output=True, text=True, timeout=300, check=False)
    output = root / "cluster_analysis_output"
    assert done.returncode == 0 and (output / "cluster_communication.json").is_file(), \
        done.stdout[-2000:] + done.stderr[-2000:]
    return root


def test_the_cluster_file_has_totals_rows(cluster: Path) -> None:
    """What this test is about: msprof-analyze 26 writes a totals row per group, named with
    the group."""
    document = json.loads((cluster / "cluster_analysis_output" /
                           "cluster_communication.json").read_text())
    names = [op for group in document.values() for step in group.values() for op in step]
    assert any(n.startswith("Total Op Info@") for n in names)


def test_totals_rows_are_not_operations(cluster: Path) -> None:
    summary = summarize(cluster)
    records = _records()
    assert [(o.op, o.count) for o in summary.hccl_ops] == [("broadcast", len(records))]
    elapse = sum(r["Communication Time Info"]["Elapse Time(ms)"] for _, _, r in records)
    assert summary.hccl_ops[0].elapse_ms == pytest.approx(elapse)
    transports = {t.transport: t for t in summary.transports}
    for link in ("HCCS", "PCIE", "SDMA", "RDMA"):
        size = sum(r["Communication Bandwidth Info"][link]["Transit Size(MB)"]
                   for _, _, r in records)
        assert transports[link].size_mb == pytest.approx(size)  # once, not twice
    text = invoke("perf", "--from", str(cluster)).out
    assert "Total Op Info" not in text
    assert "HCCL by operation: broadcast x4 " in text


def test_rank_figures_equal_msprof_analyzes_own_totals(cluster: Path) -> None:
    """msprof-analyze computes each rank's sum of a group's operators itself: its totals row.
    perf's per-rank bytes and times, summed from the operators, are those figures."""
    document = json.loads((cluster / "cluster_analysis_output" /
                           "cluster_communication.json").read_text())
    theirs: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0])
    for group in document.values():
        for step in group.values():
            for op, ranks in step.items():
                if not op.startswith("Total Op Info@"):
                    continue
                for rank, record in ranks.items():
                    for link, info in record["Communication Bandwidth Info"].items():
                        theirs[(link, rank)][0] += info["Transit Size(MB)"]
                        theirs[(link, rank)][1] += info["Transit Time(ms)"]
    ours = {(t.transport, t.rank): t for t in summarize(cluster).rank_transports}
    assert theirs and set(ours) == set(theirs)
    for key, (size, time) in theirs.items():
        assert ours[key].size_mb == pytest.approx(size)
        assert ours[key].time_ms == pytest.approx(time)


def test_msprof_analyzes_advisor_counts_its_totals_rows_too(cluster: Path) -> None:
    """Why the advisor is not the oracle here: its cluster communication dataset sums every
    key of a step, the totals row with the operators (advisor/dataset/cluster/
    cluster_dataset.py, compute_bandwidth), so on its own 26.x output it reports twice the
    SDMA bytes perf does."""
    cluster_dataset = pytest.importorskip("msprof_analyze.advisor.dataset.cluster.cluster_dataset")
    # Keyed by the path: msprof-analyze's datasets are singletons per collection path.
    theirs = dict(cluster_dataset.ClusterCommunicationDataset(
        collection_path=str(cluster), data={}).get_data())
    ours = {(t.transport, t.rank): t for t in summarize(cluster).rank_transports}
    assert theirs
    for key, figures in theirs.items():
        rank = key.split("_")[-1]
        assert figures["SDMA size(mb)"] == pytest.approx(2 * ours[("SDMA", rank)].size_mb)


def test_step_split_equals_msprof_analyze_on_its_own_output(cluster: Path) -> None:
    cluster_dataset = pytest.importorskip("msprof_analyze.advisor.dataset.cluster.cluster_dataset")
    slow_rank = pytest.importorskip("msprof_analyze.advisor.analyzer.cluster.slow_rank_analyzer")
    summary = summarize(cluster)
    rows = {r["Index"]: r for r in _rank_rows()}
    assert sorted(s.rank for s in summary.steps) == sorted(rows)
    for split in summary.steps:
        assert split.computing == pytest.approx(float(rows[split.rank]["Computing"]))
        assert split.free == pytest.approx(float(rows[split.rank]["Free"]))
    theirs = dict(cluster_dataset.ClusterStepTraceTimeDataset(
        collection_path=str(cluster), data={}).get_data())
    totals = [sum(v) for v in theirs.values()]
    mean = sum(totals) / len(totals)
    assert summary.spread is not None
    for index, part in enumerate(("computing", "communication", "free")):
        values = [v[index] for v in theirs.values()]
        assert summary.spread.gaps[part] == pytest.approx(
            slow_rank.SlowRankAnalyzer.compute_max_gap_ratio(values, mean))


def test_what_the_cluster_output_holds_beside_is_listed(cluster: Path) -> None:
    summary = summarize(cluster)
    notes = {Path(n.path).name: n for n in summary.unread}
    assert notes["communication_group.json"].kind == "unused"
    covered = [n for n in summary.unread if n.kind == "communication"]
    assert len(covered) == 2 and all("covers it" in n.note for n in covered)
    assert not [n for n in summary.unread if n.kind == "unknown"]
