"""Find known signatures in log text: every line and every multi-line record is tried against
the knowledge base, whatever its level; repeats are grouped, errors are ordered as chains
(first cause, then echoes), and error-looking lines that match nothing are kept apart.

A line is screened by the literals its candidate entries need (literals.py) before any
regex runs, so the lines of a plog that match nothing (most of them) cost little.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ascend_env.explain import records
from ascend_env.explain.areas import Area, load_areas
from ascend_env.explain.chains import OTHER, Chain, build_chains, specificity
from ascend_env.explain.families import fallback
from ascend_env.explain.hits import Hit, Unknown
from ascend_env.explain.literals import required_literals
from ascend_env.explain.numbers import read_numbers
from ascend_env.explain.origins import load_origins, place
from ascend_env.explain.rules import UNPLACED, Rule, evidence_line, first_rule, load_rules
from ascend_env.explain.signatures import Signature, load_signatures
from ascend_env.explain.structure import read_shape

__all__ = ["Hit", "Matcher", "Scan", "Unknown", "default_matcher", "required_literals"]

# A line is matched on its first 8 KiB: enough for the longest CANN message, and a bound on
# the work a pathological line (a megabyte of base64) can cause.
MAX_LINE = 8192

# What "looks like an error" (it decides which unmatched lines are listed as not known): log
# levels (ERROR, glog/c10's `E0312 10:00:00` and `[E ...]`), CANN/ACL error codes (E[A-Z]nnnn),
# torch_npu's ERRnnnnn, Python tracebacks and exceptions, loader failures, "failed" (not
# "failed=0", Ansible's recap of a good run), and the words CANN, torch_npu and the operators
# state a refusal with where no level is printed ("Fail to", "not supported", "exhausted",
# "Invalid argument", a version mismatch).
ERROR_LIKE = re.compile(
    r"\b(ERROR|Error|error|FATAL|Fatal|fatal|CRITICAL)\b|\bE[A-Z1-9]\d{4}\b|\bERR\d{5}\b"
    r"|Trace[Bb]ack|\b\w+(Error|Exception)\b[:(]|\bException\b|\bfailed\b(?!=0)|\bFAILED\b"
    r"|cannot open shared object file|undefined symbol|out of memory|Segmentation fault"
    r"|(?:^|\]:?)\[?[EF]\d{4} \d\d:\d\d:\d\d|\[E[\s\d]|\bterminate called|\bcore dumped\b"
    r"|cannot import name|No module named|[Hh]eartbeat [Ll]ost|[Dd]evice [Ll]ost|\bstuck\b"
    r"|\b[Ff]ail(?:ure|s)? to\b|\bfailure\b|[Uu]nsupported|not (?:currently )?supported"
    r"|[Ee]xhausted|[Ii]llegal instruction|version mismatch|No solution found"
    r"|[Ii]nvalid (?:argument|device|version|value)|(?:Error|Exception)_\w+:"
    r"|terminated with exception|\btimed out\b|operation timeout|does not ha(?:s|ve) any binary")
# Records a log writes below warning level: matched like any line, never listed as unknown.
QUIET_LEVEL = re.compile(r"^\W{0,3}(\(\w[^)]*\)\s*)?\[?(INFO|DEBUG|EVENT|TRACE)\b")
# Lines that belong to an error message rather than state one (CANN's "Solution:" and
# "Rectify..." advice, C++ frames, pip's header above the conflicts it lists, the section
# titles and search hint of MindSpore's error report, as mindspore-ai/docs
# tutorials/source_en/debug/error_analysis/cann_error_cases.md shows them): explained when a
# signature matched close by.
CONTEXT = re.compile(
    r"Trace[Bb]ack \(most recent call last\)|Rectify the fault|^\W*Solution:|Possible Cause"
    r"|Exception raised from|^\W*frame #\d+|source of the following dependency conflicts"
    r"|^\W*- (?:Ascend|Framework|Kernel) Error Message|^\(Please search \"[^\"]*\" at https://")
CONTEXT_BEFORE, CONTEXT_AFTER = 120, 40
MAX_PACKAGES = 8  # the packages a rule hit notes, first named first


@dataclass
class Scan:
    hits: list[Hit] = field(default_factory=list)
    unknown: list[Unknown] = field(default_factory=list)
    lines: int = 0
    chains: list[Chain] = field(default_factory=list)


class Matcher:
    """The knowledge base compiled for scanning."""

    def __init__(self, signatures: Sequence[Signature] | None = None, *,
                 rules: Sequence[Rule] | None = None, areas: Sequence[Area] | None = None,
                 origins: bool = True, use_library: bool = True) -> None:
        self.signatures = tuple(load_signatures() if signatures is None else signatures)
        self.rules = tuple(load_rules() if rules is None else rules)
        self.areas = tuple(load_areas() if areas is None else areas)
        # The table of messages is read on the first record that needs it: most logs explain
        # every error record and never do.
        self.origins = origins and bool(self.areas)
        # A rule whose first condition is on the text is tried only on a record containing
        # one of that pattern's literals; any other rule only on a record that looks like an
        # error. Reading a record's structure is the costly part: most records need none.
        self._rule_literals = [_rule_literals(rule) for rule in self.rules]
        # Each signature with the literals one of which any line it matches must contain:
        # a line that contains none of an entry's literals never runs that entry's regex.
        self._screened = [(s, required_literals(s.pattern.pattern)) for s in self.signatures]
        self._always = [s for s, lits in self._screened if lits is None]
        # One Aho-Corasick pass (pyahocorasick) finds every literal a line contains, and so
        # the few entries worth a regex; measured against the loops below in
        # benchmarks/explain_match.py (about 30x faster with ~470 entries, same answers).
        self._automaton = _automaton(self._screened) if use_library else None
        # Without the library: one search for all the literals turns away a line that
        # contains none (most do); a signature without literals leaves the gate open.
        literals = sorted({lit for _, lits in self._screened for lit in lits or ()},
                          key=len, reverse=True)
        self._gate: tuple[str, ...] | None = None if self._always else tuple(literals)

    def best(self, line: str) -> Signature | None:
        """The most specific signature matching the line: highest priority, then longest
        pattern (a longer pattern says more); None when none matches."""
        line = line[:MAX_LINE]
        if self._automaton is not None:
            owners: set[int] = set()
            for _, indexes in self._automaton.iter(line):
                owners.update(indexes)
            candidates = [self.signatures[i] for i in sorted(owners)] + self._always
            found = [s for s in candidates if s.pattern.search(line)]
        else:
            # any(map(...)) keeps the loop over the literals in C (a generator would not).
            if self._gate is not None and not any(map(line.__contains__, self._gate)):
                return None
            found = [s for s, literals in self._screened
                     if (literals is None or any(lit in line for lit in literals))
                     and s.pattern.search(line)]
        if not found:
            return None
        return max(found, key=lambda s: (s.priority, len(s.pattern.pattern)))

    def explain_line(self, line: str) -> Signature | None:
        """The best entry for one line, else its code's family entry (families.py)."""
        return self.best(line) or fallback(line[:MAX_LINE])

    def scan(self, texts: Iterable[tuple[str, str]]) -> Scan:
        """Scan (source name, text) pairs in order."""
        result = Scan()
        state = _State()
        for source, text in texts:
            state.order.setdefault(source, len(state.order))
            lines = text.splitlines()
            result.lines += len(lines)
            self._scan_source(source, lines, state)
        chains = build_chains(list(state.hits.values()), state.order)
        result.chains = chains
        in_chains = [h for c in chains for h in (c.lead, *c.echoes)]
        rest = sorted((h for h in state.hits.values() if h.signature.severity != "error"),
                      key=lambda h: (_order(h.signature), state.order.get(h.source, 0),
                                     h.line_number))
        result.hits = in_chains + rest
        result.unknown = sorted(state.unknown.values(),
                                key=lambda u: (state.order.get(u.source, 0), u.line_number))
        return result

    def _scan_source(self, source: str, lines: list[str], state: _State) -> None:
        matched_at: list[int] = []
        pending: list[tuple[int, str]] = []
        for start, end in records.split(lines):
            found: list[tuple[Signature, int]] = []  # what explained which line of the record
            # The record as one text: a message wrapped over lines, a traceback whose
            # exception needs its continuation, the command line above npu-smi's fields.
            whole = records.joined(lines, start, end)[:MAX_LINE] if end - start > 1 else ""
            for index in range(start, end):
                line = lines[index].rstrip()
                if not line:
                    continue
                signature = self.explain_line(line)
                if signature is not None:
                    found.append((signature, index))
                    state.note_hit(signature, source, index + 1, line.strip(), whole)
            if whole:
                signature = self.best(whole)
                if signature is not None and all(s.id != signature.id for s, _ in found):
                    found.append((signature, start))
                    state.note_hit(signature, source, start + 1, whole, whole)
            ruled = self._rule(lines, start, end)
            # A rule on a record that names no layer only hints, as an area does (below).
            hint = ruled if ruled is not None and ruled[0].family == UNPLACED else None
            # A rule that concludes what an entry of the record already says repeats it.
            if ruled is not None and hint is None and not any(
                    s.cause_id == ruled[0].cause_id and _explains(s, lines[index])
                    for s, index in found):
                signature, index, read = ruled
                found.append((signature, index))
                state.note_hit(signature, source, index + 1, lines[index].strip(), whole,
                               read=read)
            if any(_explains(signature, lines[index]) for signature, index in found):
                matched_at.extend(range(start + 1, end + 1))
                continue
            # Only echoes and catch-alls matched (or nothing): they explain their own lines,
            # never the record's other error lines - no silent pass.
            echoed = {index for _, index in found}
            if hint is not None:
                signature, index, read = hint
                state.note_hit(signature, source, index + 1, lines[index].strip(), whole,
                               read=read)
            elif not found:
                self._area(lines[start:end], start, source, state, whole)
            for index in range(start, end):
                line = lines[index].rstrip()
                if index in echoed:
                    matched_at.append(index + 1)
                    continue
                if not line or QUIET_LEVEL.search(line) or \
                        not ERROR_LIKE.search(line[:MAX_LINE]):
                    continue
                if CONTEXT.search(line):
                    pending.append((index + 1, line))
                else:
                    state.note_unknown(source, index + 1, line)
        for number, line in pending:
            if not any(number - CONTEXT_AFTER <= at <= number + CONTEXT_BEFORE
                       for at in matched_at):
                state.note_unknown(source, number, line)

    def _area(self, record: list[str], start: int, source: str, state: _State,
              whole: str) -> None:
        """Where a record nothing explains belongs (areas.py): a hit that leads no chain to a
        cause and explains no line, so the record's error lines are still listed unknown."""
        if not self.areas:
            return
        text = [line[:MAX_LINE] for line in record]
        if not any(ERROR_LIKE.search(line) and not QUIET_LEVEL.search(line) for line in text):
            return
        placed = place(self.areas, read_shape(text), load_origins() if self.origins else None)
        if placed is not None:
            signature, index = placed
            state.note_hit(signature, source, start + index + 1, record[index].strip(), whole)

    def _rule(self, lines: list[str], start: int, end: int
              ) -> tuple[Signature, int, dict[str, str]] | None:
        """The first rule that fires on the record (only rules the record can match are
        tried): its explanation, the index of the line it rests on and what it read."""
        if not self.rules:
            return None
        text = "\n".join(line[:MAX_LINE] for line in lines[start:end])
        lowered = text.lower()
        error_like: bool | None = None
        candidates = []
        for rule, literals in zip(self.rules, self._rule_literals, strict=True):
            if literals is not None:
                # Literals of a case-insensitive pattern are kept lower-case.
                if any(lit in text or lit in lowered for lit in literals):
                    candidates.append(rule)
                continue
            if error_like is None:
                error_like = ERROR_LIKE.search(text) is not None
            if error_like:
                candidates.append(rule)
        if not candidates:
            return None
        shape = read_shape(text.split("\n"))
        fired = first_rule(candidates, shape)
        if fired is None:
            return None
        rule, bound = fired
        read = {("matched" if name == "text" else name): value for name, value in bound.items()}
        if shape.packages:  # the packages a host states the versions of (confirm.py)
            read["packages"] = ", ".join(shape.packages[:MAX_PACKAGES])
        return rule.signature(bound, shape), start + evidence_line(rule, bound, shape), read


def _rule_literals(rule: Rule) -> tuple[str, ...] | None:
    """Literals one of which any record the rule fires on contains (its first condition's, on
    the text), or None (the rule is tried on every record that looks like an error)."""
    name, pattern = rule.when[0]
    if name != "text":
        return None
    literals = required_literals(pattern.pattern.removeprefix("(?i)"))
    if literals is not None and pattern.flags & re.IGNORECASE:
        return tuple(lit.lower() for lit in literals)
    return literals


def _explains(signature: Signature, line: str) -> bool:
    """Whether a hit explains its whole record: a warning or note, or an error that says
    more than a wrapper or a catch-all does."""
    if signature.severity != "error":
        return True
    return specificity(Hit(signature, "", 0, line)) <= OTHER


@dataclass
class _State:
    hits: dict[str, Hit] = field(default_factory=dict)
    unknown: dict[str, Unknown] = field(default_factory=dict)
    order: dict[str, int] = field(default_factory=dict)

    def note_hit(self, signature: Signature, source: str, number: int, line: str,
                 record: str = "", *, read: dict[str, str] | None = None) -> None:
        hit = self.hits.get(signature.id)
        if hit is None:
            numbers = read_numbers(signature, line, record) | (read or {})
            self.hits[signature.id] = Hit(signature, source, number, line, numbers=numbers)
        else:
            hit.count += 1

    def note_unknown(self, source: str, number: int, line: str) -> None:
        key = line.strip()
        seen = self.unknown.get(key)
        if seen is None:
            self.unknown[key] = Unknown(source, number, key[:MAX_LINE])
        else:
            seen.count += 1


def _order(signature: Signature) -> int:
    # Errors first, then warnings, then notes.
    return {"error": 0, "warning": 1, "info": 2}[signature.severity]


def _automaton(screened: Sequence[tuple[Signature, tuple[str, ...] | None]]) -> Any:
    """An Aho-Corasick automaton from each literal to the indexes of the entries that need
    it, or None when pyahocorasick is not installed (the loops in Matcher.best serve)."""
    try:
        import ahocorasick  # type: ignore[import-not-found]  # noqa: PLC0415 - measured speed-up
    except ImportError:
        return None
    owners: dict[str, list[int]] = {}
    for index, (_, literals) in enumerate(screened):
        for literal in literals or ():
            owners.setdefault(literal, []).append(index)
    if not owners:
        return None
    automaton = ahocorasick.Automaton()
    for literal, indexes in owners.items():
        automaton.add_word(literal, tuple(indexes))
    automaton.make_automaton()
    return automaton


_DEFAULT: Matcher | None = None


def default_matcher() -> Matcher:
    """The shipped knowledge base, compiled once per process."""
    global _DEFAULT  # noqa: PLW0603 - a process-wide cache of a pure value
    if _DEFAULT is None:
        _DEFAULT = Matcher()
    return _DEFAULT
