"""`ascend-env smoke` end to end: exit codes and messages, never a traceback."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from tests.cli_invoke import CliResult, invoke
from tests.smoke.conftest import needs_torch

pytestmark = pytest.mark.slow


def no_traceback(result: CliResult) -> None:
    assert "Traceback" not in result.out + result.err


@needs_torch
def test_default_npu_without_an_npu_names_the_missing_evidence() -> None:
    result = invoke("smoke", "--framework", "torch", "--steps", "5", "--timeout", "60")
    assert result.code == 1, result
    no_traceback(result)
    assert "smoke torch on npu:0: FAIL" in result.out
    assert "no torch_npu" in result.out
    if not any(Path(p).is_dir() for p in ("/usr/local/Ascend/cann",
                                           "/usr/local/Ascend/ascend-toolkit/latest")) \
            and "ASCEND_HOME_PATH" not in os.environ:
        assert "no CANN" in result.out
    if not list(Path("/dev").glob("davinci[0-9]*")):
        assert "no NPU device" in result.out


@needs_torch
def test_cpu_run_json(tmp_path: Path) -> None:
    result = invoke("smoke", "--framework", "torch", "--device", "cpu", "--steps", "10",
                    "--timeout", "20", "--profile", "910b", "--json")
    assert result.code == 0, result
    verdict = json.loads(result.out)
    assert verdict["schema"] == "ascend-env/smoke/verdict/v1"
    assert verdict["outcome"] == "cpu" and verdict["framework"] == "torch"
    assert verdict["thresholds"]["chip"] == "910b"  # from the profile's hardware.chip
    assert verdict["evidence"]["schema"] == "ascend-env/smoke/torch/v1"
    assert verdict["evidence"]["requested"]["steps"] == 10
    assert {c["id"] for c in verdict["checks"]} >= {"placement", "loss", "matmul"}


def test_python_that_does_not_exist_cannot_run(tmp_path: Path) -> None:
    result = invoke("smoke", "--framework", "torch", "--python", str(tmp_path / "python"))
    assert result.code == 2
    no_traceback(result)
    assert "cannot run" in result.err


def test_python_without_the_framework_cannot_run(tmp_path: Path) -> None:
    """-S hides site-packages: the interpreter runs, torch is not importable."""
    bare = tmp_path / "python-without-torch"
    bare.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n')
    bare.chmod(bare.stat().st_mode | stat.S_IXUSR)
    result = invoke("smoke", "--framework", "torch", "--device", "cpu", "--python", str(bare))
    assert result.code == 2, result
    no_traceback(result)
    assert "torch is not importable" in result.out


@pytest.mark.parametrize("argv", [
    ["--framework", "torch", "--device", "npu:x"],
    ["--framework", "hccl", "--device", "npu:0"],
    ["--framework", "torch", "--chip", "a100"],
    ["--framework", "tensorflow"],
])
def test_bad_usage_exits_2(argv: list[str]) -> None:
    result = invoke("smoke", *argv)
    assert result.code == 2, result
    no_traceback(result)


def test_help_lists_the_command() -> None:
    result = invoke("smoke", "--help")
    assert result.code == 0 and "--framework" in result.out
