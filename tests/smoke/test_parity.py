"""`smoke --parity` for real on the CPU: the model in fp32 and bf16 against float64, an
operator perturbed through a sitecustomize on the workload interpreter's path, and a CPU
fallback warning printed by one worker of two."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ascend_env.smoke.runner import SmokeRequest, run_smoke
from tests.cli_invoke import invoke
from tests.smoke.conftest import needs_mindspore, needs_torch

pytestmark = pytest.mark.slow

QUICK = ("--throughput-seconds", "0.2")
ROW_FIELDS = {"name", "op", "dtype", "phase", "tensor", "shape", "max_abs_err", "max_rel_err",
              "scaled_err", "cosine", "threshold", "threshold_dtype", "status"}

# torch_npu's warning for an operator without an NPU kernel, verbatim from a 910B user's log
# (https://github.com/hiyouga/LlamaFactory/issues/4836); the fake below prints it for GELU.
FALLBACK_LINE = ("[W VariableFallbackKernel.cpp:51] Warning: CAUTION: The operator "
                 "'aten::isin.Tensor_Tensor_out' is not currently supported on the NPU backend "
                 "and will fall back to run on the CPU. This may have performance implications. "
                 "(function npu_cpu_fallback)")

# One operator of the device run off by 3%: the float64 reference is left alone, as a faulty
# device kernel would leave it.
PERTURB_LAYER_NORM = """\
import torch
import torch.nn.functional as F

_layer_norm = F.layer_norm


def layer_norm(*args, **kwargs):
    out = _layer_norm(*args, **kwargs)
    return out if out.dtype == torch.float64 else out * 1.03


F.layer_norm = layer_norm
"""

# torch_npu's rule for printing its warnings (OptionsManager::ShouldPrintWarning, Ascend/pytorch
# torch_npu/csrc/core/npu/register/OptionsManager.cpp): not when TORCH_NPU_DISABLED_WARNING=1,
# else only when RANK is unset or 0. This stand-in follows it on the worker of rank 1.
FALLBACK_ON_RANK_1 = f"""\
import os
import sys

import torch.nn.functional as F

_gelu = F.gelu
_said = []


def _prints():
    if os.environ.get("TORCH_NPU_DISABLED_WARNING") == "1":
        return False
    return os.environ.get("RANK", "0") == "0"


def gelu(*args, **kwargs):
    if os.environ.get("ASCEND_ENV_RANK") == "1" and _prints() and not _said:
        _said.append(1)
        sys.stderr.write({FALLBACK_LINE!r} + "\\n")
    return _gelu(*args, **kwargs)


F.gelu = gelu
"""


def with_sitecustomize(monkeypatch: pytest.MonkeyPatch, folder: Path, text: str) -> None:
    (folder / "sitecustomize.py").write_text(text, encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(folder), *filter(None, [os.environ.get("PYTHONPATH")])]))


@needs_torch
def test_cpu_parity_passes_with_per_layer_rows() -> None:
    result = invoke("smoke", "--framework", "torch", "--device", "cpu", "--parity",
                    "--steps", "10", "--timeout", "120", "--json")
    assert result.code == 0, result
    verdict = json.loads(result.out)
    assert verdict["outcome"] == "cpu"
    checks = {c["id"]: c for c in verdict["checks"]}
    assert checks["parity"]["status"] == "pass"
    assert checks["parity-fallbacks"]["status"] == "pass"
    parity = verdict["evidence"]["parity"]
    assert parity["status"] == "ok" and parity["first_divergence"] is None
    assert parity["dtypes"] == ["float32", "bfloat16"]
    (rank,) = parity["ranks"]
    assert [run["dtype"] for run in rank["runs"]] == ["float32", "bfloat16"]
    for run in rank["runs"]:
        names = [row["name"] for row in run["rows"] if row["phase"] == "forward"]
        assert names[:3] == ["embedding", "ln1", "attn.qkv"]
        assert {"conv", "batch_norm", "attn.softmax", "mlp.gelu", "swiglu.silu",
                "loss"} <= set(names)
        ops = {row["op"] for row in run["rows"]}
        assert {"embedding", "layer_norm", "softmax", "conv2d", "batch_norm", "gelu", "silu",
                "linear", "matmul", "cross_entropy"} <= ops
        for row in run["rows"]:
            assert set(row) >= ROW_FIELDS
            assert row["status"] == "pass"
            assert row["scaled_err"] <= row["threshold"]
        backward = [row for row in run["rows"] if row["phase"] == "backward"]
        assert backward[0]["name"] == "head"  # backward rows in the order backward runs
        assert {"grad_output", "grad_weight", "grad_bias"} <= {r["tensor"] for r in backward}
    limits = {run["dtype"]: run["rows"][0]["threshold"] for run in rank["runs"]}
    assert limits == {"float32": pytest.approx(1e-5), "bfloat16": pytest.approx(4e-2)}


@needs_torch
def test_a_perturbed_layer_norm_is_named_first(monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Path) -> None:
    with_sitecustomize(monkeypatch, tmp_path, PERTURB_LAYER_NORM)
    result = invoke("smoke", "--framework", "torch", "--device", "cpu", "--parity",
                    "--steps", "10", "--timeout", "120")
    assert result.code == 1, result
    line = next(line for line in result.out.splitlines() if "parity " in line)
    assert "FAIL" in line
    assert "first divergence ln1 (layer_norm, float32) forward output" in line
    assert "consequences: attn.qkv output" in line
    assert "Traceback" not in result.out + result.err


@needs_torch
def test_a_perturbed_layer_norm_in_the_json(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                           python: str) -> None:
    with_sitecustomize(monkeypatch, tmp_path, PERTURB_LAYER_NORM)
    verdict = run_smoke(SmokeRequest(framework="torch", device="cpu", steps=10, timeout_s=120,
                                     python=python, parity=True, extra=QUICK))
    assert verdict.exit_code == 1
    first = verdict.evidence["parity"]["first_divergence"]
    assert (first["name"], first["op"], first["dtype"]) == ("ln1", "layer_norm", "float32")
    assert first["scaled_err"] == pytest.approx(0.03, rel=1e-3)
    assert first["max_rel_err"] == pytest.approx(0.03, rel=1e-2)
    rows = verdict.evidence["parity"]["ranks"][0]["runs"][0]["rows"]
    statuses = [(row["name"], row["status"]) for row in rows if row["phase"] == "forward"]
    assert statuses[:3] == [("embedding", "pass"), ("ln1", "fail"), ("attn.qkv", "consequence")]
    # The image branch does not pass through a layer norm: it stays within tolerance.
    assert dict(statuses)["conv"] == dict(statuses)["batch_norm"] == "pass"


@needs_torch
def test_a_fallback_on_rank_1_is_reported_and_fails(monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path, python: str) -> None:
    """Two workers; rank 1 prints torch_npu's warning, which torch_npu would have silenced
    there had the workload left RANK (or TORCH_NPU_DISABLED_WARNING) in its environment."""
    with_sitecustomize(monkeypatch, tmp_path, FALLBACK_ON_RANK_1)
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("TORCH_NPU_DISABLED_WARNING", "1")
    verdict = run_smoke(SmokeRequest(framework="torch", device="cpu", steps=10, timeout_s=120,
                                     python=python, parity=True,
                                     extra=(*QUICK, "--parity-ranks", "2")))
    assert verdict.exit_code == 1
    failing = {c.id: c.message for c in verdict.checks if c.status == "fail"}
    assert set(failing) == {"parity-fallbacks"}
    assert "rank 1: aten::isin.Tensor_Tensor_out" in failing["parity-fallbacks"]
    parity = verdict.evidence["parity"]
    assert parity["fallbacks"]["per_rank"] == {"0": [], "1": ["aten::isin.Tensor_Tensor_out"]}
    ranks = parity["ranks"]
    assert [r["rank"] for r in ranks] == [0, 1] and ranks[0]["pid"] != ranks[1]["pid"]
    assert parity["first_divergence"] is None  # the numbers themselves are right


def test_parity_with_hccl_is_bad_usage() -> None:
    result = invoke("smoke", "--framework", "hccl", "--device", "cpu", "--parity")
    assert result.code == 2, result
    assert "--parity: the parity model runs with --framework torch or mindspore" in result.err


@needs_mindspore
def test_mindspore_parity_forward_on_the_cpu(python: str) -> None:
    verdict = run_smoke(SmokeRequest(framework="mindspore", device="cpu", steps=20,
                                     timeout_s=300, python=python, parity=True, extra=QUICK))
    assert (verdict.outcome, verdict.exit_code) == ("cpu", 0), verdict.checks
    checks = {c.id: c for c in verdict.checks}
    assert checks["parity"].status == "pass" and "forward only" in checks["parity"].message
    assert checks["parity-fallbacks"].status == "skip"  # MindSpore does not report them
    (rank,) = verdict.evidence["parity"]["ranks"]
    assert [run["dtype"] for run in rank["runs"]] == ["float32", "float16"]
    for run in rank["runs"]:
        assert [row["name"] for row in run["rows"]][:2] == ["embedding", "ln1"]
        assert {row["phase"] for row in run["rows"]} == {"forward"}
        assert all(row["scaled_err"] <= row["threshold"] for row in run["rows"])
