"""The signature knowledge base: one entry per known failure line, read from
ascend_env/data/signatures/*.yaml (one file per family).

An entry says what the line means, its likely causes, for each cause the doctor checks that
confirm or rule it out, the fix (a `doctor --fix` id where one applies, and a command), its
severity and public source, and real sample lines from that source (its test). Dataclasses,
not pydantic: the inline explanations of smoke, install and image views load this too, and
must stay cheap.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Literal

from ascend_env.core.errors import AscendEnvError
from ascend_env.core.resources import data_names, load_yaml
from ascend_env.explain.vocabulary import entry_causes

Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")
FOLDER = "signatures"
_FIELDS = {"id", "family", "pattern", "severity", "priority", "meaning", "causes", "fix",
           "source", "samples", "role"}
# Optional `role` of an entry in a chain of errors: `cause` leads its log's chain wherever it
# stands; `echo` (a wrapper or a consequence, e.g. torch_npu's ERR00100 around a CANN code) is
# listed under the first cause. Without it an entry of priority 20 or less (a generic header)
# is an echo, any other a cause candidate. `family` (families.py) and `rule` (rules.py) are set
# by code, never by YAML.
Role = Literal["cause", "echo", "family", "rule"]
ROLES: tuple[str, ...] = ("cause", "echo")
ECHO_PRIORITY = 20
FALLBACK_PRIORITY = 1  # below every entry: a family match never beats an exact one


class SignatureError(AscendEnvError):
    """The shipped knowledge base is malformed (a packaging bug, said plainly)."""


@dataclass(frozen=True)
class Cause:
    text: str
    checks: tuple[str, ...]  # doctor check ids that confirm (fail) or rule out (pass) it
    id: str | None = None  # the vocabulary's id (vocabulary.py) where the cause has one


@dataclass(frozen=True)
class Fix:
    id: str | None  # a `doctor --fix` id (ascend_env/doctor/fix.py FIX_IDS) or None
    command: str

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "command": self.command}


# What a family match (families.py, codes.py) advises: its line reports what failed, the log's
# other lines say why.
WHOLE_LOG = Fix(id=None, command="ascend-env explain the whole log (all ranks); the first cause "
                                 "is listed first")


@dataclass(frozen=True)
class Signature:
    id: str
    family: str
    pattern: re.Pattern[str]
    severity: Severity
    priority: int  # the most specific entry wins a line; generic headers are low
    meaning: str
    causes: tuple[Cause, ...]
    fix: Fix
    source: str
    samples: tuple[str, ...]
    role: Role | None = None

    @property
    def echo(self) -> bool:
        """Reported because of another error rather than being the first cause itself."""
        if self.role is not None:
            return self.role not in ("cause", "rule")
        return self.priority <= ECHO_PRIORITY

    @property
    def cause_id(self) -> str:
        """The id of the first cause: the vocabulary's where it has one, else the entry's."""
        return self.causes[0].id or self.id

    @property
    def checks(self) -> tuple[str, ...]:
        """Every check any cause names, in order, once."""
        return tuple(dict.fromkeys(c for cause in self.causes for c in cause.checks))


def _text(raw: dict[str, Any], key: str, where: str) -> str:
    value = raw.get(key)
    if not isinstance(value, str) or not value.strip():
        raise SignatureError(f"{where}: `{key}` must be a non-empty string")
    return value


def parse_entry(raw: Any, where: str) -> Signature:
    """One YAML entry as a Signature; any defect names the file and entry."""
    if not isinstance(raw, dict):
        raise SignatureError(f"{where}: an entry must be a mapping")
    unknown = set(raw) - _FIELDS
    if unknown:
        raise SignatureError(f"{where}: unknown keys {sorted(unknown)}")
    ident = _text(raw, "id", where)
    where = f"{where} ({ident})"
    try:
        pattern = re.compile(_text(raw, "pattern", where))
    except re.error as exc:
        raise SignatureError(f"{where}: pattern does not compile: {exc}") from exc
    severity = raw.get("severity")
    if severity not in SEVERITIES:
        raise SignatureError(f"{where}: severity must be one of {', '.join(SEVERITIES)}")
    priority = raw.get("priority", 50)
    if not isinstance(priority, int):
        raise SignatureError(f"{where}: priority must be an integer")
    causes_raw = raw.get("causes")
    if not isinstance(causes_raw, list) or not causes_raw:
        raise SignatureError(f"{where}: `causes` must be a non-empty list")
    causes = []
    for item in causes_raw:
        if not isinstance(item, dict) or not isinstance(item.get("checks", []), list):
            raise SignatureError(f"{where}: a cause is a mapping with `text` and `checks`")
        causes.append(Cause(text=_text(item, "text", where),
                            checks=tuple(str(c) for c in item.get("checks", []))))
    fix_raw = raw.get("fix")
    if not isinstance(fix_raw, dict):
        raise SignatureError(f"{where}: `fix` must be a mapping with `id` and `command`")
    fix_id = fix_raw.get("id")
    if fix_id is not None and not isinstance(fix_id, str):
        raise SignatureError(f"{where}: fix id must be a string or null")
    samples = raw.get("samples")
    if not isinstance(samples, list) or not samples or \
            not all(isinstance(s, str) and s for s in samples):
        raise SignatureError(f"{where}: `samples` must list at least one real line")
    role = raw.get("role")
    if role is not None and role not in ROLES:
        raise SignatureError(f"{where}: role must be one of {', '.join(ROLES)}")
    source = _text(raw, "source", where)
    if not source.startswith("https://"):
        raise SignatureError(f"{where}: source must be a public https URL")
    return Signature(id=ident, family=_text(raw, "family", where), pattern=pattern,
                     severity=severity, priority=priority,
                     meaning=_text(raw, "meaning", where).strip(), causes=tuple(causes),
                     fix=Fix(id=fix_id, command=_text(fix_raw, "command", where)),
                     source=source, samples=tuple(samples), role=role)


def with_first_cause_id(entry: Signature, cause_id: str | None) -> Signature:
    """The entry with its first cause named by the vocabulary's id."""
    if cause_id is None:
        return entry
    first = entry.causes[0]
    return replace(entry, causes=(Cause(first.text, first.checks, cause_id), *entry.causes[1:]))


@lru_cache(maxsize=1)
def load_signatures() -> tuple[Signature, ...]:
    """Every shipped signature (ids unique across files), first causes named by the
    vocabulary."""
    entries: list[Signature] = []
    seen: dict[str, str] = {}
    named = entry_causes()
    for name in data_names(FOLDER):
        if not name.endswith(".yaml"):
            continue
        raw = load_yaml(f"{FOLDER}/{name}")
        if not isinstance(raw, list):
            raise SignatureError(f"signatures/{name}: the file must be a list of entries")
        for index, item in enumerate(raw):
            entry = parse_entry(item, f"signatures/{name} entry {index + 1}")
            if entry.id in seen:
                raise SignatureError(f"signatures/{name}: id {entry.id} is also in "
                                     f"{seen[entry.id]}")
            seen[entry.id] = name
            entries.append(with_first_cause_id(entry, named.get(entry.id)))
    return tuple(entries)
