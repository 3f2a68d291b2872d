"""What a scan found: each known entry with where it was first seen and what its line read,
and the error-looking lines no entry explains."""

from __future__ import annotations

from dataclasses import dataclass, field

from ascend_env.explain.signatures import Signature


@dataclass
class Hit:
    """Every occurrence of one signature: where it was first seen, and how often."""

    signature: Signature
    source: str
    line_number: int
    line: str
    count: int = 1
    numbers: dict[str, str] = field(default_factory=dict)  # read from the first occurrence
    role: str | None = None  # "cause" or "echo" in its log's chain; None for warnings
    echo_of: str | None = None  # the id of the chain's first cause, for an echo

    @property
    def kind(self) -> str:
        """`exact` (an entry of the base), `rule` (a rule read the record's structure) or
        `family` (the code's class only)."""
        if self.signature.role in ("family", "rule"):
            return str(self.signature.role)
        return "exact"


@dataclass
class Unknown:
    """An error-looking line that no signature explains (identical lines grouped)."""

    source: str
    line_number: int
    line: str
    count: int = 1
