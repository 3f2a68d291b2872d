"""`perf --host -- CMD`: the job run on a target through testinfra (here `local://`, the same
ship/run/bring-back steps as over ssh), its output brought back under the host's name."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ascend_env.perf.on_targets import job_script, label
from tests.cli_invoke import invoke
from tests.perf.test_run_cpu import FALLBACK_LINES, TRAIN

pytest.importorskip("torch")
pytest.importorskip("testinfra")


def test_local_target_run_is_brought_back(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(TRAIN + "import sys\n" + "".join(
        f"print({line!r}, file=sys.stderr)\n" for line in FALLBACK_LINES))
    out = tmp_path / "out"
    result = invoke("perf", "--host", "local://", "--out", str(out), "--steps", "2", "--json",
                    "--", sys.executable, str(script))
    assert result.code == 0, result.err
    document = json.loads(result.out)
    assert document["host_only"] is True
    assert document["run"]["hosts"]["localhost"]["returncode"] == 0
    assert "aten::addmm" in [op["name"] for op in document["top_host_ops"]]
    # Ranks carry the host's name; fallbacks too.
    assert [n["rank"] for n in document["files"]] == ["localhost/0"]
    assert document["cpu_fallbacks"] == {
        "aten::isin.Tensor_Tensor_out": ["localhost/0", "localhost/3"]}
    brought = out / "localhost"
    assert (brought / "run.log").read_text().count("loss") == 8
    assert list((brought / "raw").glob("localhost@rank0_pid*.pt.trace.json"))


def test_failing_job_on_target_is_exit_1(tmp_path: Path) -> None:
    script = tmp_path / "broken.py"
    script.write_text("raise SystemExit(5)\n")
    result = invoke("perf", "--host", "local://", "--out", str(tmp_path / "o"), "--",
                    sys.executable, str(script))
    assert result.code == 1
    assert "localhost: exited 5" in result.err


def test_the_job_script_quotes_everything() -> None:
    text = job_script(["python3", "train.py", "--name", "a b; rm -rf /"], "/tmp/ascend-env-perf.x",
                      "node 1", skip=1, steps=3, timeout_s=60)
    assert "'a b; rm -rf /'" in text
    assert "unset TORCH_NPU_DISABLED_WARNING TORCH_NPU_WARNING_DISABLE" in text
    assert "timeout -k 10 61 python3 train.py" in text
    assert label("node 1") == "node-1" and label("../x") == "-x" and label("..") == "host"


def test_host_and_inventory_together_is_usage_error(tmp_path: Path) -> None:
    result = invoke("perf", "--host", "local://", "--inventory", str(tmp_path / "h.ini"),
                    "--", "python3", "x.py")
    assert result.code == 2 and "not both" in result.err
