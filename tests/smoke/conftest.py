"""Real smoke runs: the workloads run for real with this interpreter's frameworks on the CPU,
and with a fake torch_npu (fake_npu/) standing in for broken Ascend stacks."""

from __future__ import annotations

import os
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest

FAKE_NPU = Path(__file__).resolve().parent / "fake_npu"
HAS_TORCH = find_spec("torch") is not None
HAS_MINDSPORE = find_spec("mindspore") is not None
needs_torch = pytest.mark.skipif(
    not HAS_TORCH, reason="torch is not installed for this Python (pip install torch==2.13.0, "
                          "the CPU build)")
needs_mindspore = pytest.mark.skipif(
    not HAS_MINDSPORE, reason="MindSpore is not installed for this Python (pip install "
                              "mindspore: CPU wheels for cp311 x86_64 from 2.7.0)")


@pytest.fixture
def fake_npu(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """Put the fake torch_npu first on the workload's path (mode: ASCEND_ENV_FAKE_NPU)."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(FAKE_NPU), *filter(None, [os.environ.get("PYTHONPATH")])]))
    return monkeypatch


@pytest.fixture
def python() -> str:
    return sys.executable
