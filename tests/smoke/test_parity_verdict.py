"""The parity judgement on evidence documents, and the fallback detection every workload (and
`perf`) shares: fast, without running a framework."""

# ruff: noqa: E501  (verbatim vendor output wider than the line limit)
from __future__ import annotations

import copy
from typing import Any

import pytest

from ascend_env.remote import op_fallbacks
from ascend_env.remote.parity_rules import mark_divergence, threshold_for
from ascend_env.smoke.evidence import failure_logs
from tests.smoke.test_verdict import failed, torch_doc, verdict_of

# torch_npu's warning as users posted it from 910B hosts: the C++ form with the file of the
# release (https://github.com/opendatalab/MinerU/issues/1695, compiler_depend.ts in release
# builds; https://github.com/hiyouga/LlamaFactory/issues/4836, VariableFallbackKernel.cpp).
MINERU_1695 = """\
[W compiler_depend.ts:51] Warning: CAUTION: The operator 'torchvision::nms' is not currently supported on the NPU backend and will fall back to run on the CPU. This may have performance implications. (function npu_cpu_fallback)
[W compiler_depend.ts:51] Warning: CAUTION: The operator 'aten::isin.Tensor_Tensor_out' is not currently supported on the NPU backend and will fall back to run on the CPU. This may have performance implications. (function npu_cpu_fallback)
"""
LLAMAFACTORY_4836 = "[W VariableFallbackKernel.cpp:51] Warning: CAUTION: The operator 'aten::isin.Tensor_Tensor_out' is not currently supported on the NPU backend and will fall back to run on the CPU. This may have performance implications. (function npu_cpu_fallback)"


def row(name: str, op: str, *, phase: str = "forward", tensor: str = "output",
        err: float | None = 1e-7, limit: float = 1e-5, status: str = "pass") -> dict[str, Any]:
    return {"name": name, "op": op, "dtype": "float32", "phase": phase, "tensor": tensor,
            "shape": [4, 8], "max_abs_err": err, "max_rel_err": err, "scaled_err": err,
            "cosine": 1.0, "threshold": limit, "threshold_dtype": "float32", "status": status}


def parity_doc(rows: list[dict[str, Any]], *, ops: list[str] | None = None,
               rank_status: str = "ok") -> dict[str, Any]:
    document = torch_doc("cpu")
    document["requested"]["parity"] = True
    document["parity"] = {
        "model": "test", "reference": "float64 on cpu", "seed": 0, "dtypes": ["float32"],
        "thresholds": {"limit": {"float32": 1e-5}},
        "ranks": [{"rank": 0, "device": "cpu", "pid": 7, "status": rank_status,
                   "reason": None if rank_status == "ok" else "worker exited 1 without evidence",
                   "cpu_fallback_ops": ops or [],
                   "runs": [{"dtype": "float32", "device": "cpu", "rows": rows,
                             "first_divergence": None}]}],
        "first_divergence": None,
        "fallbacks": {"per_rank": {"0": ops or []}, "ops": ops or [], "source": "test"},
        "status": "ok", "reason": None}
    return document


ROWS = [row("embedding", "embedding"), row("ln1", "layer_norm"), row("attn.qkv", "linear"),
        row("head", "linear", phase="backward", tensor="grad_weight")]


def test_rows_within_tolerance_pass() -> None:
    verdict = verdict_of(parity_doc(copy.deepcopy(ROWS)), chip=None)
    assert (verdict.outcome, verdict.exit_code) == ("cpu", 0), verdict.checks
    message = next(c.message for c in verdict.checks if c.id == "parity")
    assert message.startswith("4 layer outputs and gradients on 1 rank(s) within tolerance")


def test_the_verdict_rereads_the_rows_and_names_the_first_divergence() -> None:
    """The workload's own statuses say pass; the figures say otherwise."""
    rows = copy.deepcopy(ROWS)
    rows[1]["scaled_err"] = rows[1]["max_abs_err"] = 0.03
    rows[2]["scaled_err"] = 0.02
    rows[3]["scaled_err"] = None  # not finite on the device
    verdict = verdict_of(parity_doc(rows), chip=None)
    assert verdict.exit_code == 1
    text = failed(verdict)["parity"]
    assert text.startswith("first divergence ln1 (layer_norm, float32) forward output on cpu "
                           "rank 0: scaled error 0.03 > 1e-05 (max abs 0.03, max rel 1e-07)")
    assert text.endswith("2 later comparison(s) out of tolerance as consequences: "
                         "attn.qkv output, head grad_weight")


def test_parity_asked_for_but_not_recorded_fails() -> None:
    document = torch_doc("cpu")
    document["requested"]["parity"] = True
    verdict = verdict_of(document, chip=None)
    assert "recorded no parity evidence" in failed(verdict)["parity"]


def test_a_rank_without_evidence_fails_parity() -> None:
    verdict = verdict_of(parity_doc([], rank_status="error"), chip=None)
    assert "rank 0 (cpu): worker exited 1 without evidence" in failed(verdict)["parity"]


def test_a_model_kept_on_the_host_fails_parity() -> None:
    document = parity_doc(copy.deepcopy(ROWS))
    document["parity"]["ranks"][0]["device"] = "npu:0"
    verdict = verdict_of(document, chip=None)
    assert "rank 0: float32 computed on cpu although npu:0 was requested" in \
        failed(verdict)["parity"]


def test_a_fallen_back_operator_fails() -> None:
    verdict = verdict_of(parity_doc(copy.deepcopy(ROWS), ops=["aten::isin.Tensor_Tensor_out"]),
                         chip=None)
    assert set(failed(verdict)) == {"parity-fallbacks"}
    assert "rank 0: aten::isin.Tensor_Tensor_out" in failed(verdict)["parity-fallbacks"]


def test_workload_marks_later_failures_as_consequences() -> None:
    rows = [row("a", "x"), row("b", "y", status="fail"), row("c", "z", status="fail"),
            row("c", "z", phase="backward", tensor="grad_output", status="fail")]
    first = mark_divergence(rows)
    assert first is not None and first["name"] == "b"
    assert first["consequences"] == ["c output", "c grad_output"]
    assert [r["status"] for r in rows] == ["pass", "fail", "consequence", "consequence"]
    assert mark_divergence([row("a", "x")]) is None


@pytest.mark.parametrize(("dtype", "reduced", "expected"), [
    ("float32", False, (1e-5, "float32")), ("float32", True, (1e-2, "float16")),
    ("float16", False, (1e-2, "float16")), ("bfloat16", True, (4e-2, "bfloat16")),
])
def test_thresholds_are_msprobe_rtol_times_ten(dtype: str, reduced: bool,
                                               expected: tuple[float, str]) -> None:
    limit, basis = threshold_for(dtype, reduced)
    assert limit == pytest.approx(expected[0])
    assert basis == expected[1]


def test_fallback_operators_from_real_warnings() -> None:
    assert op_fallbacks.cpu_fallback_ops(MINERU_1695) == ["aten::isin.Tensor_Tensor_out",
                                                          "torchvision::nms"]
    assert op_fallbacks.cpu_fallback_ops(LLAMAFACTORY_4836) == ["aten::isin.Tensor_Tensor_out"]
    assert op_fallbacks.cpu_fallback_ops("step 3 loss 0.25\n") == []
    per_rank = op_fallbacks.by_rank({"0": "", "3": MINERU_1695})
    assert op_fallbacks.union(per_rank) == ["aten::isin.Tensor_Tensor_out", "torchvision::nms"]


def test_every_rank_gets_an_environment_in_which_torch_npu_warns() -> None:
    parent = {"RANK": "3", "TORCH_NPU_DISABLED_WARNING": "1", "PATH": "/usr/bin",
              "ASCEND_HOME_PATH": "/usr/local/Ascend/cann"}
    env = op_fallbacks.reporting_env(parent, rank=3)
    assert env == {"PATH": "/usr/bin", "ASCEND_HOME_PATH": "/usr/local/Ascend/cann",
                   "ASCEND_ENV_RANK": "3"}
    assert parent["RANK"] == "3"  # the caller's mapping is left alone


def test_a_failed_parity_worker_log_reaches_explain() -> None:
    document = parity_doc([], rank_status="error")
    document["parity"]["ranks"][0]["log_tail"] = "ImportError: libhccl.so: cannot open shared"
    assert "ImportError: libhccl.so: cannot open shared" in failure_logs(document)
