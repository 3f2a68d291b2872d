"""Areas: which layer of the stack an error record comes from, where no entry and no rule says
more (ascend_env/data/signatures/areas/areas.yaml).

An area is read from the words the record names, the reason line first. It concludes no cause:
its match is a family match (`area.<family>`), an echo in the chain, so the log's first cause
stays "not found", its error lines stay listed as not known and explain exits 1. What it adds
is where to look: the layer, and the doctor checks that look at it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from ascend_env.core.resources import load_yaml
from ascend_env.explain.families import CANN_SOURCE
from ascend_env.explain.signatures import (
    FALLBACK_PRIORITY,
    Cause,
    Fix,
    Signature,
    SignatureError,
)
from ascend_env.explain.structure import Shape

FILE = "signatures/areas/areas.yaml"
AREA = "area."  # the prefix of an area's answer id
_FIELDS = {"family", "what", "words", "checks"}


@dataclass(frozen=True)
class Area:
    family: str
    what: str
    words: re.Pattern[str]
    checks: tuple[str, ...]

    def signature(self, said: str) -> Signature:
        """The area as the answer for one record: where to look, no cause."""
        return self.placed(f"{AREA}{self.family}", said, f"its words ('{said}') place it",
                           f"an error of {self.what}", CANN_SOURCE)

    def placed(self, ident: str, said: str, why: str, cause: str, source: str) -> Signature:
        """A record placed in this layer (by its words, or by its message's origin:
        origins.py) as the answer for it: a family match, the layer's checks, no cause."""
        meaning = (f"No entry or rule knows this record; {why} in {self.what}. Look for the "
                   f"first error above it in the whole log (all ranks), and run the checks "
                   f"of this layer.")
        return Signature(
            id=ident, family=self.family, pattern=re.compile(re.escape(said)),
            severity="error", priority=FALLBACK_PRIORITY, meaning=meaning,
            causes=(Cause(text=f"not known exactly: {cause}", checks=self.checks),),
            fix=Fix(id=None, command="ascend-env doctor --only " + ",".join(self.checks)),
            source=source, samples=(said,), role="family")


@lru_cache(maxsize=1)
def load_areas() -> tuple[Area, ...]:
    """The shipped areas, in precedence order."""
    raw = load_yaml(FILE)
    if not isinstance(raw, list) or not raw:
        raise SignatureError(f"{FILE}: the file must be a list of areas")
    areas = []
    for index, item in enumerate(raw):
        where = f"{FILE} area {index + 1}"
        if not isinstance(item, dict) or set(item) != _FIELDS:
            raise SignatureError(f"{where}: an area is a mapping of {sorted(_FIELDS)}")
        checks = item["checks"]
        if not isinstance(checks, list) or not all(isinstance(c, str) for c in checks):
            raise SignatureError(f"{where}: `checks` is a list of doctor check ids")
        try:
            words = re.compile(str(item["words"]))
        except re.error as exc:
            raise SignatureError(f"{where}: words do not compile: {exc}") from exc
        areas.append(Area(str(item["family"]), str(item["what"]), words, tuple(checks)))
    return tuple(areas)


def area_of(areas: Sequence[Area], shape: Shape, *, message: bool = True,
            launcher: bool = True) -> tuple[Area, int, str] | None:
    """The record's area, the index of the line that placed it and the words read there: the
    reason line is tried first, then the others in order, each without the launcher's prefix
    (`message`); only where no message names an area does the prefix (`launcher`:
    `(EngineCore_DP0 pid=1)`, `[rank3]:`) say which program wrote the record: most errors a
    serving process logs are raised below it, in torch_npu, CANN or the runtime."""
    order = shape.reading_order()
    prefixed = shape.raw not in ([], shape.lines)
    passes = [*([shape.lines] if message else []), *([shape.raw] if launcher and prefixed else [])]
    for lines in passes:
        for index in order:
            line = lines[index] if index < len(lines) else ""
            for area in areas:
                found = area.words.search(line)
                if found is not None:
                    return area, index, found.group(0)
    return None
