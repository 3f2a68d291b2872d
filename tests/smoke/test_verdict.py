"""Verdicts on evidence documents: pass only on positive evidence from the requested device."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from pydantic import ValidationError

from ascend_env.smoke.evidence import parse_evidence
from ascend_env.smoke.verdict import Verdict, chip_from_name, judge, thresholds_for
from ascend_env.spec.matrix import load_chips, load_matrix

FALLING = [4.0, 3.5, 3.0, 2.4, 2.0, 1.5, 1.1, 0.8, 0.5, 0.4]


def run_on(device: str, *, tflops: float = 200.0, dtype: str = "float16") -> dict[str, Any]:
    """One device run as the torch workload records it, every check passing."""
    return {
        "device": device, "status": "ok", "reason": None, "device_name": "Ascend910ProB",
        "precision": "fp16",
        "training": {"steps": len(FALLING), "loss": list(FALLING), "steps_per_s": 120.0},
        "placement": {"parameters": [device], "batches": [device], "loss": device},
        "matmul_check": {"shape": [128, 256, 96], "dtype": "float32", "device": device,
                         "atol": 0.016, "rtol": 0.001, "max_abs_err": 1e-5,
                         "elements": 12288, "mismatches": 0, "ok": True},
        "throughput": {"dtype": dtype, "n": 4096, "iterations": 40, "seconds": 1.0,
                       "tflops": tflops, "device": device, "peak_tflops": None,
                       "sample_rel_err": 1e-3, "sample_tolerance": 1e-2, "sample_ok": True},
        "memory": {"peak_allocated_bytes": 300 * 2**20,
                   "source": "torch.npu.max_memory_allocated"},
        "process_table": {"tool": "npu-smi info", "rc": 0, "pid": 4242, "seen": True,
                          "rows": 1, "npus": [0]},
    }


def torch_doc(device: str = "npu:0", **changes: Any) -> dict[str, Any]:
    """A torch evidence document; `changes` replace keys of the first run."""
    run = run_on(device)
    run.update(changes)
    return {"schema": "ascend-env/smoke/torch/v1", "framework": "torch", "status": "ok",
            "reason": None, "missing": [], "requested": {"device": device, "steps": 10},
            "environment": {"executable": "/opt/venv/bin/python", "torch": "2.7.1"},
            "runs": [run], "fallbacks": {"cpu_ops": [], "aicpu_ops": [], "aicpu_error": None}}


def verdict_of(document: dict[str, Any], chip: str | None = "910", **limits: Any) -> Verdict:
    return judge(parse_evidence(document), thresholds_for(chip, **limits), document)


def failed(verdict: Verdict) -> dict[str, str]:
    return {c.id: c.message for c in verdict.checks if c.status == "fail"}


def test_npu_run_with_positive_evidence_passes() -> None:
    verdict = verdict_of(torch_doc())
    assert (verdict.outcome, verdict.exit_code) == ("pass", 0)
    throughput = next(c for c in verdict.checks if c.id == "throughput")
    assert "78% of the 256 TFLOPS peak" in throughput.message
    assert verdict.model_dump(by_alias=True)["schema"] == "ascend-env/smoke/verdict/v1"


def test_npu_requested_but_tensors_on_cpu_fails() -> None:
    document = torch_doc(placement={"parameters": ["cpu"], "batches": ["cpu"]})
    verdict = verdict_of(document)
    assert verdict.outcome == "fail" and verdict.exit_code == 1
    assert failed(verdict)["placement"].startswith("computed on cpu although npu:0 was requested")


def test_loss_that_does_not_fall_fails() -> None:
    rising = {"steps": 10, "loss": [1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9]}
    assert "loss" in failed(verdict_of(torch_doc(training=rising)))


def test_wrong_matmul_fails() -> None:
    document = torch_doc()
    document["runs"][0]["matmul_check"].update(mismatches=17, ok=False, max_abs_err=3.2)
    message = failed(verdict_of(document))["matmul"]
    assert message.startswith("matmul wrong: float32 128x256x96 vs float64: 17 of 12288")


def test_throughput_below_the_chip_floor_fails() -> None:
    document = torch_doc()
    document["runs"][0]["throughput"]["tflops"] = 51.2
    message = failed(verdict_of(document))["throughput"]
    assert "20% of the 256 TFLOPS peak" in message and "floor 50% (chips.yaml 910)" in message


def test_spec_fraction_overrides_the_chip_default() -> None:
    verdict = verdict_of(torch_doc(), min_tflops_fraction=0.9)
    assert "floor 90% (spec smoke.min_tflops_fraction)" in failed(verdict)["throughput"]


def test_chip_without_a_public_peak_is_not_judged_unless_one_is_given() -> None:
    skipped = next(c for c in verdict_of(torch_doc(), chip="910b").checks
                   if c.id == "throughput")
    assert skipped.status == "skip" and "no fp16 peak for 910b" in skipped.message
    given = verdict_of(torch_doc(), chip="910b", peak_tflops=500.0)
    assert "floor 50%" in failed(given)["throughput"]


def test_wrong_throughput_result_fails() -> None:
    document = torch_doc()
    document["runs"][0]["throughput"].update(sample_ok=False, sample_rel_err=0.8)
    assert failed(verdict_of(document))["throughput"].startswith("throughput matmul wrong")


def test_no_device_memory_allocated_fails() -> None:
    document = torch_doc()
    document["runs"][0]["memory"]["peak_allocated_bytes"] = 0
    assert "nothing was allocated on npu:0" in failed(verdict_of(document))["memory"]


def test_pid_missing_from_npu_smi_and_fallbacks_only_warn() -> None:
    document = torch_doc()
    document["runs"][0]["process_table"].update(seen=False, npus=[])
    document["fallbacks"] = {"cpu_ops": ["aten::isin.Tensor_Tensor_out"], "aicpu_ops": ["NonZero"]}
    verdict = verdict_of(document)
    assert verdict.outcome == "pass"
    warned = {c.id for c in verdict.checks if c.status == "warn"}
    assert warned == {"process-table", "fallbacks"}


def test_cpu_run_is_cpu_and_never_an_accelerator() -> None:
    document = torch_doc("cpu")
    document["runs"][0].update(memory={"peak_allocated_bytes": None, "source": "cpu"},
                               process_table=None)
    document["fallbacks"] = None
    verdict = verdict_of(document)
    assert (verdict.outcome, verdict.exit_code) == ("cpu", 0)
    assert "no accelerator was tested" in verdict.summary
    assert {c.id for c in verdict.checks} == {"placement", "loss", "matmul", "throughput"}
    assert next(c for c in verdict.checks if c.id == "throughput").status == "skip"


def test_missing_npu_stack_names_each_missing_piece() -> None:
    document = torch_doc()
    document.update(status="unavailable", runs=[], missing=["torch_npu", "cann", "device"],
                    reason="ModuleNotFoundError: No module named 'torch_npu'")
    verdict = verdict_of(document)
    assert (verdict.outcome, verdict.exit_code) == ("fail", 1)
    message = failed(verdict)["stack"]
    for piece in ("no torch_npu", "no CANN", "no NPU device", "/opt/venv/bin/python"):
        assert piece in message


def test_framework_that_cannot_import_is_an_error() -> None:
    document = torch_doc()
    document.update(status="unavailable", runs=[], missing=["torch"],
                    reason="ModuleNotFoundError: No module named 'torch'")
    verdict = verdict_of(document)
    assert (verdict.outcome, verdict.exit_code) == ("error", 2)


def test_timeout_fails_even_with_partial_runs() -> None:
    document = torch_doc(status="running")
    document.update(status="timeout", reason="time limit of 60 s reached during throughput")
    assert "timeout" in failed(verdict_of(document))["workload"]


def test_every_device_of_all_is_judged() -> None:
    document = torch_doc()
    document["requested"]["device"] = "all"
    second = run_on("npu:1")
    second["placement"]["batches"] = ["cpu"]
    document["runs"].append(second)
    bad = [c for c in verdict_of(document).checks if c.status == "fail"]
    assert [(c.id, c.device) for c in bad] == [("placement", "npu:1")]


def test_evidence_that_does_not_fit_the_schema_is_rejected() -> None:
    document = torch_doc()
    del document["runs"][0]["matmul_check"]["mismatches"]
    with pytest.raises(ValidationError):
        parse_evidence(document)
    with pytest.raises(ValidationError):
        parse_evidence({**torch_doc(), "framework": "tensorflow"})


def hccl_doc(device: str = "all", world: int = 8, **result: Any) -> dict[str, Any]:
    kind = "cpu" if device == "cpu" else "npu"
    results = [{"bytes": size, "iterations": 20, "ranks_reporting": world, "correct": True,
                "wrong_elements": 0, "time_s": 1e-3, "algbw_gbps": size / 1e-3 / 1e9,
                "busbw_gbps": size / 1e-3 / 1e9 * 2 * (world - 1) / world}
               for size in (2**20, 2**24, 2**27)]
    results[-1].update(result)
    return {"schema": "ascend-env/smoke/hccl/v1", "framework": "hccl", "status": "ok",
            "missing": [], "requested": {"device": device}, "environment": {},
            "backend": "gloo" if kind == "cpu" else "hccl", "world_size": world,
            "ranks": [{"rank": r, "device": "cpu" if kind == "cpu" else f"npu:{r}",
                       "pid": 100 + r, "status": "ok"} for r in range(world)],
            "results": results}


def test_hccl_busbw_against_the_spec_floor() -> None:
    assert verdict_of(hccl_doc(), min_busbw_gbps=100.0).outcome == "pass"
    slow = verdict_of(hccl_doc(), min_busbw_gbps=500.0)
    assert "floor 500 GB/s (spec smoke.min_busbw_gbps)" in failed(slow)["bandwidth"]


def test_hccl_without_a_floor_reports_but_does_not_judge_bandwidth() -> None:
    verdict = verdict_of(hccl_doc())
    assert verdict.outcome == "pass"
    check = next(c for c in verdict.checks if c.id == "bandwidth")
    assert check.status == "skip" and "busbw 234.88 GB/s" in check.message


def test_hccl_wrong_sum_fails() -> None:
    verdict = verdict_of(hccl_doc(correct=False, wrong_elements=3))
    assert "3 element(s) at 134217728 bytes" in failed(verdict)["allreduce"]


def test_hccl_rank_on_cpu_when_npus_were_asked_fails() -> None:
    document = hccl_doc()
    document["ranks"][3]["device"] = "cpu"
    assert "rank 3 computed on cpu" in failed(verdict_of(document))["placement"]


def test_hccl_gloo_on_cpu_is_cpu() -> None:
    verdict = verdict_of(hccl_doc("cpu", world=2), chip=None)
    assert verdict.outcome == "cpu"


def test_thresholds_sources() -> None:
    limits = thresholds_for("910")
    assert limits.peak_tflops == {"fp16": 256.0} and limits.tflops_fraction == 0.5
    assert limits.busbw_floor_gbps is None
    assert thresholds_for(None).tflops_fraction is None
    assert thresholds_for("910b", peak_tflops=300.0).peak_source == "given on the command line"


@pytest.mark.parametrize(("name", "chip"), [
    ("Ascend910B3", "910b"), ("Ascend910ProB", "910"), ("Ascend310P3", "310p"),
    ("Ascend910_9392", "910_93"), ("NVIDIA H200", None), (None, None),
])
def test_chip_from_device_name(name: str | None, chip: str | None) -> None:
    assert chip_from_name(name) == chip


def test_judge_keeps_the_raw_evidence() -> None:
    document = torch_doc()
    verdict = verdict_of(copy.deepcopy(document))
    assert verdict.evidence == document


@pytest.mark.parametrize("chip", sorted(load_chips().chips))
def test_chip_smoke_figures_cite_sources(chip: str) -> None:
    """A peak or floor needs a registered public source; its absence is said in the note."""
    data = load_chips().chips[chip]
    figures = data.smoke.peak_tflops or data.smoke.hccl_busbw_floor_gbps is not None
    unknown = [label for label in data.smoke.sources if label not in load_matrix().sources]
    assert not unknown
    assert set(data.smoke.sources) <= set(data.sources)
    if figures:
        assert data.smoke.sources
    else:
        assert "NOT CONFIRMED" in data.smoke.note
