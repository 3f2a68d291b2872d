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
# Records a log writes at a level below warning: neither matched nor unknown.
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
        # Each signature with the literals one of which any line it matches must contain:
        # `in` tests cost far less than the regex, and most lines contain none of them.
        self._screened = [(s, required_literals(s.pattern.pattern)) for s in self.signatures]
        # One search for all the literals turns away a line that contains none (most do);
        # a signature without literals leaves the gate open.
        literals = sorted({lit for _, lits in self._screened for lit in lits or ()},
                          key=len, reverse=True)
        self._gate: tuple[str, ...] | None = None \
            if any(lits is None for _, lits in self._screened) else tuple(literals)

    def best(self, line: str) -> Signature | None:
        """The most specific signature matching the line: highest priority, then longest
        pattern (a longer pattern says more); None when none matches."""
        line = line[:MAX_LINE]
        # any(map(...)) keeps the loop over the literals in C (a generator would not).
        if self._gate is not None and not any(map(line.__contains__, self._gate)):
            return None
        found = [s for s, literals in self._screened
                 if (literals is None or any(lit in line for lit in literals))
                 and s.pattern.search(line)]
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
                # Records below warning level (most of a plog) state no failure: CANN, HCCL
                # and torch_npu write theirs at ERROR or WARNING. Skipping them keeps a
                # 64 MiB plog to seconds.
                if not line or QUIET_LEVEL.search(line):
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
                if not ERROR_LIKE.search(line[:MAX_LINE]):
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


_META = set(".^$*+?{}[]()|\\")
_QUANTIFIERS = set("*+?{")
MIN_LITERAL = 3


def _branches(pattern: str) -> list[str]:
    """The pattern split at its top-level `|` (none inside groups or classes)."""
    out, depth, start, index, in_class = [], 0, 0, 0, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            out.append(pattern[start:index])
            start = index + 1
        index += 1
    out.append(pattern[start:])
    return out


def _group_end(branch: str, start: int) -> int:
    """The index just past the group opened at `start`."""
    depth, index = 0, start
    while index < len(branch):
        char = branch[index]
        if char == "\\":
            index += 2
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    return len(branch)


def _longest_literal(branch: str) -> str | None:
    """The longest run of plain characters every match of the branch contains (a group is
    skipped whole: what is outside it is needed whatever it matches), or None."""
    runs, current, index = [], "", 0
    while index < len(branch):
        char = branch[index]
        if char == "\\" and index + 1 < len(branch):
            nxt = branch[index + 1]
            index += 2
            if nxt.isalnum():  # a class (\d \S \w) or an anchor (\b): ends the run
                runs.append(current)
                current = ""
            else:
                current += nxt
            continue
        if char in _QUANTIFIERS:  # the character before may be absent or repeated
            current = current[:-1]
            runs.append(current)
            current = ""
            if char == "{":
                index = branch.find("}", index) + 1 or len(branch)
                continue
        elif char == "[":
            runs.append(current)
            current = ""
            index = branch.find("]", index + 2) + 1 or len(branch)
            continue
        elif char == "(":
            runs.append(current)
            current = ""
            index = _group_end(branch, index)
            if index < len(branch) and branch[index] in _QUANTIFIERS:
                index += 1
            continue
        elif char in _META:
            runs.append(current)
            current = ""
        else:
            current += char
        index += 1
    runs.append(current)
    best = max(runs, key=len)
    return best if len(best) >= MIN_LITERAL else None


def required_literals(pattern: str) -> tuple[str, ...] | None:
    """Literals one of which every match of `pattern` contains (one per top-level
    alternative); None when some alternative has none this reading can vouch for."""
    literals = []
    for branch in _branches(pattern):
        literal = _longest_literal(branch)
        if literal is None:
            return None
        literals.append(literal)
    return tuple(literals)


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
