"""Origins: which package's own code raises a message
(ascend_env/data/signatures/origins/messages.tsv.gz, written by scripts/message_origins.py
from pinned sources: vLLM, vLLM Ascend, torch_npu, MindSpore, CANN's operator repositories,
HCCL, the driver, Triton for Ascend).

An error record that no entry and no rule explains may still print a message a package of
the stack raises: `Free memory on device (...) on startup is less than desired GPU memory
utilization (...)` is vLLM's, `hidden in should be smaller than hidden out` a check of vLLM
Ascend's kernels. Its words may name no layer at all; the message's origin does. Like an area
(areas.py) an origin concludes no cause: it names the layer, the package and the line of its
source that raises the message, and the layer's checks, and the record stays listed as not
known (exit 1). It is asked after the words of the record's message lines and before the
launcher's prefix (`place`).

A message is its template: the literal parts of the string the source passes, with a gap for
each substituted value. A line is screened for every template part of 24 characters or more
(one Aho-Corasick pass, pyahocorasick); a template found is scored by how many of its
characters the line holds in order, and the best one wins. Where equally good templates of two
families match, the line's origin is ambiguous and none is given. Messages PyTorch raises too
are not in the table (the script says why).
"""

from __future__ import annotations

import gzip
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import ahocorasick  # type: ignore[import-not-found]

from ascend_env.explain.areas import Area, area_of
from ascend_env.explain.signatures import Signature, SignatureError
from ascend_env.explain.structure import Shape

FILE = "signatures/origins/messages.tsv.gz"
ORIGIN = "origin."  # the prefix of an origin's answer id
# The parts a line is screened by: long enough to be a sentence of the package's own. Shorter
# ones are often Python's or a generic phrase (`No module named '`, which vLLM re-raises;
# `Failed to compile`): with them on train, such lines took the wrong family.
MIN_ANCHOR = 24


@dataclass(frozen=True)
class Source:
    package: str
    url: str
    pin: str  # the git commit, or the PyPI file's sha256
    subdir: str

    def link(self, where: str) -> str:
        """Where the message is raised: a line of the repository at its commit, or a file of
        the package with the package's digest."""
        path, _, line = where.rpartition(":")
        inner = f"{self.subdir}/{path}" if self.subdir else path
        if self.url.startswith("https://github.com/"):
            return f"{self.url}/blob/{self.pin}/{inner}#L{line}"
        return f"{inner}:{line} in {self.url} (sha256 {self.pin})"


@dataclass(frozen=True)
class Template:
    family: str
    source: str  # a Source's ident
    where: str  # path:line under the source's subdir
    parts: tuple[str, ...]


class Origins:
    """The message templates, screened by their long parts."""

    def __init__(self, sources: dict[str, Source], templates: Sequence[Template]) -> None:
        self.sources = sources
        self.templates = tuple(templates)
        owners: dict[str, list[int]] = {}
        for index, template in enumerate(self.templates):
            for part in template.parts:
                if len(part) >= MIN_ANCHOR and " " in part:
                    owners.setdefault(part, []).append(index)
        self._automaton: Any = None
        if owners:
            self._automaton = ahocorasick.Automaton()
            for part, indexes in owners.items():
                self._automaton.add_word(part, tuple(indexes))
            self._automaton.make_automaton()

    def of(self, line: str) -> Template | None:
        """The template the line prints, or None (none, or two families' equally good)."""
        if self._automaton is None:
            return None
        candidates: set[int] = set()
        for _, indexes in self._automaton.iter(line):
            candidates.update(indexes)
        best, score, families = None, 0, set()
        for index in sorted(candidates):
            template = self.templates[index]
            found = _held(template.parts, line)
            if found > score:
                best, score, families = template, found, {template.family}
            elif found == score:
                families.add(template.family)
        return best if len(families) == 1 else None

    def signature(self, template: Template, area: Area, said: str) -> Signature:
        """The origin as the answer for one record: the package, its line, the layer."""
        source = self.sources[template.source]
        link = source.link(template.where)
        return area.placed(f"{ORIGIN}{template.family}", said,
                           f"its message is one {source.package} raises ({link}), which "
                           f"places it", f"an error {source.package} raises, in {area.what}",
                           link)


def _held(parts: tuple[str, ...], line: str) -> int:
    """How many of the template's characters the line holds, its parts read in order."""
    at = held = 0
    for part in parts:
        found = line.find(part, at)
        if found >= 0:
            held += len(part)
            at = found + len(part)
    return held


def place(areas: Sequence[Area], shape: Shape, origins: Origins | None
          ) -> tuple[Signature, int] | None:
    """Where a record nothing explains belongs, and the index of the line that says so: the
    layer its message lines name (areas.py), else the package whose code raises its message,
    else the layer its launcher's prefix names. The words come first: a message is often
    raised by the package that reports an error (a wrapper), where the words name the layer
    that failed below it (`ACL stream synchronize failed, error code:507035`, raised by
    torch_npu, is the runtime's)."""
    named = area_of(areas, shape, launcher=False)
    if named is None and origins is not None:
        found = origin_of(origins, areas, shape)
        if found is not None:
            return found
    named = named or area_of(areas, shape, message=False)
    if named is None:
        return None
    area, index, said = named
    return area.signature(said), index


def origin_of(origins: Origins, areas: Sequence[Area], shape: Shape
              ) -> tuple[Signature, int] | None:
    """The record's origin and the index of the line that placed it: the reason line first,
    then the others in order, each without the launcher's prefix."""
    by_family = {area.family: area for area in reversed(areas)}
    for index in shape.reading_order():
        line = shape.lines[index] if index < len(shape.lines) else ""
        template = origins.of(line) if line else None
        if template is not None and template.family in by_family:
            said = max((part for part in template.parts if part in line), key=len)
            return origins.signature(template, by_family[template.family], said), index
    return None


@lru_cache(maxsize=1)
def load_origins() -> Origins:
    """The shipped table (read once per process, on the first record that needs it)."""
    return read_table(resources.files("ascend_env").joinpath("data").joinpath(FILE).read_bytes())


def read_table(blob: bytes) -> Origins:
    """A table as scripts/message_origins.py writes it (gzip'd lines of tab-separated fields:
    `# source` lines, then one template per line)."""
    sources: dict[str, Source] = {}
    templates: list[Template] = []
    for number, row in enumerate(gzip.decompress(blob).decode("utf-8").splitlines(), 1):
        fields = row.split("\t")
        if row.startswith("# source\t") and len(fields) == 6:
            sources[fields[1]] = Source(*fields[2:6])
        elif not row.startswith("#"):
            if len(fields) < 4 or fields[1] not in sources:
                raise SignatureError(f"{FILE} line {number}: family, source, path:line and "
                                     "the message's parts, of a source listed above")
            templates.append(Template(fields[0], fields[1], fields[2], tuple(fields[3:])))
    return Origins(sources, templates)
