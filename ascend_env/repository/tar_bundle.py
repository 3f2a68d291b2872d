"""One reproducible tar of many repository files, made once in a cache: a host gets one file in
one copy, and an unchanged set is the same file, which Ansible's copy finds "ok"."""

from __future__ import annotations

import os
import tarfile
from collections.abc import Sequence
from pathlib import Path


def cached_tar(out: Path, members: Sequence[tuple[str, Path]], *, keep: int) -> Path:
    """`out`, made from `members` (name in the tar, file) unless it is there already; of the
    tars of its kind beside it (`<kind>-<key>.tar`), the `keep` most recently used stay."""
    if out.is_file():
        os.utime(out)  # recently used: kept by the pruning below
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.parent / f".{out.name}.{os.getpid()}"
    with tarfile.open(partial, "w", format=tarfile.PAX_FORMAT) as archive:
        for name, path in members:
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = path.stat().st_size, 0o644, 0
            with path.open("rb") as handle:
                archive.addfile(info, handle)
    partial.replace(out)
    kind = out.name.rsplit("-", 1)[0]
    older = sorted(out.parent.glob(f"{kind}-*.tar"), key=lambda p: p.stat().st_mtime_ns,
                   reverse=True)[keep:]
    for stale in older:
        stale.unlink(missing_ok=True)
    return out
