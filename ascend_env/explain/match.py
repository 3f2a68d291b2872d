"""Find known signatures in log text: the most specific entry per line, repeats grouped, and
the lines that look like errors but match nothing.

Every line is tried against one alternation of all patterns first, so the lines of a plog
that match nothing (most of them: INFO and EVENT records) cost one regex search each.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ascend_env.explain.signatures import Signature, load_signatures

# A line is matched on its first 8 KiB: enough for the longest CANN message, and a bound on
# the work a pathological line (a megabyte of base64) can cause.
MAX_LINE = 8192

# What "looks like an error": log levels, CANN/ACL error codes (E[A-Z]nnnn), torch_npu's
# ERRnnnnn, Python tracebacks and exceptions, loader failures, and "failed" (not "failed=0",
# Ansible's recap of a good run).
ERROR_LIKE = re.compile(
    r"\b(ERROR|Error|error|FATAL|Fatal|fatal|CRITICAL)\b|\bE[A-Z]\d{4}\b|\bERR\d{5}\b"
    r"|Trace[Bb]ack|\w+(Error|Exception):|\bfailed\b(?!=0)|\bFAILED\b"
    r"|cannot open shared object file|undefined symbol")
# Records a log writes at a level below warning: matched against signatures, never unknown.
QUIET_LEVEL = re.compile(r"^\W{0,3}(\(\w[^)]*\)\s*)?\[?(INFO|DEBUG|EVENT|TRACE)\b")
# Lines that belong to an error message rather than state one (the traceback header, CANN's
# "Solution:" and "Rectify..." advice, C++ frames): explained when a signature matched close by.
CONTEXT = re.compile(
    r"Trace[Bb]ack \(most recent call last\)|Rectify the fault|^\W*Solution:|Possible Cause"
    r"|Exception raised from|^\W*frame #\d+")
CONTEXT_BEFORE, CONTEXT_AFTER = 120, 40  # a traceback header precedes its error by many lines


@dataclass
class Hit:
    """Every occurrence of one signature: where it was first seen, and how often."""

    signature: Signature
    source: str
    line_number: int
    line: str
    count: int = 1


@dataclass
class Unknown:
    """An error-looking line that no signature explains (identical lines grouped)."""

    source: str
    line_number: int
    line: str
    count: int = 1


@dataclass
class Scan:
    hits: list[Hit] = field(default_factory=list)
    unknown: list[Unknown] = field(default_factory=list)
    lines: int = 0


class Matcher:
    """The knowledge base compiled for scanning."""

    def __init__(self, signatures: Sequence[Signature] | None = None) -> None:
        self.signatures = tuple(load_signatures() if signatures is None else signatures)
        self._any = re.compile("|".join(f"(?:{s.pattern.pattern})" for s in self.signatures))

    def best(self, line: str) -> Signature | None:
        """The most specific signature matching the line: highest priority, then longest
        pattern (a longer pattern says more); None when none matches."""
        line = line[:MAX_LINE]
        if not self.signatures or self._any.search(line) is None:
            return None
        found = [s for s in self.signatures if s.pattern.search(line)]
        if not found:
            return None
        return max(found, key=lambda s: (s.priority, len(s.pattern.pattern)))

    def scan(self, texts: Iterable[tuple[str, str]]) -> Scan:
        """Scan (source name, text) pairs in order."""
        result = Scan()
        hits: dict[str, Hit] = {}
        unknown: dict[str, Unknown] = {}
        pending: list[tuple[str, int, str]] = []  # context lines, judged once the source ends
        order: dict[str, int] = {}
        for source, text in texts:
            order.setdefault(source, len(order))
            matched_at: list[int] = []
            pending.clear()
            for number, raw in enumerate(text.splitlines(), start=1):
                result.lines += 1
                line = raw.rstrip()
                if not line:
                    continue
                signature = self.best(line)
                if signature is not None:
                    matched_at.append(number)
                    hit = hits.get(signature.id)
                    if hit is None:
                        hits[signature.id] = Hit(signature, source, number, line.strip())
                    else:
                        hit.count += 1
                    continue
                if QUIET_LEVEL.search(line) or not ERROR_LIKE.search(line[:MAX_LINE]):
                    continue
                if CONTEXT.search(line):
                    pending.append((source, number, line))
                    continue
                _note_unknown(unknown, source, number, line)
            for src, number, line in pending:
                if not any(number - CONTEXT_AFTER <= at <= number + CONTEXT_BEFORE
                           for at in matched_at):
                    _note_unknown(unknown, src, number, line)
        result.hits = sorted(hits.values(), key=lambda h: (_order(h.signature), h.source,
                                                           h.line_number))
        result.unknown = sorted(unknown.values(),
                                key=lambda u: (order.get(u.source, 0), u.line_number))
        return result


def _order(signature: Signature) -> int:
    # Errors first, then warnings, then notes; the KB's own order within each.
    return {"error": 0, "warning": 1, "info": 2}[signature.severity]


def _note_unknown(unknown: dict[str, Unknown], source: str, number: int, line: str) -> None:
    key = line.strip()
    seen = unknown.get(key)
    if seen is None:
        unknown[key] = Unknown(source, number, key[:MAX_LINE])
    else:
        seen.count += 1


_DEFAULT: Matcher | None = None


def default_matcher() -> Matcher:
    """The shipped knowledge base, compiled once per process."""
    global _DEFAULT  # noqa: PLW0603 - a process-wide cache of a pure value
    if _DEFAULT is None:
        _DEFAULT = Matcher()
    return _DEFAULT
