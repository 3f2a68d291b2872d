"""`ascend-env perf --from`: each real fixture and their folder through the real entry point;
hostile inputs end in a message and exit 2, never a traceback."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ascend_env.perf import kernel_batches, tables
from tests.cli_invoke import invoke
from tests.perf.profiler_files import (
    CLUSTER_COMM,
    CLUSTER_STEPS,
    FIXTURES,
    KERNEL_DETAILS,
    TRACE_VIEW,
    needs_fixtures,
)


@needs_fixtures
@pytest.mark.parametrize("path", [TRACE_VIEW, KERNEL_DETAILS, CLUSTER_STEPS, CLUSTER_COMM],
                         ids=lambda p: p.name.rsplit("__", 1)[-1])
def test_each_fixture_summarises(path: Path) -> None:
    result = invoke("perf", "--from", str(path), "--json")
    assert result.code == 0, result.err
    document = json.loads(result.out)
    assert document["schema"] == "ascend-env/perf/v1"
    assert document["host_only"] is False
    assert [f["path"] for f in document["files"]] == [str(path)]
    assert document["unread"] == []


@needs_fixtures
def test_folder_terminal_view() -> None:
    result = invoke("perf", "--from", str(FIXTURES))
    assert result.code == 0, result.err
    out = result.out
    assert "step time per rank" in out
    assert "slowest rank 0, fastest 7" in out
    assert "device time by core type: MIX_AIC" in out
    assert "FlashAttentionScoreGrad" in out
    assert "HCCL by operation: broadcast x4" in out
    assert "CPU fallbacks: not known" in out
    assert "check: ascend-env doctor --only devices.health --only network.links" in out
    # The README beside the data is not profiler output: listed, not dropped in silence.
    assert "not read: " + str(FIXTURES / "README.md") in out
    assert "Traceback" not in result.err


def test_missing_path_is_exit_2(tmp_path: Path) -> None:
    result = invoke("perf", "--from", str(tmp_path / "absent"))
    assert result.code == 2
    assert "No such file" in result.err


def test_empty_folder_is_exit_2(tmp_path: Path) -> None:
    result = invoke("perf", "--from", str(tmp_path))
    assert result.code == 2
    assert "no profiler output found" in result.err


def test_fifo_is_refused_without_hanging(tmp_path: Path) -> None:
    fifo = tmp_path / "trace_view.json"
    os.mkfifo(fifo)
    result = invoke("perf", "--from", str(fifo))
    assert result.code == 2
    assert "not a folder or a regular file" in result.err
    # Inside a folder the FIFO is skipped and named; nothing else there: exit 2.
    result = invoke("perf", "--from", str(tmp_path))
    assert result.code == 2


@needs_fixtures
def test_garbage_beside_good_data_is_reported(tmp_path: Path) -> None:
    (tmp_path / "rank1").mkdir()
    (tmp_path / "rank1" / "trace_view.json").write_text("{not json")
    (tmp_path / "rank0").mkdir()
    (tmp_path / "rank0" / "kernel_details.csv").symlink_to(KERNEL_DETAILS.resolve())
    (tmp_path / "rank2").mkdir()
    (tmp_path / "rank2" / "kernel_details.csv").write_text("")
    result = invoke("perf", "--from", str(tmp_path), "--json")
    # The link is not followed (a regular file only), so nothing readable is left: exit 2.
    assert result.code == 2
    assert "not JSON" in result.err and "empty file" in result.err
    (tmp_path / "rank0" / "kernel_details.csv").unlink()
    (tmp_path / "rank0" / "kernel_details.csv").write_bytes(KERNEL_DETAILS.read_bytes())
    result = invoke("perf", "--from", str(tmp_path), "--json")
    assert result.code == 0, result.err
    document = json.loads(result.out)
    unread = {Path(n["path"]).parent.name: n["note"] for n in document["unread"]}
    assert "not JSON" in unread["rank1"] and "empty file" in unread["rank2"]
    assert document["core_types"][0]["core"] == "MIX_AIC"


@needs_fixtures
def test_an_overlong_row_is_refused_not_held(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """No file is refused for its size; what is bounded is memory: a row longer than a kernel
    table's read block, or a line of a step table longer than MAX_LINE, is reported as not a
    table, without being held whole."""
    monkeypatch.setattr(kernel_batches, "BLOCK", 4096)
    header, first = KERNEL_DETAILS.read_text().split("\n")[:2]
    cells = first.split(",")
    long_row = ",".join([*cells[:4], "x" * 10_000, *cells[5:]])
    (tmp_path / "kernel_details.csv").write_text(f"{header}\n{first}\n{long_row}\n")
    result = invoke("perf", "--from", str(tmp_path / "kernel_details.csv"))
    assert result.code == 2
    assert "a row longer than 4096 bytes" in result.err
    monkeypatch.setattr(tables, "MAX_LINE", 1024)
    (tmp_path / "step_trace_time.csv").write_text("Step,Computing,Free\n" + "1" * 5000)
    result = invoke("perf", "--from", str(tmp_path / "step_trace_time.csv"))
    assert result.code == 2
    assert "a line longer than 1024 characters" in result.err


def test_from_and_command_together_is_usage_error() -> None:
    result = invoke("perf", "--from", str(TRACE_VIEW), "--", "python", "x.py")
    assert result.code == 2
    assert "not both" in result.err


def test_unparsed_ascend_folder_says_how_to_parse(tmp_path: Path) -> None:
    raw = tmp_path / "node1_1234_20260101_ascend_pt" / "PROF_000001" / "device_0" / "data"
    raw.mkdir(parents=True)
    (raw / "task_track.data.slice_0").write_bytes(b"\x00" * 64)
    result = invoke("perf", "--from", str(tmp_path))
    assert result.code == 2
    assert "torch_npu.profiler.profiler.analyse" in result.err
