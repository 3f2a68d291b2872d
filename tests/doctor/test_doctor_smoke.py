"""Doctor level 2: the smoke workloads run through the check suite, evidence in the report.

A fake torch_npu (tests/smoke/fake_npu, the vendor's extension being the thing we fake) claims
an NPU but leaves every tensor on the CPU; the level-2 check must fail and carry the evidence.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FAKE = Path(__file__).resolve().parents[1] / "smoke" / "fake_npu" / "torch_npu"

pytestmark = pytest.mark.slow


def test_level_2_catches_training_that_silently_stays_on_the_cpu(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    site = tmp_path / "site"
    shutil.copytree(FAKE, site / "torch_npu")
    # Installed as a distribution, as the probe reads versions from metadata.
    info = site / "torch_npu-2.9.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: torch_npu\nVersion: 2.9.0\n")
    env = {**os.environ, "PYTHONPATH": str(site), "ASCEND_ENV_FAKE_NPU": "silent-cpu"}
    done = subprocess.run(
        [sys.executable, "-m", "ascend_env", "doctor", "--level", "2", "--only", "smoke.torch",
         "--python", sys.executable, "--json"],
        capture_output=True, text=True, env=env, cwd=tmp_path, check=False, timeout=600)
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    check = next(c for c in report["checks"] if c["id"] == "smoke.torch")
    assert check["status"] == "fail"
    assert "computed on cpu although npu:0 was requested" in check["message"]
    evidence = check["evidence"]
    assert evidence["schema"] == "ascend-env/smoke/verdict/v1"
    assert evidence["outcome"] == "fail"
    run = evidence["evidence"]["runs"][0]
    assert run["placement"]["parameters"] == ["cpu"]


def test_level_1_runs_no_workload(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "ascend_env", "doctor", "--only", "smoke",
                           "--json"], capture_output=True, text=True, cwd=tmp_path,
                          check=False, timeout=120)
    assert done.returncode == 2, done.stdout
    assert "no check matches" in done.stderr
