"""`explain --host/--inventory/--from`: for each cause of a matched signature, whether it holds
on the host(s), from the results of the checks it names (the doctor runs them); and for the
packages a cause involves, their installed versions and whether the compatibility matrix pairs
them (the doctor's pairing checks decide, so the matrix is read in one place).

A cause holds when one of its checks fails or warns; it is ruled out when all of them pass;
otherwise (skipped, errored, not run) it is undecided. A cause that names no check cannot be
decided on a host (a remote rank, the network between hosts).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal, Protocol

from ascend_env.explain.hits import Hit
from ascend_env.explain.signatures import Cause
from ascend_env.explain.vocabulary import load_vocabulary
from ascend_env.facts.frameworks import normalize_dist
from ascend_env.facts.model import Facts

Verdict = Literal["holds", "ruled out", "undecided", "not checkable"]
PairVerdict = Literal["paired", "not paired", "in doubt", "undecided"]

# The pairs of packages the compatibility matrix states, each with the doctor check that
# judges an installed pair against it (checks/test_frameworks.py, checks/test_driver.py).
PAIR_CHECKS: dict[tuple[str, str], str] = {
    ("torch-npu", "torch"): "frameworks.torch-pair",
    ("torch-npu", "cann"): "frameworks.torch-npu-cann",
    ("mindspore", "cann"): "frameworks.mindspore-cann",
    ("cann", "driver"): "driver.supports-cann",
}
# Modules whose distribution has another name (triton-ascend installs `triton`; `te` and `tbe`
# are CANN's own Python packages; `op_plugin` ships inside torch_npu).
_MODULE_DISTS: dict[str, tuple[str, ...]] = {
    "triton": ("triton-ascend", "triton"), "te": ("cann",), "tbe": ("cann",),
    "op_plugin": ("torch-npu",), "mindspore": ("mindspore", "mindspore-ascend")}
# A cause's `packages` item that stands for the packages the record names (the package an
# exception was raised in, the modules its message names), as a rule read them.
NAMED = "named"
# A warning is the matrix's doubt (an unknown build, sources that disagree).
_PAIR_VERDICTS: dict[str, PairVerdict] = {"pass": "paired", "fail": "not paired",
                                          "warn": "in doubt"}


class CheckOutcome(Protocol):
    """What a cause's verdict reads of one check's result (the doctor's CheckResult)."""

    @property
    def id(self) -> str: ...

    @property
    def status(self) -> str: ...

    @property
    def message(self) -> str: ...

    @property
    def observed(self) -> str | None: ...


@dataclass(frozen=True)
class Installed:
    """One package involved in a cause, as the host has it."""

    name: str  # a distribution name (torch-npu), or `cann` / `driver`
    version: str | None
    state: Literal["installed", "not installed", "not read"]


@dataclass(frozen=True)
class Pairing:
    """Whether the matrix pairs two installed packages, as the doctor's check found it."""

    packages: tuple[str, str]
    check: str
    verdict: PairVerdict
    message: str


@dataclass
class HostChecks:
    host: str
    reachable: bool
    error: str | None = None
    results: dict[str, CheckOutcome] = field(default_factory=dict)
    installed: list[Installed] = field(default_factory=list)
    pairings: list[Pairing] = field(default_factory=list)
    unpaired: list[str] = field(default_factory=list)  # involved, no pair in the matrix


def wanted_checks(causes: list[Cause], packages: Iterable[str] = ()) -> tuple[str, ...]:
    """The causes' checks, and the pairing checks of the packages involved."""
    named = [c for cause in causes for c in cause.checks]
    wanted = set(packages)
    named += [check for pair, check in PAIR_CHECKS.items() if set(pair) <= wanted]
    return tuple(dict.fromkeys(named))


def involved_packages(hits: Iterable[Hit]) -> tuple[str, ...]:
    """The packages the hits' causes involve (the vocabulary's); for a cause that lists
    `named`, those a rule read in the record."""
    vocabulary = load_vocabulary()
    names: list[str] = []
    for hit in hits:
        for cause in hit.signature.causes:
            kind = vocabulary.get(cause.id) if cause.id else None
            for name in kind.packages if kind else ():
                if name != NAMED:
                    names.append(name)
                elif hit.kind == "rule":
                    read = hit.numbers.get("packages", "")
                    names += [_distribution(p) for p in read.split(", ") if p]
    return tuple(dict.fromkeys(names))


def _distribution(module: str) -> str:
    top = module.split(".", 1)[0]
    return _MODULE_DISTS.get(top, (normalize_dist(top),))[0]


def installed_versions(facts: Facts, packages: Iterable[str]) -> list[Installed]:
    """Each package's installed version on the host, or why there is none."""
    python = facts.frameworks.python
    out = []
    for name in packages:
        if name == "cann":
            version = facts.cann.version_raw if facts.cann else None
            out.append(Installed(name, version, "installed" if facts.cann else "not installed"))
        elif name == "driver":
            version = facts.driver.version_raw if facts.driver else None
            out.append(Installed(name, version,
                                 "installed" if facts.driver else "not installed"))
        elif python is None:  # the framework interpreter was not captured or failed
            out.append(Installed(name, None, "not read"))
        else:
            candidates = _MODULE_DISTS.get(name.replace("-", "_"), (name,))
            found = next((python.distributions[c] for c in candidates
                          if c in python.distributions), None)
            out.append(Installed(name, found, "installed" if found else "not installed"))
    return out


def pairings(packages: Iterable[str], results: dict[str, CheckOutcome]
             ) -> tuple[list[Pairing], list[str]]:
    """What the matrix says of each pair of involved packages (its check's result), and the
    involved packages no pair of the matrix covers."""
    wanted = list(dict.fromkeys(packages))
    found, covered = [], set()
    for pair, check in PAIR_CHECKS.items():
        if not set(pair) <= set(wanted):
            continue
        covered |= set(pair)
        result = results.get(check)
        if result is None:
            found.append(Pairing(pair, check, "undecided", "the check did not run"))
            continue
        said = result.message or result.observed or ""
        verdict = _PAIR_VERDICTS.get(result.status, "undecided")
        found.append(Pairing(pair, check, verdict, f"{check} {result.status}: {said}".strip()))
    return found, [name for name in wanted if name not in covered]


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
