"""`explain --host/--inventory`: for each cause of a matched signature, whether it holds on
the host(s), from the results of the checks it names (the doctor runs them:
ascend_env/doctor/confirm.py, its `--only` selection).

A cause holds when one of its checks fails or warns; it is ruled out when all of them pass;
otherwise (skipped, errored, not run) it is undecided. A cause that names no check cannot be
decided on a host (a remote rank, the network between hosts).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

from ascend_env.explain.signatures import Cause

Verdict = Literal["holds", "ruled out", "undecided", "not checkable"]


class CheckOutcome(Protocol):
    """What a cause's verdict reads of one check's result (the doctor's CheckResult)."""

    @property
    def id(self) -> str: ...

    @property
    def status(self) -> str: ...

    @property
    def message(self) -> str: ...


@dataclass
class HostChecks:
    host: str
    reachable: bool
    error: str | None = None
    results: dict[str, CheckOutcome] = field(default_factory=dict)


def wanted_checks(causes: list[Cause]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(c for cause in causes for c in cause.checks))


def verdict(cause: Cause, host: HostChecks) -> Verdict:
    if not cause.checks:
        return "not checkable"
    if not host.reachable:
        return "undecided"
    statuses = [host.results[c].status for c in cause.checks if c in host.results]
    if any(s in ("fail", "warn") for s in statuses):
        return "holds"
    if len(statuses) == len(cause.checks) and all(s == "pass" for s in statuses):
        return "ruled out"
    return "undecided"
