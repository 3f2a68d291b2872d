"""cluster_communication.json: HCCL by operation and transport, against sums made here and
msprof-analyze's per-rank bandwidth of the same file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ascend_env.perf.summarize import summarize
from tests.perf.profiler_files import CLUSTER_COMM, needs_fixtures

pytestmark = needs_fixtures


def test_operations_and_wait_share() -> None:
    document = json.loads(CLUSTER_COMM.read_text())
    records = [rank for group in document.values() for step in group.values()
               for op in step.values() for rank in op.values()]
    elapse = sum(r["Communication Time Info"]["Elapse Time(ms)"] for r in records)
    wait = sum(r["Communication Time Info"]["Wait Time(ms)"] for r in records)
    summary = summarize(CLUSTER_COMM)
    [op] = summary.hccl_ops
    assert (op.op, op.count) == ("broadcast", len(records)) == ("broadcast", 4)
    assert op.elapse_ms == pytest.approx(elapse)
    assert op.wait_share == pytest.approx(wait / elapse)
    transports = {t.transport: t for t in summary.transports}
    assert set(transports) == {"RDMA", "HCCS", "PCIE", "SDMA"}
    hccs = [r["Communication Bandwidth Info"]["HCCS"] for r in records]
    assert transports["HCCS"].size_mb == pytest.approx(sum(h["Transit Size(MB)"] for h in hccs))
    # Each record's own Bandwidth(GB/s) is its size over its time, the unit used here.
    first = hccs[0]
    assert first["Bandwidth(GB/s)"] == pytest.approx(
        first["Transit Size(MB)"] / first["Transit Time(ms)"], abs=1e-4)


def test_rank_bandwidth_equals_msprof_analyze(tmp_path: Path) -> None:
    cluster_dataset = pytest.importorskip("msprof_analyze.advisor.dataset.cluster.cluster_dataset")
    (tmp_path / "cluster_analysis_output").mkdir()
    (tmp_path / "cluster_analysis_output" / "cluster_communication.json").symlink_to(
        CLUSTER_COMM.resolve())
    theirs = dict(cluster_dataset.ClusterCommunicationDataset(str(tmp_path), {}).get_data())
    ours = {(t.transport, t.rank): t for t in summarize(CLUSTER_COMM).rank_transports}
    assert set(theirs) == {"-1_0", "-1_1"}  # no step number in this file: msprof's -1
    for key, figures in theirs.items():
        rank = key.split("_")[-1]
        for transport in ("SDMA", "RDMA"):
            mine = ours[(transport, rank)]
            assert mine.size_mb == pytest.approx(figures[f"{transport} size(mb)"])
            assert mine.time_ms == pytest.approx(figures[f"{transport} time(ms)"])
            assert round(mine.bandwidth_gbps, 4) == figures[f"{transport} bandwidth(GB/s)"]
