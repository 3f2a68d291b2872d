"""Rules over families: what a record's structure (structure.py) says about its cause, where no
entry knows the exact line.

An entry explains one line it has a sample of; a rule reads the parts of a record (the exception
class and the package it is raised in, the symbol or operator named, the chip, the CANN code's
module and class, the compiler and its message) and concludes a cause of the vocabulary
(vocabulary.py), with the checks that would confirm it. Rules live in
ascend_env/data/signatures/rules/*.yaml; each names its public source and real samples (records
of the corpus's train part), which are its tests.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ascend_env.core.resources import data_names, load_yaml
from ascend_env.explain.areas import area_of, load_areas
from ascend_env.explain.signatures import Cause, Fix, Signature, SignatureError
from ascend_env.explain.structure import Shape
from ascend_env.explain.vocabulary import load_vocabulary

FOLDER = "signatures/rules"
NEVER = re.compile(r"(?!)")  # a rule reads structure, not a line pattern
_FIELDS = {"id", "family", "priority", "when", "unless", "concludes", "also", "meaning", "fix",
           "source", "samples"}

# Each feature a condition may name, and how a shape gives its values.
FEATURES: dict[str, Callable[[Shape], list[str]]] = {
    "exception": lambda s: [cls for cls, _, _ in s.exceptions],
    "message": lambda s: [message for _, message, _ in s.exceptions],
    "raised_in": lambda s: [s.raised_in] if s.raised_in else [],
    "package": lambda s: s.packages,
    "symbol": lambda s: s.symbols,
    "library": lambda s: s.libraries,
    "chip": lambda s: s.chips,
    "code": lambda s: [c.code for c in s.codes],
    "module": lambda s: [c.code[:2] for c in s.codes if c.detailed and c.module],
    "reason": lambda s: [c.reason for c in s.codes if c.detailed],
    "result": lambda s: s.results,
    "compiler": lambda s: s.compilers,
    "text": lambda s: s.lines,
}


# A rule whose cause shows in any layer (a programming error, a step that must come first)
# takes the family of the record's area (areas.py). Where the record names no layer it still
# names its cause, which does not depend on the layer, but only as a family match does
# (UNPLACED): without the layer it cannot tell the framework's code from the user's, so the
# record stays not known and explain exits 1.
BY_AREA = "area"
UNPLACED = "unplaced"
# A programming error belongs to the code that made the failing call: the innermost traceback
# frame in a package of the Ascend stack (below it are torch's, transformers' or Python's own
# frames, which raised it for that caller), before any word of the message.
FRAME_FAMILIES = {"vllm_ascend": "vllm_ascend", "vllm": "vllm_ascend",
                  "torch_npu": "torch_npu", "torchair": "torch_npu", "mindspore": "mindspore"}


@dataclass(frozen=True)
class Rule:
    id: str
    family: str  # or BY_AREA
    priority: int
    when: tuple[tuple[str, re.Pattern[str]], ...]
    unless: tuple[tuple[str, re.Pattern[str]], ...]
    concludes: Cause
    also: tuple[Cause, ...]
    meaning: str  # a template: {exception} {package} {symbol} {chip} ... from the record
    fix: Fix
    source: str
    samples: tuple[str, ...]

    def bind(self, shape: Shape) -> dict[str, str] | None:
        """What the record says for each condition, or None when the rule does not fire."""
        bound: dict[str, str] = {}
        for name, pattern in self.when:
            value = next((v for v in FEATURES[name](shape) if pattern.search(v)), None)
            if value is None:
                return None
            # The text condition binds what it matched (the words a meaning can quote).
            found = pattern.search(value) if name == "text" else None
            bound[name] = found.group(0) if found is not None else value
        for name, pattern in self.unless:
            if any(pattern.search(v) for v in FEATURES[name](shape)):
                return None
        return bound

    def family_of(self, shape: Shape) -> str:
        """The rule's family on this record: its own, or for BY_AREA the record's area's
        (UNPLACED when the record names no area)."""
        if self.family != BY_AREA:
            return self.family
        caller = next((FRAME_FAMILIES[p] for p in reversed(shape.frames) if p in FRAME_FAMILIES),
                      None)
        if caller is not None:
            return caller
        placed = area_of(load_areas(), shape)
        return placed[0].family if placed is not None else UNPLACED

    def signature(self, bound: dict[str, str], shape: Shape) -> Signature:
        """The rule as an explanation of this record: its meaning filled in."""
        values: dict[str, str] = {}
        for name, read in FEATURES.items():
            found = read(shape)
            values[name] = found[0] if found else "?"
        family = self.family_of(shape)
        layer = f"{family}'s layer" if family != UNPLACED else "a layer the record does not name"
        values |= bound | {"family": family, "layer": layer}
        meaning = self.meaning.format_map({k: _short(v) for k, v in values.items()})
        return Signature(id=self.id, family=family, pattern=NEVER, severity="error",
                         priority=self.priority, meaning=meaning,
                         causes=(self.concludes, *self.also), fix=self.fix,
                         source=self.source, samples=self.samples,
                         role="rule" if family != UNPLACED else "family")


def _short(value: str) -> str:
    return value if len(value) <= 120 else value[:117] + "..."


def _conditions(raw: Any, where: str) -> tuple[tuple[str, re.Pattern[str]], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise SignatureError(f"{where}: conditions are a mapping of feature to regex")
    out = []
    for name, pattern in raw.items():
        if name not in FEATURES:
            raise SignatureError(f"{where}: unknown feature {name!r} (one of "
                                 f"{', '.join(FEATURES)})")
        try:
            out.append((name, re.compile(str(pattern))))
        except re.error as exc:
            raise SignatureError(f"{where}: {name} does not compile: {exc}") from exc
    return tuple(out)


def _cause(raw: Any, where: str) -> Cause:
    """A cause; one that names a vocabulary id takes its text and checks unless it says its
    own."""
    if not isinstance(raw, dict):
        raise SignatureError(f"{where}: a cause is a mapping with `id`, `text` and `checks`")
    ident = raw.get("id")
    known = load_vocabulary().get(ident) if ident is not None else None
    if ident is not None and known is None:
        raise SignatureError(f"{where}: cause id {ident!r} is not in the vocabulary")
    text = raw.get("text", known.text if known else None)
    checks = raw.get("checks", list(known.checks) if known else [])
    if not isinstance(text, str) or not text.strip() or not isinstance(checks, list):
        raise SignatureError(f"{where}: a cause needs a `text` and a list of `checks`")
    return Cause(text=text.strip(), checks=tuple(str(c) for c in checks), id=ident)


def parse_rule(raw: Any, where: str) -> Rule:
    """One YAML rule; any defect names the file and rule."""
    if not isinstance(raw, dict) or set(raw) - _FIELDS:
        raise SignatureError(f"{where}: a rule is a mapping of {sorted(_FIELDS)}")
    ident = raw.get("id")
    if not isinstance(ident, str) or not ident.startswith("rule."):
        raise SignatureError(f"{where}: a rule's id starts with 'rule.'")
    where = f"{where} ({ident})"
    when = _conditions(raw.get("when"), where)
    if not when:
        raise SignatureError(f"{where}: `when` names at least one condition")
    concludes = _cause(raw.get("concludes"), where)
    if concludes.id is None:
        raise SignatureError(f"{where}: `concludes` names a cause id of the vocabulary")
    fix = raw.get("fix")
    samples = raw.get("samples")
    source = raw.get("source")
    if not isinstance(fix, dict) or not isinstance(fix.get("command"), str):
        raise SignatureError(f"{where}: `fix` must be a mapping with `id` and `command`")
    if not isinstance(samples, list) or not samples or \
            not all(isinstance(s, str) and s for s in samples):
        raise SignatureError(f"{where}: `samples` must list at least one real record")
    if not isinstance(source, str) or not source.startswith("https://"):
        raise SignatureError(f"{where}: source must be a public https URL")
    for text in (raw.get("meaning"), raw.get("family")):
        if not isinstance(text, str) or not text.strip():
            raise SignatureError(f"{where}: `meaning` and `family` must be non-empty strings")
    priority = raw.get("priority", 45)
    if not isinstance(priority, int):
        raise SignatureError(f"{where}: priority must be an integer")
    also = raw.get("also", [])
    if not isinstance(also, list):
        raise SignatureError(f"{where}: `also` must be a list of causes")
    return Rule(id=ident, family=raw["family"], priority=priority, when=when,
                unless=_conditions(raw.get("unless"), where), concludes=concludes,
                also=tuple(_cause(c, where) for c in also), meaning=raw["meaning"].strip(),
                fix=Fix(id=fix.get("id"), command=fix["command"]), source=source,
                samples=tuple(samples))


@lru_cache(maxsize=1)
def load_rules() -> tuple[Rule, ...]:
    """Every shipped rule, highest priority first (ids unique)."""
    rules: list[Rule] = []
    for name in data_names(FOLDER):
        if not name.endswith(".yaml"):
            continue
        raw = load_yaml(f"{FOLDER}/{name}")
        if not isinstance(raw, list):
            raise SignatureError(f"{FOLDER}/{name}: the file must be a list of rules")
        rules += [parse_rule(item, f"{FOLDER}/{name} rule {index + 1}")
                  for index, item in enumerate(raw)]
    ids = [r.id for r in rules]
    if len(ids) != len(set(ids)):
        raise SignatureError(f"{FOLDER}: rule ids are not unique")
    return tuple(sorted(rules, key=lambda r: -r.priority))


def first_rule(rules: Sequence[Rule], shape: Shape) -> tuple[Rule, dict[str, str]] | None:
    """The highest-priority rule that fires on the record, with what it read, or None."""
    for rule in rules:
        bound = rule.bind(shape)
        if bound is not None:
            return rule, bound
    return None


def evidence_line(rule: Rule, bound: dict[str, str], shape: Shape) -> int:
    """The index of the record's line the rule's first condition read (the line the reason
    is on), else the line of the record's own reason."""
    value = bound.get(rule.when[0][0], "")
    for index, line in enumerate(shape.lines):
        if value and value in line:
            return index
    return shape.first_line()
