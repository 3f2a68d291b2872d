"""Judge smoke evidence: pass only on positive evidence from the requested accelerator.

A run fails when it asked for an accelerator and the tensors sat elsewhere, when the loss did
not fall, when a checked matmul or all-reduce is wrong, or when throughput is under the
floor (spec `smoke.*`, else the chip's data). A `cpu` run can at best be "cpu": it proves
the framework trains, never that an accelerator works.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ascend_env.remote.harness import LOSS_MIN_DROP, loss_summary, parse_device
from ascend_env.smoke.checks import Check, CheckStatus
from ascend_env.smoke.evidence import (
    CollectiveEvidence,
    DeviceRun,
    Fallbacks,
    TrainingEvidence,
)
from ascend_env.smoke.parity import judge_parity
from ascend_env.spec.matrix import load_chips

Outcome = Literal["pass", "cpu", "fail", "error"]
DTYPE_KEYS = {"float16": "fp16", "bfloat16": "bf16"}
MISSING_TEXT = {
    "torch": "torch is not importable",
    "mindspore": "MindSpore is not importable",
    "torch_npu": "no torch_npu (not importable)",
    "cann": "no CANN (no toolkit found, or its libraries did not load)",
    "driver": "no driver (libascend_hal.so did not load)",
    "device": "no NPU device (no /dev/davinciN node, or the framework sees none)",
}


class Thresholds(BaseModel):
    """What throughput and bandwidth are compared against, and where each figure came from."""

    model_config = ConfigDict(frozen=True)

    chip: str | None = None
    peak_tflops: dict[str, float] = Field(default_factory=dict)
    peak_source: str = "none"
    tflops_fraction: float | None = None
    fraction_source: str = "none"
    busbw_floor_gbps: float | None = None
    busbw_source: str = "none"


class Verdict(BaseModel):
    """The judgement of one smoke run, with the evidence it rests on."""

    schema_: Literal["ascend-env/smoke/verdict/v1"] = Field(
        "ascend-env/smoke/verdict/v1", alias="schema")
    framework: str
    requested_device: str
    outcome: Outcome
    summary: str
    checks: list[Check]
    thresholds: Thresholds
    evidence: dict[str, Any]

    model_config = ConfigDict(populate_by_name=True)

    @property
    def exit_code(self) -> int:
        """DESIGN.md exit codes: 0 pass (or cpu), 1 not right, 2 could not run."""
        return {"pass": 0, "cpu": 0, "fail": 1, "error": 2}[self.outcome]


def thresholds_for(chip: str | None, *, min_tflops_fraction: float | None = None,
                   min_busbw_gbps: float | None = None,
                   peak_tflops: float | None = None, peak_dtype: str = "fp16") -> Thresholds:
    """The floors for a chip family: explicit values first, then chips.yaml."""
    data = load_chips().get(chip) if chip else None
    peaks: dict[str, float] = {str(k): v for k, v in data.smoke.peak_tflops.items()} if data else {}
    peak_source = f"chips.yaml {chip}" if peaks else "none"
    if peak_tflops is not None:
        peaks = {peak_dtype: peak_tflops}
        peak_source = "given on the command line"
    fraction, fraction_source = min_tflops_fraction, "spec smoke.min_tflops_fraction"
    if fraction is None:
        fraction = data.smoke.tflops_fraction if data else None
        fraction_source = f"chips.yaml {chip}" if data else "none"
    floor, floor_source = min_busbw_gbps, "spec smoke.min_busbw_gbps"
    if floor is None:
        floor = data.smoke.hccl_busbw_floor_gbps if data else None
        floor_source = f"chips.yaml {chip}" if floor is not None else "none"
    return Thresholds(chip=chip, peak_tflops=peaks, peak_source=peak_source,
                      tflops_fraction=fraction, fraction_source=fraction_source,
                      busbw_floor_gbps=floor, busbw_source=floor_source)


def chip_from_name(name: str | None) -> str | None:
    """The chip family of a device name such as torch_npu's 'Ascend910B3' (npu-smi '910B3')."""
    if not name:
        return None
    bare = name.strip().removeprefix("Ascend")
    for chip in load_chips().chips.values():
        if bare in chip.npu_smi_names or name.strip() in chip.soc_versions:
            return chip.name
    return None


def judge(evidence: TrainingEvidence | CollectiveEvidence, thresholds: Thresholds,
          raw: dict[str, Any]) -> Verdict:
    """The verdict on one workload's evidence."""
    requested = str(evidence.requested.get("device") or "")
    checks = availability(evidence)
    if not checks:
        if isinstance(evidence, TrainingEvidence):
            checks = judge_training(evidence, thresholds)
        else:
            checks = judge_collective(evidence, thresholds)
    kind = _kind(requested)
    if any(c.id == "framework" for c in checks):
        outcome: Outcome = "error"
    elif any(c.status == "fail" for c in checks):
        outcome = "fail"
    else:
        outcome = "cpu" if kind == "cpu" else "pass"
    return Verdict(framework=evidence.framework, requested_device=requested, outcome=outcome,
                   summary=summarise(evidence.framework, requested, outcome, checks),
                   checks=checks, thresholds=thresholds, evidence=raw)


def _kind(device: str) -> str:
    try:
        kind, _ = parse_device(device or "all")
    except ValueError:
        return "unknown"
    return "npu" if kind == "all" else kind


def availability(evidence: TrainingEvidence | CollectiveEvidence) -> list[Check]:
    """Checks that end the judgement early: nothing ran, or the workload crashed."""
    executable = evidence.environment.get("executable", "the target's Python")
    framework = {"torch": "torch", "hccl": "torch", "mindspore": "mindspore"}[
        evidence.framework]
    if evidence.status == "unavailable" and framework in evidence.missing:
        return [Check(id="framework", status="fail",
                      message=f"{MISSING_TEXT[framework]} by {executable}: {evidence.reason}")]
    if evidence.status == "unavailable":
        kind = _kind(str(evidence.requested.get("device") or ""))
        parts = [MISSING_TEXT[name] for name in evidence.missing] or [evidence.reason or "?"]
        return [Check(id="stack", status="fail",
                      message=f"no {kind.upper()} evidence from {executable}: "
                              f"{'; '.join(parts)} [{evidence.reason}]")]
    if evidence.status == "error" and not _has_results(evidence):
        return [Check(id="workload", status="fail",
                      message=f"the workload stopped: {evidence.reason}")]
    return []


def _has_results(evidence: TrainingEvidence | CollectiveEvidence) -> bool:
    if isinstance(evidence, TrainingEvidence):
        return bool(evidence.runs)
    return bool(evidence.results)


def judge_training(evidence: TrainingEvidence, thresholds: Thresholds) -> list[Check]:
    """Placement, loss, matmul, throughput, memory, process table for every device run."""
    checks: list[Check] = []
    if evidence.status in ("timeout", "error"):
        checks.append(Check(id="workload", status="fail",
                            message=f"{evidence.status}: {evidence.reason}"))
    if not evidence.runs:
        checks.append(Check(id="runs", status="fail", message="no device run was recorded"))
    for run in evidence.runs:
        checks += judge_run(run, thresholds)
    if _kind(str(evidence.requested.get("device"))) == "npu":
        checks.append(judge_fallbacks(evidence.fallbacks))
    if evidence.requested.get("parity") or evidence.parity is not None:
        checks += judge_parity(evidence.parity)
    return checks


def judge_run(run: DeviceRun, thresholds: Thresholds) -> list[Check]:
    """The checks of one device's run."""
    device = run.device
    accelerator = _kind(device) in ("npu", "cuda")
    checks = [placement(run)]
    if run.training is None:
        checks.append(Check(id="loss", status="fail", device=device,
                            message=f"no training recorded ({run.reason or run.status})"))
    else:
        summary = loss_summary(list(run.training.loss))
        fell = bool(summary["fell"]) and run.training.steps >= 2
        checks.append(Check(
            id="loss", status="pass" if fell else "fail", device=device,
            message=(f"loss {_num(summary['first'])} -> {_num(summary['last'])} over "
                     f"{run.training.steps} steps ({_pct(summary['drop'])} lower; at least "
                     f"{LOSS_MIN_DROP:.0%} needed"
                     + (f", {summary['non_finite']} non-finite" if summary["non_finite"]
                        else "") + ")")))
    checks.append(matmul(run))
    checks.append(throughput(run, thresholds, judged=accelerator))
    if accelerator:
        checks.append(memory(run))
        checks.append(process_table(run))
    return checks


def placement(run: DeviceRun) -> Check:
    """Were parameters, batches and results on the requested device?"""
    where = run.placement
    if where is None:
        return Check(id="placement", status="fail", device=run.device,
                     message="no placement recorded")
    seen = {"parameters": sorted(set(where.parameters)), "batches": sorted(set(where.batches))}
    if run.matmul_check is not None:
        seen["matmul"] = [run.matmul_check.device]
    if run.throughput is not None:
        seen["throughput"] = [run.throughput.device]
    observed = sorted({d for devices in seen.values() for d in devices})
    detail = ", ".join(f"{name} on {'/'.join(devices) or '?'}" for name, devices in seen.items())
    if observed == [run.device]:
        return Check(id="placement", status="pass", device=run.device, message=detail)
    others = [d for d in observed if d != run.device]
    return Check(id="placement", status="fail", device=run.device,
                 message=f"computed on {', '.join(others)} although {run.device} was "
                         f"requested ({detail})")


def matmul(run: DeviceRun) -> Check:
    """The element-wise checked float32 matmul."""
    check = run.matmul_check
    if check is None:
        return Check(id="matmul", status="fail", device=run.device,
                     message="no checked matmul recorded")
    text = (f"{check.dtype} {'x'.join(map(str, check.shape))} vs float64: {check.mismatches} of "
            f"{check.elements} elements outside atol {check.atol:.3g} + rtol {check.rtol:.3g}, "
            f"max abs error {_num(check.max_abs_err)}")
    ok = check.ok and check.mismatches == 0
    return Check(id="matmul", status="pass" if ok else "fail", device=run.device,
                 message=text if ok else f"matmul wrong: {text}")


def throughput(run: DeviceRun, thresholds: Thresholds, *, judged: bool) -> Check:
    """Large-matmul TFLOPS against the floor fraction of the chip's peak."""
    measured = run.throughput
    if measured is None:
        return Check(id="throughput", status="fail" if judged else "skip", device=run.device,
                     message="no throughput measured")
    text = f"{_num(measured.tflops)} TFLOPS {measured.dtype} ({measured.n}x{measured.n} matmul)"
    if not measured.sample_ok:
        return Check(id="throughput", status="fail", device=run.device,
                     message=f"throughput matmul wrong: sampled rows off by "
                             f"{_num(measured.sample_rel_err)} (tolerance "
                             f"{measured.sample_tolerance:g}); {text}")
    if not judged:
        return Check(id="throughput", status="skip", device=run.device,
                     message=f"{text}; not judged on {_kind(run.device)}")
    key = DTYPE_KEYS.get(measured.dtype, measured.dtype)
    peak = thresholds.peak_tflops.get(key)
    fraction = thresholds.tflops_fraction
    if peak is None or fraction is None:
        chip = thresholds.chip or "unknown chip"
        return Check(id="throughput", status="skip", device=run.device,
                     message=f"{text}; not judged: no {key} peak for {chip} in chips.yaml "
                             f"(give --peak-tflops, or --chip)")
    share = (measured.tflops or 0.0) / peak
    verdict: CheckStatus = "pass" if share >= fraction else "fail"
    return Check(id="throughput", status=verdict, device=run.device,
                 message=f"{text} = {share:.0%} of the {peak:g} TFLOPS peak "
                         f"({thresholds.peak_source}); floor {fraction:.0%} "
                         f"({thresholds.fraction_source})")


def memory(run: DeviceRun) -> Check:
    """Something must have been allocated on the device the work claims to have run on."""
    if run.memory is None or run.memory.peak_allocated_bytes is None:
        return Check(id="memory", status="warn", device=run.device,
                     message="the framework reported no device memory figure")
    used, source = run.memory.peak_allocated_bytes, run.memory.source
    if used == 0:
        return Check(id="memory", status="fail", device=run.device,
                     message=f"peak device memory 0 bytes ({source}): nothing was allocated "
                             f"on {run.device}")
    return Check(id="memory", status="pass", device=run.device,
                 message=f"peak {used / 2**20:.1f} MiB allocated ({source})")


def process_table(run: DeviceRun) -> Check:
    """The workload's pid in npu-smi's (nvidia-smi's) process table: evidence, not a gate."""
    table = run.process_table
    if table is None:
        return Check(id="process-table", status="warn", device=run.device,
                     message="the process table was not read")
    if table.seen:
        npus = f" on NPU {', '.join(map(str, table.npus))}" if table.npus else ""
        return Check(id="process-table", status="pass", device=run.device,
                     message=f"pid {table.pid} listed by {table.tool}{npus}")
    if table.seen is None:
        return Check(id="process-table", status="warn", device=run.device,
                     message=f"{table.tool} could not run: {table.error or f'exit {table.rc}'}")
    return Check(id="process-table", status="warn", device=run.device,
                 message=f"pid {table.pid} not among the {table.rows} processes {table.tool} "
                         "lists (in a container it shows host pids)")


def judge_fallbacks(fallbacks: Fallbacks | None) -> Check:
    """Operators that left the NPU: worth a warning, not a failure (the model is tiny)."""
    if fallbacks is None or (fallbacks.cpu_ops is None and fallbacks.aicpu_ops is None):
        why = fallbacks.cpu_ops_source if fallbacks else "not reported"
        return Check(id="fallbacks", status="skip", message=f"fallbacks not collected: {why}")
    found = []
    if fallbacks.cpu_ops:
        found.append(f"on the CPU: {', '.join(fallbacks.cpu_ops)}")
    if fallbacks.aicpu_ops:
        found.append(f"on the AI CPU: {', '.join(fallbacks.aicpu_ops)}")
    if found:
        return Check(id="fallbacks", status="warn", message="operators " + "; ".join(found))
    aicpu = ("AI CPU not profiled" + (f" ({fallbacks.aicpu_error})" if fallbacks.aicpu_error
                                      else "")) if fallbacks.aicpu_ops is None else "none on AI CPU"
    return Check(id="fallbacks", status="pass", message=f"no CPU fallback reported; {aicpu}")


def judge_collective(evidence: CollectiveEvidence, thresholds: Thresholds) -> list[Check]:
    """Ranks on the requested devices, every result correct, bus bandwidth over the floor."""
    kind = _kind(str(evidence.requested.get("device")))
    checks: list[Check] = []
    if evidence.status in ("timeout", "error"):
        checks.append(Check(id="workload", status="fail",
                            message=f"{evidence.status}: {evidence.reason}"))
    for rank in evidence.ranks:
        where = _kind(rank.device or "?")
        if rank.status != "ok":
            checks.append(Check(id="rank", status="fail", device=rank.device,
                                message=f"rank {rank.rank}: {rank.reason or rank.status}"))
        elif where != kind:
            checks.append(Check(id="placement", status="fail", device=rank.device,
                                message=f"rank {rank.rank} computed on {rank.device} although "
                                        f"{kind} was requested"))
    if not evidence.ranks or not any(c.status == "fail" for c in checks):
        devices = sorted({r.device or "?" for r in evidence.ranks})
        checks.append(Check(id="placement", status="pass" if evidence.ranks else "fail",
                            message=f"{len(evidence.ranks)} rank(s) on {', '.join(devices)} "
                                    f"({evidence.backend})"))
    if not evidence.results:
        checks.append(Check(id="allreduce", status="fail", message="no all-reduce completed"))
        return checks
    wrong = [r for r in evidence.results if not r.correct]
    checks.append(Check(
        id="allreduce", status="fail" if wrong else "pass",
        message=("all-reduce wrong: " + ", ".join(f"{r.wrong_elements} element(s) at {r.bytes} "
                                                  f"bytes ({r.ranks_reporting} ranks reporting)"
                                                  for r in wrong)) if wrong else
        f"sum over {evidence.world_size} ranks exact at {len(evidence.results)} size(s)"))
    checks.append(bandwidth(evidence, thresholds, kind))
    return checks


def bandwidth(evidence: CollectiveEvidence, thresholds: Thresholds, kind: str) -> Check:
    """Bus bandwidth at the largest size against the floor."""
    largest = max(evidence.results, key=lambda r: r.bytes)
    text = (f"busbw {largest.busbw_gbps:.2f} GB/s, algbw {largest.algbw_gbps:.2f} GB/s at "
            f"{largest.bytes / 2**20:g} MiB over {evidence.world_size} ranks")
    if (evidence.world_size or 0) < 2:
        return Check(id="bandwidth", status="skip", message=f"{text}; one rank moves nothing")
    if kind == "cpu":
        return Check(id="bandwidth", status="skip", message=f"{text}; not judged on cpu")
    floor = thresholds.busbw_floor_gbps
    if floor is None:
        return Check(id="bandwidth", status="skip",
                     message=f"{text}; not judged: no floor for "
                             f"{thresholds.chip or 'this chip'} (spec smoke.min_busbw_gbps)")
    ok = largest.busbw_gbps >= floor
    return Check(id="bandwidth", status="pass" if ok else "fail",
                 message=f"{text}; floor {floor:g} GB/s ({thresholds.busbw_source})")


def summarise(framework: str, device: str, outcome: Outcome, checks: list[Check]) -> str:
    """One line: the outcome and why."""
    failed = [c.message for c in checks if c.status == "fail"]
    warned = sum(c.status == "warn" for c in checks)
    if outcome in ("fail", "error"):
        return f"{framework} on {device}: " + "; ".join(failed)
    tail = f", {warned} warning(s)" if warned else ""
    if outcome == "cpu":
        return (f"{framework} computed on the CPU as asked ({len(checks)} checks{tail}); "
                "no accelerator was tested")
    return f"{framework} computed on {device}: {len(checks)} checks passed or skipped{tail}"


def _num(value: float | None) -> str:
    return "?" if value is None else f"{value:.4g}"


def _pct(value: float | None) -> str:
    return "?" if value is None else f"{value:.0%}"
