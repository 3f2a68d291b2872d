"""Findings: figures past thresholds the vendor's analysis tool publishes, each with its source,
what to try, and the doctor check that looks at the cause where one does."""

from __future__ import annotations

from collections.abc import Mapping

from ascend_env.perf.model import Finding, Summary

_ADVISOR = "https://gitcode.com/Ascend/msprof-analyze/blob/master/msprof_analyze/advisor/"
# The idle share: the advisor's overall summary flags free time above 10% of the step.
FREE_SHARE = 0.10
FREE_SOURCE = _ADVISOR + "analyzer/overall/overall_summary_analyzer.py (threshold 10%)"
# Rank spread: the slow-rank analysis flags (max - min) / mean above 5%.
SPREAD = 0.05
SPREAD_SOURCE = _ADVISOR + "analyzer/cluster/slow_rank_analyzer.py (RATIO_THRESHOLD = 0.05)"
# AI CPU: the advisor's AI CPU check looks at tasks of 20 us or more.
AICPU_US = 20.0
AICPU_SOURCE = _ADVISOR + "analyzer/computation/aicpu/aicpu_checker.py (_MIN_TASK_DURATION = 20)"
# Settings the advisor's environment rules call slow for training.
ENV_SOURCE = _ADVISOR + "rules/en/environment_variable_info.yaml"
SLOW_SETTINGS: dict[str, tuple[tuple[str, ...], str]] = {
    "ASCEND_LAUNCH_BLOCKING": (("1",), "unset ASCEND_LAUNCH_BLOCKING (1 makes every operator "
                                      "synchronous: a debugging switch)"),
    "ASCEND_GLOBAL_LOG_LEVEL": (("0", "1"), "export ASCEND_GLOBAL_LOG_LEVEL=3 (debug and info "
                                           "logging slow training down)"),
}
FALLBACK_SOURCE = ("torch_npu's CAUTION warning (function npu_cpu_fallback): the operator "
                   "\"is not currently supported on the NPU backend and will fall back to run "
                   "on the CPU\"")


def _pct(value: float) -> str:
    return f"{value * 100:.1f}%"


def judge(summary: Summary, environment: Mapping[str, str] | None = None) -> list[Finding]:
    """The findings for SUMMARY (and the run's ENVIRONMENT, where the run was ours)."""
    found: list[Finding] = []
    idle = [(s.free / s.total, s.rank) for s in summary.steps if s.total > 0]
    over = sorted((share, rank) for share, rank in idle if share > FREE_SHARE)
    if over:
        # One finding for every rank past the line, not one per rank: the cause is usually
        # shared (the host side of the job), and a 64-rank job must stay readable.
        worst, rank = over[-1]
        span = _pct(worst) if len(over) == 1 else f"{_pct(over[0][0])} to {_pct(worst)}"
        found.append(Finding(
            id="free-time", severity="warn",
            message=f"the device is idle {span} of the step on {len(over)} of {len(idle)} "
                    f"rank(s) (most: rank {rank})",
            observed=round(worst, 4), threshold=FREE_SHARE, unit="ratio", source=FREE_SOURCE,
            advice="find the gaps in the timeline: the host launching too slowly (bind "
                   "each rank's threads to its NUMA node's cores, TASK_QUEUE_ENABLE), "
                   "data loading (more workers, pin_memory), .item()/sync calls in the "
                   "step",
            doctor_checks=["threads"]))
    spread = summary.spread
    if spread is not None and max([spread.spread, *spread.gaps.values()]) > SPREAD:
        # As the slow-rank analysis does: a part (computing, communication, free) that differs
        # between ranks by more than 5% of the mean step is flagged even when the totals agree.
        parts = ", ".join(f"{k} {_pct(v)}" for k, v in spread.gaps.items() if v > SPREAD)
        found.append(Finding(
            id="rank-spread", severity="warn",
            message=f"ranks differ: step time spread {_pct(spread.spread)} of the mean step"
                    + (f"; by part {parts}" if parts else "")
                    + f" (rank {spread.slowest_rank} is the slowest)",
            observed=round(max([spread.spread, *spread.gaps.values()]), 4), threshold=SPREAD,
            unit="ratio", source=SPREAD_SOURCE,
            advice="compare the slowest rank's computing, communication and free time with "
                   "the others: uneven data or work, a slow link, a throttled or unhealthy NPU",
            doctor_checks=["devices.health", "network.links"]))
    slow_aicpu = [k for k in summary.ai_cpu if k.max_us >= AICPU_US]
    if slow_aicpu:
        names = ", ".join(sorted({k.type or k.name for k in slow_aicpu})[:6])
        found.append(Finding(
            id="aicpu-ops", severity="warn",
            message=f"{len(slow_aicpu)} AI CPU operator kind(s) with tasks of {AICPU_US:g} us "
                    f"or more: {names}",
            observed=round(max(k.max_us for k in slow_aicpu), 3), threshold=AICPU_US,
            unit="us", source=AICPU_SOURCE,
            advice="replace these operators or their dtypes (float64 and int64 inputs often "
                   "land on the AI CPU); the AI CPU's thread settings matter while they stay",
            doctor_checks=["threads"]))
    if summary.cpu_fallbacks:
        found.append(Finding(
            id="cpu-fallback", severity="warn",
            message=f"{len(summary.cpu_fallbacks)} operator(s) fell back to the host CPU: "
                    + ", ".join(sorted(summary.cpu_fallbacks)[:6]),
            observed=len(summary.cpu_fallbacks), threshold=0, source=FALLBACK_SOURCE,
            advice="each fallback copies tensors to the host and back every step: use an "
                   "operator torch_npu implements, or a newer torch_npu",
            doctor_checks=["frameworks.torch-npu-cann"]))
    for name, (slow, advice) in SLOW_SETTINGS.items():
        value = (environment or {}).get(name)
        if value is not None and value.strip() in slow:
            found.append(Finding(
                id=f"env-{name.lower()}", severity="warn",
                message=f"{name}={value} in the job's environment slows training",
                observed=value, threshold=" or ".join(slow), source=ENV_SOURCE, advice=advice,
                doctor_checks=[]))
    if summary.host_only:
        found.append(Finding(
            id="host-only", severity="info",
            message="host-only profile: no NPU ran, so there is no device time, core split, "
                    "AI CPU or HCCL figure; the operators are host (CPU) operators",
            observed="no device", threshold="an NPU run", source="the trace itself",
            advice="run the same command on an Ascend host with torch_npu for the device picture"))
    return found
