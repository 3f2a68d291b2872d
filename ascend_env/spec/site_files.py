"""The YAML files a site drops beside the shipped data (matrix.d, os.d): which apply, in which
order, and what identifies their content for a cache."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ascend_env.core.errors import UsageError

MAX_FILES = 256  # a site keeps a handful; a directory of thousands is a mistake


def site_files(places: Sequence[Path], *, named: bool, what: str) -> list[Path]:
    """Each directory's *.yaml sorted by name, and each file, in the order of `places`.

    A missing place the operator `named` is kept, so that reading it says so; the default
    place may be missing."""
    files: list[Path] = []
    for place in places:
        if place.is_dir():
            files += sorted(p for p in place.iterdir()
                            if p.suffix in (".yaml", ".yml") and not p.name.startswith("."))
        elif place.exists() or named:
            files.append(place)
    if len(files) > MAX_FILES:
        raise UsageError(f"{len(files)} {what} under {', '.join(map(str, places))}; at most "
                         f"{MAX_FILES} are read")
    return files


def content_key(paths: Sequence[Path]) -> tuple[tuple[str, int, int], ...]:
    """What identifies these files' current content (path, mtime, size) for caching."""
    key = []
    for path in paths:
        try:
            info = path.stat()
        except OSError:
            key.append((str(path), -1, -1))
            continue
        key.append((str(path), info.st_mtime_ns, info.st_size))
    return tuple(key)
