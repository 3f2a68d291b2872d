"""First cause, then echoes: the errors found in one log ordered as one failure.

A log's errors usually form a chain: the first cause (a device fault, HCCP that could not
start, an operator without a kernel) and its echoes (torch_npu's ERRnnnnn wrapper, CANN's
generic EZ9999 header, the HCCL watchdog, a compile subprocess that exits because its parent
did). The first cause leads: an entry marked `role: cause` or a CANN error code's own line
(`E30006: ...`: CANN states the why there, below the torch_npu or HCCL call that reports the
failure, e.g. the log of https://github.com/vllm-project/vllm-ascend/issues/4284), then any
other error that is not an echo (signatures.Signature.echo), then the rest; the earliest of
the first kind present leads.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ascend_env.explain.hits import Hit
from ascend_env.explain.records import body


@dataclass
class Chain:
    lead: Hit
    echoes: list[Hit] = field(default_factory=list)


def build_chains(hits: Sequence[Hit], order: dict[str, int]) -> list[Chain]:
    """One chain per log (the source where each error was first seen), logs in input order."""
    by_source: dict[str, list[Hit]] = {}
    for hit in hits:
        if hit.signature.severity == "error":
            by_source.setdefault(hit.source, []).append(hit)
    chains = []
    for source in sorted(by_source, key=lambda s: order.get(s, 0)):
        found = sorted(by_source[source], key=lambda h: h.line_number)
        lead = min(found, key=lambda h: (_depth(h), h.line_number))
        chain = Chain(lead=lead, echoes=[h for h in found if h is not lead])
        lead.role, lead.echo_of = "cause", None
        for echo in chain.echoes:
            echo.role, echo.echo_of = "echo", lead.signature.id
        chains.append(chain)
    return chains


CODE_LINE = re.compile(r"^\s*[EW][0-9A-Z]\d{4}:")


def _depth(hit: Hit) -> int:
    """0 for a first cause's kind of line, 1 for another error, 2 for an echo."""
    signature = hit.signature
    if signature.role == "cause":
        return 0
    if signature.echo:
        return 2
    return 0 if CODE_LINE.match(body(hit.line)) else 1
