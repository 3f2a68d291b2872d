"""Site overlays of the matrix: releases a site adds without a new ascend-env.

A vendor ships a CANN, HDK or torch_npu (or a chip family) that this ascend-env predates; the
operator writes what the vendor published about it in a YAML file of the matrix's own shape,
and install, plan, `spec validate` and doctor read it beside the shipped data. Files are in
`/etc/ascend-env/matrix.d/*.yaml`, or where `ASCEND_ENV_MATRIX_D` says (directories or
files, separated by `:`; empty = none). Each is read like any user file (bounded, regular
files only, YAML limits) and the merged matrix is validated by the same models as the
shipped one, so a row without a source, a source label that is not defined or a version in
no vendor form is refused with the file's name.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

from ascend_env.core.errors import UsageError
from ascend_env.core.inputs import load_yaml_bounded, read_text, yaml_problem
from ascend_env.core.versions import same_release
from ascend_env.spec.site_files import content_key, site_files

OVERLAY_SCHEMA = "ascend-env/matrix-overlay/v1"
ENV_VAR = "ASCEND_ENV_MATRIX_D"
DEFAULT_DIR = Path("/etc/ascend-env/matrix.d")

# The lists an overlay may add to, and the fields that make two rows the same row: an
# overlay row with the key of a shipped row replaces it (a site corrects a pairing).
ROW_KEYS: dict[str, tuple[str, ...]] = {
    "cann": ("cann",),
    "hdk_files": ("release",),
    "hdk_releases": ("release",),
    "cann_builds": ("version",),
    "torch": ("cann", "torch_npu"),
    "mindspore": ("cann", "mindspore"),
    "torch_python": (),
    "images": ("image", "tag"),
    "unpaired": ("framework", "version"),
}


# A chip family the vendor released after this ascend-env: an entry of chips.yaml's shape under
# its name (spec/chips.py reads it); one of a shipped name replaces that entry.
CHIPS_KEY = "chips"


def overlay_paths() -> list[Path]:
    """The overlay files in the order they apply (each directory's *.yaml sorted by name)."""
    setting = os.environ.get(ENV_VAR)
    places = [DEFAULT_DIR] if setting is None else [Path(p) for p in setting.split(":") if p]
    return site_files(places, named=setting is not None, what="matrix overlay files")


def overlay_key() -> tuple[tuple[str, int, int], ...]:
    """What identifies the overlays' current content (path, mtime, size) for caching."""
    return content_key(overlay_paths())


def read_overlay(path: Path) -> dict[str, Any]:
    """One overlay file, read within the input bounds and checked for its shape."""
    what = f"matrix overlay {path}"
    try:
        document = load_yaml_bounded(read_text(path, what=what))
    except yaml.YAMLError as exc:  # bad YAML, or past the limits (an alias bomb)
        raise UsageError(f"{what}: {yaml_problem(exc)}") from None
    if not isinstance(document, dict):
        raise UsageError(f"{what}: expected a mapping with schema: {OVERLAY_SCHEMA}")
    if document.get("schema") != OVERLAY_SCHEMA:
        raise UsageError(f"{what}: schema must be {OVERLAY_SCHEMA!r} "
                         f"(found {document.get('schema')!r})")
    unknown = sorted(set(document) - {"schema", "sources", CHIPS_KEY, *ROW_KEYS})
    if unknown:
        raise UsageError(f"{what}: unknown key(s) {', '.join(unknown)}; an overlay may hold "
                         f"sources, {CHIPS_KEY} and {', '.join(ROW_KEYS)}")
    return document


def _same_row(kind: str, a: dict[str, Any], b: dict[str, Any]) -> bool:
    fields = ROW_KEYS[kind]
    return bool(fields) and all(
        same_release(str(a.get(f, "")), str(b.get(f, ""))) for f in fields)


def merge(base: dict[str, Any], overlay: dict[str, Any], origin: Path) -> dict[str, Any]:
    """The matrix document with one overlay applied (the base is not changed)."""
    what = f"matrix overlay {origin}"
    merged = dict(base)
    sources = dict(base.get("sources", {}))
    added = overlay.get("sources") or {}
    if not isinstance(added, dict):
        raise UsageError(f"{what}: sources must map labels to {{title, url}}")
    for label, source in added.items():
        if label in sources:
            raise UsageError(f"{what}: source label {label!r} is already defined "
                             f"({sources[label].get('origin') or 'ascend-env data'}); "
                             "give the site's source a label of its own")
        if not isinstance(source, dict):
            raise UsageError(f"{what}: sources.{label} must be {{title, url}}")
        sources[label] = {**source, "origin": str(origin)}
    merged["sources"] = sources
    for kind in ROW_KEYS:
        rows = overlay.get(kind)
        if rows is None:
            continue
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise UsageError(f"{what}: {kind} must be a list of rows")
        kept = [row for row in base.get(kind, [])
                if not any(_same_row(kind, row, new) for new in rows)]
        merged[kind] = [*kept, *rows]
    return merged


def merge_chips(base: dict[str, Any], overlay: dict[str, Any], origin: Path) -> dict[str, Any]:
    """chips.yaml's document with one overlay's chip families added (the base is not changed)."""
    added = overlay.get(CHIPS_KEY)
    if added is None:
        return base
    if not isinstance(added, dict) or not all(isinstance(v, dict) for v in added.values()):
        raise UsageError(f"matrix overlay {origin}: {CHIPS_KEY} must map chip names to "
                         "entries of chips.yaml's shape")
    return {**base, CHIPS_KEY: {**base.get(CHIPS_KEY, {}),
                                **{str(name): entry for name, entry in added.items()}}}
