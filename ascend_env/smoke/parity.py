"""Judge `--parity` evidence: every layer within tolerance on every rank, nothing on the CPU.

The workload compares (ascend_env/remote/torch_parity.py); this reads its rows again rather
than trusting the workload's own status, names the first divergence with its figures and
counts what followed it, and fails on any operator a rank reported as fallen back to the CPU.
"""

from __future__ import annotations

from ascend_env.smoke.checks import Check
from ascend_env.smoke.evidence import Parity, ParityDivergence, ParityRow

SHOWN_CONSEQUENCES = 6


def judge_parity(parity: Parity | None) -> list[Check]:
    """The `parity` and `parity-fallbacks` checks."""
    if parity is None:
        return [Check(id="parity", status="fail",
                      message="--parity was asked for and the workload recorded no parity "
                              "evidence (a workload without --parity?)")]
    return [_layers(parity), _fallbacks(parity)]


def _layers(parity: Parity) -> Check:
    problems = [f"rank {r.rank} ({r.device}): {r.reason or r.status}"
                for r in parity.ranks if r.status != "ok"]
    # Read from the loss tensor: a framework that kept the model on the host proves nothing.
    problems += [f"rank {r.rank}: {run.dtype} computed on {run.device} although {r.device} "
                 f"was requested" for r in parity.ranks for run in r.runs
                 if r.device and run.device != r.device]
    first = first_divergence(parity)
    if first is not None:
        problems.insert(0, describe(first))
    if not parity.ranks:
        problems.append(parity.reason or "no parity worker ran")
    rows = [row for rank in parity.ranks for run in rank.runs for row in run.rows]
    if problems:
        return Check(id="parity", status="fail", message="; ".join(problems))
    limits = ", ".join(f"{dtype} {limit:g}" for dtype, limit in
                       sorted((parity.thresholds.get("limit") or {}).items())
                       if dtype in parity.dtypes)
    what = "layer outputs and gradients" if any(r.phase == "backward" for r in rows) else \
        "layer outputs (forward only)"
    return Check(id="parity", status="pass",
                 message=f"{len(rows)} {what} on {len(parity.ranks)} rank(s) within "
                         f"tolerance of float64 ({limits} of max |reference|)")


def first_divergence(parity: Parity) -> ParityDivergence | None:
    """The first row out of tolerance, re-read from the rows (rank, then dtype order)."""
    for rank in parity.ranks:
        for run in rank.runs:
            failing = [row for row in run.rows if not _within(row)]
            if failing:
                head = failing[0]
                later: list[str] = []
                for row in failing[1:]:
                    label = f"{row.name} {row.tensor}"
                    if label not in later:
                        later.append(label)
                return ParityDivergence(
                    name=head.name, op=head.op, dtype=head.dtype, phase=head.phase,
                    tensor=head.tensor, max_abs_err=head.max_abs_err,
                    max_rel_err=head.max_rel_err, scaled_err=head.scaled_err,
                    threshold=head.threshold, consequences=later, rank=rank.rank,
                    device=run.device)
    return None


def _within(row: ParityRow) -> bool:
    return row.scaled_err is not None and row.scaled_err <= row.threshold


def describe(first: ParityDivergence) -> str:
    """'first divergence ln1 (layer_norm, float32) forward output on cpu rank 0: ...'."""
    error = "not finite" if first.scaled_err is None else f"{first.scaled_err:.3g}"
    figures = ", ".join(f"{name} {value:.3g}" for name, value in
                        (("max abs", first.max_abs_err), ("max rel", first.max_rel_err))
                        if value is not None)
    text = (f"first divergence {first.name} ({first.op}, {first.dtype}) {first.phase} "
            f"{first.tensor} on {first.device} rank {first.rank}: scaled error {error} > "
            f"{first.threshold:.3g}" + (f" ({figures})" if figures else ""))
    if first.consequences:
        shown = ", ".join(first.consequences[:SHOWN_CONSEQUENCES])
        more = len(first.consequences) - SHOWN_CONSEQUENCES
        text += (f"; then {len(first.consequences)} later comparison(s) out of tolerance as "
                 f"consequences: {shown}" + (f" (+{more} more)" if more > 0 else ""))
    return text


def _fallbacks(parity: Parity) -> Check:
    fallbacks = parity.fallbacks
    if fallbacks is not None and not fallbacks.collected:
        return Check(id="parity-fallbacks", status="skip",
                     message=f"CPU fallbacks {fallbacks.source or 'not collected'}")
    per_rank = {rank: ops for rank, ops in (fallbacks.per_rank if fallbacks else {}).items()
                if ops}
    for rank in parity.ranks:  # a rank's own list, should the merged one lack it
        if rank.cpu_fallback_ops:
            per_rank.setdefault(str(rank.rank), list(rank.cpu_fallback_ops))
    if per_rank:
        where = "; ".join(f"rank {rank}: {', '.join(ops)}" for rank, ops in per_rank.items())
        return Check(id="parity-fallbacks", status="fail",
                     message=f"operators of the parity model ran on the CPU instead of the "
                             f"device ({where})")
    return Check(id="parity-fallbacks", status="pass",
                 message=f"no operator fell back to the CPU on {len(parity.ranks)} rank(s)")
