"""The vendor file catalogue: real file names, download URLs and sha256 sums.

The shipped `data/catalogue.json` is ascend-deployer 26.0.0's download manifests, kept in their
original shape (`components.<Component>.<version>.files[]`) so that a newer manifest can replace
it unchanged; this module flattens it into one entry per file.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ascend_env.core.errors import UsageError
from ascend_env.core.inputs import InputError, read_text
from ascend_env.core.resources import data_text
from ascend_env.core.urls import URLError, check_url


class CatalogueError(UsageError):
    """A catalogue (shipped or overlay) that cannot be read or has a bad entry."""


class VendorFile(BaseModel):
    """One downloadable vendor file."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    component: str
    version: str
    filename: str
    sha256: str | None = Field(None, pattern=r"^[0-9a-f]{64}$")
    url: str | None = None
    arch: str = "any"
    kind: str
    chip: str | None = None
    file_version: str | None = None
    python_tag: str | None = None
    distribution: str | None = None

    @field_validator("url")
    @classmethod
    def _checked_url(cls, value: str | None) -> str | None:
        # A typo in an overlay's URL is one message when it is read, not a worker's failure.
        if value is not None:
            try:
                check_url(value, "url")
            except URLError as exc:
                raise ValueError(str(exc)) from exc
        return value


class Catalogue(BaseModel):
    """Every known vendor file, looked up by file name."""

    model_config = ConfigDict(frozen=True)

    source: str
    files: dict[str, VendorFile]

    def get(self, filename: str) -> VendorFile | None:
        """The entry for this exact file name, or None."""
        return self.files.get(filename)

    def merged(self, overlay: Catalogue) -> Catalogue:
        """This catalogue with the overlay's entries added or replacing same-named ones.

        The overlay's entries come first, so where both name a file for the same need (a
        site's own torch wheel beside the shipped one, say), `find` offers the overlay's.
        """
        kept = {name: entry for name, entry in self.files.items() if name not in overlay.files}
        return Catalogue(source=f"{self.source} + {overlay.source}",
                         files={**overlay.files, **kept})

    def find(self, **fields: str | None) -> list[VendorFile]:
        """Entries whose fields equal every given value (e.g. component="NPU", chip="910b")."""
        return [entry for entry in self.files.values()
                if all(getattr(entry, key) == value for key, value in fields.items())]


def parse_catalogue(document: dict[str, Any], source: str) -> Catalogue:
    """Flatten a `components.<Component>.<version>.files[]` document."""
    files: dict[str, VendorFile] = {}
    components = document.get("components")
    if not isinstance(components, dict):
        raise CatalogueError(f"{source}: no 'components' mapping")
    for component, versions in components.items():
        if not isinstance(versions or {}, dict):
            raise CatalogueError(f"{source}: components.{component}: a mapping of versions, "
                                 f"not {type(versions).__name__}")
        for version, body in (versions or {}).items():
            where = f"components.{component}.{version}"
            if not isinstance(body or {}, dict):
                raise CatalogueError(f"{source}: {where}: an object with 'files', not "
                                     f"{type(body).__name__}")
            listed = (body or {}).get("files", [])
            if not isinstance(listed, list):
                raise CatalogueError(f"{source}: {where}.files: a list, not "
                                     f"{type(listed).__name__}")
            for index, raw in enumerate(listed):
                if not isinstance(raw, dict):
                    raise CatalogueError(f"{source}: {where}.files[{index}]: an object, not "
                                         f"{type(raw).__name__}")
                try:
                    entry = VendorFile.model_validate(
                        {**raw, "component": component, "version": version})
                except ValidationError as exc:
                    first = exc.errors()[0]
                    field = ".".join(str(part) for part in first["loc"])
                    raise CatalogueError(f"{source}: {where}.files[{index}].{field}: "
                                         f"{first['msg']}") from exc
                # Pure-Python wheels repeat per interpreter folder with the same digest.
                files.setdefault(entry.filename, entry)
    return Catalogue(source=source, files=files)


@cache
def load_catalogue() -> Catalogue:
    """The shipped catalogue."""
    document = json.loads(data_text("catalogue.json"))
    return parse_catalogue(document, source=str(document.get("source", "catalogue.json")))


def load_overlay(path: Path, *, allow_unverified: frozenset[str] = frozenset()) -> Catalogue:
    """A user's catalogue overlay (same shape as the shipped one).

    An entry without a sha256 could never be verified, so it is refused unless the user
    names that file in `allow_unverified`.
    """
    try:
        text = read_text(path, what="catalogue")
    except InputError as exc:
        raise CatalogueError(str(exc)) from exc
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CatalogueError(f"{path}: not valid JSON: {exc}") from exc
    except RecursionError as exc:  # json nests by recursion: `[[[[...` past the stack's depth
        raise CatalogueError(f"{path}: nested too deeply to be a catalogue") from exc
    if not isinstance(document, dict):
        raise CatalogueError(f"{path}: a catalogue is a JSON object with 'components'")
    overlay = parse_catalogue(document, source=str(path))
    unverified = sorted(name for name, entry in overlay.files.items()
                        if entry.sha256 is None and name not in allow_unverified)
    if unverified:
        raise CatalogueError(
            f"{path}: entries without a sha256 cannot be verified: {', '.join(unverified)}; "
            "add their digests, or accept them explicitly with --allow-unverified NAME")
    return overlay
