"""The causes explain names (ascend_env/data/signatures/causes/causes.yaml): one id per cause,
what it means, the doctor checks that confirm it and the packages whose installed versions a
host states for it. An entry's first cause takes the id of the vocabulary cause that lists the
entry; a rule concludes one of these ids. The corpus labels its records with the same ids.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ascend_env.core.errors import AscendEnvError
from ascend_env.core.resources import load_yaml

FILE = "signatures/causes/causes.yaml"
_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_FIELDS = {"id", "text", "checks", "packages", "entries"}


class VocabularyError(AscendEnvError):
    """The shipped cause vocabulary is malformed (a packaging bug, said plainly)."""


@dataclass(frozen=True)
class CauseKind:
    id: str
    text: str
    checks: tuple[str, ...]  # doctor check ids that confirm or rule out the cause
    packages: tuple[str, ...]  # whose installed versions a host states (torch-npu, cann...)
    entries: tuple[str, ...]  # the entries whose first cause this is


def _strings(raw: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = raw.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise VocabularyError(f"{where}: `{key}` must be a list of strings")
    return tuple(value)


def parse_cause(raw: Any, where: str) -> CauseKind:
    if not isinstance(raw, dict) or set(raw) - _FIELDS:
        raise VocabularyError(f"{where}: a cause is a mapping of {sorted(_FIELDS)}")
    ident, text = raw.get("id"), raw.get("text")
    if not isinstance(ident, str) or not _ID.match(ident):
        raise VocabularyError(f"{where}: `id` must be lower-case words joined by '-'")
    if not isinstance(text, str) or not text.strip():
        raise VocabularyError(f"{where} ({ident}): `text` must be a non-empty string")
    where = f"{where} ({ident})"
    return CauseKind(id=ident, text=text.strip(), checks=_strings(raw, "checks", where),
                     packages=_strings(raw, "packages", where),
                     entries=_strings(raw, "entries", where))


@lru_cache(maxsize=1)
def load_vocabulary() -> dict[str, CauseKind]:
    """Every cause of the vocabulary by id (ids unique, an entry under one cause at most)."""
    raw = load_yaml(FILE)
    if not isinstance(raw, list):
        raise VocabularyError(f"{FILE}: the file must be a list of causes")
    out: dict[str, CauseKind] = {}
    owner: dict[str, str] = {}
    for index, item in enumerate(raw):
        cause = parse_cause(item, f"{FILE} cause {index + 1}")
        if cause.id in out:
            raise VocabularyError(f"{FILE}: cause {cause.id} is listed twice")
        for entry in cause.entries:
            if entry in owner:
                raise VocabularyError(f"{FILE}: entry {entry} is under {owner[entry]} and "
                                      f"{cause.id}; an entry has one first cause")
            owner[entry] = cause.id
        out[cause.id] = cause
    return out


@lru_cache(maxsize=1)
def entry_causes() -> dict[str, str]:
    """Entry id -> the vocabulary id of its first cause."""
    return {entry: cause.id for cause in load_vocabulary().values() for entry in cause.entries}
