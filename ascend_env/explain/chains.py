"""First cause, then echoes: the errors found in one log ordered as one failure, by specificity.

A log's errors usually form a chain: the line that states why (a CANN code with its reason, an
exception a rule or entry explains) and the lines that report it again (torch_npu's ERRnnnnn
wrappers, "call aclnnX failed", CANN's generic EZ9999 header, the HCCL watchdog). The lead is
the most specific error, the earliest of its rank:

0. an entry marked `role: cause`, or a CANN code line with its reason (`EZ1001: ... not
   implemented for DT_UINT64`, below the torch_npu call that reports it, e.g. the log of
   https://github.com/vllm-project/vllm-ascend/issues/4284);
1. any other error an entry or a rule explains, a module's internal error (x9999) that still
   says what failed;
2. an echo (a wrapper or a consequence: signatures.Signature.echo) and a code's family match
   without a reason;
3. a catch-all: torch_npu's ERR99999, a code whose only words are "Inner Error!".
An echo or a catch-all leads only a log where nothing else was found; the chain then says no
cause was found (`cause_found`), and explain exits 1 as for a line it does not know.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ascend_env.explain.hits import Hit
from ascend_env.explain.structure import read_shape

CAUSE, OTHER, ECHO, CATCH_ALL = 0, 1, 2, 3


@dataclass
class Chain:
    lead: Hit
    echoes: list[Hit] = field(default_factory=list)

    @property
    def catch_all(self) -> bool:
        """The lead is only a catch-all: nothing in the log said more."""
        return specificity(self.lead) == CATCH_ALL

    @property
    def cause_found(self) -> bool:
        """The lead states a reason; an echo or a catch-all only reports an error that this
        log does not show (another rank's, a line cut off above)."""
        return specificity(self.lead) <= OTHER


def build_chains(hits: Sequence[Hit], order: dict[str, int]) -> list[Chain]:
    """One chain per log (the source where each error was first seen), logs in input order."""
    by_source: dict[str, list[Hit]] = {}
    for hit in hits:
        if hit.signature.severity == "error":
            by_source.setdefault(hit.source, []).append(hit)
    chains = []
    for source in sorted(by_source, key=lambda s: order.get(s, 0)):
        found = sorted(by_source[source], key=lambda h: h.line_number)
        lead = min(found, key=lambda h: (specificity(h), h.line_number, -h.signature.priority))
        chain = Chain(lead=lead, echoes=[h for h in found if h is not lead])
        lead.role, lead.echo_of = "cause", None
        for echo in chain.echoes:
            echo.role, echo.echo_of = "echo", lead.signature.id
        chains.append(chain)
    return chains


def specificity(hit: Hit) -> int:
    """How much the hit's line says about why: CAUSE (the reason) to CATCH_ALL (nothing)."""
    signature = hit.signature
    if signature.role == "cause":
        return CAUSE
    codes = read_shape([hit.line]).codes
    cann = [c for c in codes if not c.code.startswith("ERR")]
    if codes and all(c.internal and not c.detailed for c in codes):
        return CATCH_ALL
    if signature.role == "echo":
        return ECHO
    if any(c.detailed and not c.internal for c in cann):
        return CAUSE  # a rule on such a line outranks the code's family by its priority
    if signature.role == "rule":
        return OTHER
    if any(c.detailed for c in cann):
        return OTHER
    if signature.echo:
        return ECHO
    return OTHER
