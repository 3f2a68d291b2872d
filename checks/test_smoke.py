"""Smoke (levels 2 and 3): the frameworks really compute on the NPUs, with the evidence attached.

Level 2 trains on one device with each framework the host has; level 3 on every device, plus
an HCCL all-reduce over all of them. The workloads run on the host through its testinfra
connection (ascend_env/smoke); a saved capture cannot run them, so these checks skip there.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any

import pytest

from ascend_env.core.errors import AscendEnvError
from ascend_env.doctor.findings import attach_evidence, fail, observe
from ascend_env.doctor.suite import Target
from ascend_env.facts.model import Facts
from ascend_env.spec.envspec import EnvSpec

if TYPE_CHECKING:
    from ascend_env.smoke.runner import Framework

pytestmark = [pytest.mark.category("smoke")]

DEFAULT_STEPS = 50
DEFAULT_TIMEOUT_S = 600.0


def _python(facts: Facts) -> str:
    python = facts.frameworks.python
    return python.executable if python and python.executable else "python3"


def _has(facts: Facts, framework: Framework) -> bool:
    if framework == "mindspore":
        return facts.frameworks.mindspore is not None
    return facts.frameworks.torch_npu is not None


def _smoke(host: Any, target: Target, facts: Facts, spec: EnvSpec | None, *,
           framework: Framework, device: str, parity: bool = False) -> None:
    """Run one workload on the host and turn its verdict into this check's result."""
    # The workload machinery (~35 ms of imports) loads when a smoke check runs, not when a
    # level-1 doctor collects this module.
    from ascend_env.smoke.runner import HostTarget, SmokeRequest, run_smoke  # noqa: PLC0415

    if not _has(facts, "torch" if framework == "hccl" else framework):
        pytest.skip(f"{'MindSpore' if framework == 'mindspore' else 'torch_npu'} is not "
                    "installed in the framework Python")
    request = SmokeRequest(
        framework=framework, device=device, python=_python(facts),
        steps=spec.smoke.steps if spec else DEFAULT_STEPS,
        timeout_s=float(spec.smoke.timeout_s) if spec else DEFAULT_TIMEOUT_S,
        chip=spec.hardware.chip if spec else facts.chip,
        min_tflops_fraction=spec.smoke.min_tflops_fraction if spec else None,
        min_busbw_gbps=spec.smoke.min_busbw_gbps if spec else None, parity=parity)
    try:
        verdict = run_smoke(request, HostTarget(target.name, host=host))
    except AscendEnvError as error:
        fail(message=f"the {framework} workload did not produce evidence: {error}",
             why="without evidence nothing shows that jobs can run on the NPUs",
             manual=shlex.join(["ascend-env", "smoke", "--framework", framework, "--device",
                                device, "--python", request.python]))
    attach_evidence(verdict.model_dump(mode="json", by_alias=True))
    failed = [check for check in verdict.checks if check.status == "fail"]
    if verdict.outcome != "pass":
        fail(message=verdict.summary,
             observed="; ".join(f"{c.id}: {c.message}" for c in failed) or verdict.outcome,
             expected=f"positive evidence of computation on {device}",
             why="a job that imports its framework can still train on the CPU, or compute "
                 "garbage on a faulty card",
             manual=shlex.join(["ascend-env", "smoke", "--framework", framework, "--device",
                                device, *(["--parity"] if parity else []), "--json"]))
    observe(verdict.summary, f"positive evidence of computation on {device}")


@pytest.mark.level(2)
def test_torch(host: Any, target: Target, facts: Facts, spec: EnvSpec | None) -> None:
    """smoke.torch: torch_npu trains on NPU 0 with positive evidence."""
    _smoke(host, target, facts, spec, framework="torch", device="npu:0")


@pytest.mark.level(2)
def test_mindspore(host: Any, target: Target, facts: Facts, spec: EnvSpec | None) -> None:
    """smoke.mindspore: MindSpore trains on NPU 0 with positive evidence."""
    _smoke(host, target, facts, spec, framework="mindspore", device="npu:0")


@pytest.mark.level(3)
def test_torch_every_device(host: Any, target: Target, facts: Facts,
                            spec: EnvSpec | None) -> None:
    """smoke.torch-all: torch_npu trains on every NPU, layers match float64, nothing on the CPU.

    `--parity`: a fixed model forward and backward per layer against float64 on the host, one
    worker per NPU, failing on the first layer out of tolerance or any CPU fallback."""
    _smoke(host, target, facts, spec, framework="torch", device="all", parity=True)


@pytest.mark.level(3)
def test_mindspore_every_device(host: Any, target: Target, facts: Facts,
                                spec: EnvSpec | None) -> None:
    """smoke.mindspore-all: MindSpore trains on every NPU of the host."""
    _smoke(host, target, facts, spec, framework="mindspore", device="all")


@pytest.mark.level(3)
def test_hccl(host: Any, target: Target, facts: Facts, spec: EnvSpec | None) -> None:
    """smoke.hccl: an all-reduce over every NPU is correct and fast enough."""
    _smoke(host, target, facts, spec, framework="hccl", device="all")
