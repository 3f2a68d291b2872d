"""The workloads for real: torch and MindSpore train on the CPU, gloo all-reduces across
processes, and a framework that silently computes on the CPU while an NPU was asked for is
caught."""

from __future__ import annotations

import time

import pytest

from ascend_env.smoke.runner import Framework, HostTarget, SmokeRequest, run_smoke
from ascend_env.smoke.verdict import Verdict
from tests.smoke.conftest import needs_mindspore, needs_torch

pytestmark = pytest.mark.slow
QUICK = ("--throughput-seconds", "0.3")


def smoke(framework: Framework, device: str, python: str, *, steps: int = 20,
          timeout: float = 120, extra: tuple[str, ...] = ()) -> Verdict:
    request = SmokeRequest(framework=framework, device=device, steps=steps, timeout_s=timeout,
                           python=python, extra=extra)
    return run_smoke(request)


def failing(verdict: Verdict) -> dict[str, str]:
    return {c.id: c.message for c in verdict.checks if c.status == "fail"}


@needs_torch
def test_torch_trains_on_the_cpu(python: str) -> None:
    verdict = smoke("torch", "cpu", python, extra=QUICK)
    assert (verdict.outcome, verdict.exit_code) == ("cpu", 0), verdict.checks
    evidence = verdict.evidence
    assert evidence["schema"] == "ascend-env/smoke/torch/v1" and evidence["status"] == "ok"
    run = evidence["runs"][0]
    assert run["placement"]["parameters"] == run["placement"]["batches"] == ["cpu"]
    assert run["training"]["steps"] == 20 and run["training"]["summary"]["fell"]
    assert run["training"]["loss"][-1] < run["training"]["loss"][0]
    assert run["matmul_check"]["ok"] and run["throughput"]["tflops"] > 0
    assert run["memory"]["peak_allocated_bytes"] is None  # the CPU has no device allocator
    assert evidence["environment"]["autoload_disabled"] is True


@needs_torch
def test_npu_requested_but_computed_on_cpu_is_caught(python: str,
                                                     fake_npu: pytest.MonkeyPatch) -> None:
    """torch_npu imports and claims a device, `.to("npu:0")` is silently a no-op."""
    fake_npu.setenv("ASCEND_ENV_FAKE_NPU", "silent-cpu")
    verdict = smoke("torch", "npu:0", python, extra=QUICK)
    assert (verdict.outcome, verdict.exit_code) == ("fail", 1)
    reasons = failing(verdict)
    assert reasons["placement"].startswith("computed on cpu although npu:0 was requested")
    assert "nothing was allocated on npu:0" in reasons["memory"]
    # The loss fell all the same: training "works", which is why it proves nothing.
    assert next(c for c in verdict.checks if c.id == "loss").status == "pass"
    assert verdict.evidence["status"] == "failed"
    assert verdict.evidence["environment"]["torch_npu"] == "0.0.0+fake.silent-cpu"


@needs_torch
@pytest.mark.parametrize(("mode", "missing"), [("no-cann", "no CANN"),
                                                ("no-device", "no NPU device")])
def test_broken_npu_stack_is_named(python: str, fake_npu: pytest.MonkeyPatch, mode: str,
                                   missing: str) -> None:
    fake_npu.setenv("ASCEND_ENV_FAKE_NPU", mode)
    verdict = smoke("torch", "npu:0", python, steps=5)
    assert (verdict.outcome, verdict.exit_code) == ("fail", 1)
    assert missing in failing(verdict)["stack"]
    expected = "cann" if mode == "no-cann" else "device"
    assert expected in verdict.evidence["missing"]


@needs_torch
def test_a_device_that_fails_is_reported_with_its_error(python: str,
                                                        fake_npu: pytest.MonkeyPatch) -> None:
    fake_npu.setenv("ASCEND_ENV_FAKE_NPU", "broken-device")
    verdict = smoke("torch", "all", python, steps=5)
    assert (verdict.outcome, verdict.exit_code) == ("fail", 1)
    run = verdict.evidence["runs"][0]
    assert run["device"] == "npu:0" and run["status"] == "error"
    assert "error code is 507033" in run["reason"]
    assert "no training recorded" in failing(verdict)["loss"]


@needs_torch
def test_the_time_limit_ends_the_run_with_evidence(python: str) -> None:
    started = time.monotonic()
    verdict = smoke("torch", "cpu", python, steps=10**8, timeout=6)
    assert time.monotonic() - started < 30
    assert verdict.evidence["status"] == "timeout"
    assert "reached during train on cpu" in failing(verdict)["workload"]
    assert len(verdict.evidence["runs"][0]["training"]["loss"]) > 0  # progress so far


@needs_mindspore
def test_mindspore_trains_in_graph_mode_on_the_cpu(python: str) -> None:
    verdict = smoke("mindspore", "cpu", python, extra=QUICK)
    assert (verdict.outcome, verdict.exit_code) == ("cpu", 0), verdict.checks
    run = verdict.evidence["runs"][0]
    assert run["training"]["mode"] == "GRAPH_MODE" and run["training"]["summary"]["fell"]
    assert run["placement"]["source"] == "Tensor.device"
    assert run["placement"]["parameters"] == ["cpu"] and run["matmul_check"]["ok"]


@needs_torch
@pytest.mark.parametrize("nprocs", [2, 3])
def test_gloo_all_reduce_across_processes(python: str, nprocs: int) -> None:
    verdict = smoke("hccl", "cpu", python, steps=5, extra=("--nprocs", str(nprocs)))
    assert (verdict.outcome, verdict.exit_code) == ("cpu", 0), verdict.checks
    evidence = verdict.evidence
    assert evidence["backend"] == "gloo" and evidence["world_size"] == nprocs
    assert [r["status"] for r in evidence["ranks"]] == ["ok"] * nprocs
    assert len({r["pid"] for r in evidence["ranks"]}) == nprocs
    for result in evidence["results"]:
        assert result["correct"] and result["wrong_elements"] == 0
        assert result["ranks_reporting"] == nprocs
        assert result["algbw_gbps"] > 0
        assert result["busbw_gbps"] == pytest.approx(
            result["algbw_gbps"] * 2 * (nprocs - 1) / nprocs)


@needs_torch
def test_testinfra_transport_runs_the_same_script(python: str) -> None:
    """The doctor's path: the script is copied through a testinfra host and run there."""
    request = SmokeRequest(framework="torch", device="cpu", steps=10, timeout_s=120,
                           python=python, extra=QUICK)
    target = HostTarget("local://")
    verdict = run_smoke(request, target)
    assert verdict.outcome == "cpu"
    assert verdict.evidence["runs"][0]["training"]["summary"]["fell"]
