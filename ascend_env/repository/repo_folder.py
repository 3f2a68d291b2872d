"""The repository folder made by `fetch`: its working folders and its manifest, repo.json.

Everything fetch writes goes through these helpers, so a `.partial` folder, an unpack folder or
a repo.json that an attacker or an accident turned into a symlink, a file or a FIFO is an error
before anything is written through it (a symlinked `.partial` would otherwise make fetch write
wherever it points).

repo.json: `{"schema": ..., "files": {<download>: {"sha256", "size", "component", "unpacked",
"members": {<member>: {"sha256", "size"}}}}, ...}`. `members` are the digests of what was
unpacked from an archive whose own digest had matched: install checks every installer against
them. Top-level keys this module does not know (the wheels' section) are kept as they were.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

from ascend_env.core.errors import AscendEnvError

REPO_SCHEMA = "ascend-env/repo/v1"
MANIFEST = "repo.json"
PARTIAL = ".partial"
# repo.json lists a few hundred files at most; anything far larger is not ours.
MANIFEST_LIMIT = 16 << 20


def sha256_of(path: Path) -> str:
    """The sha256 of a file, streamed."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class RepoFolderError(AscendEnvError):
    """The repository folder (or its manifest) is not in a shape fetch or install can use:
    exit 2, could not run."""


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symlink"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISREG(mode):
        return "a regular file"
    return "a special file"


def kind_of(path: Path) -> str | None:
    """What `path` is without following a link ('a symlink', 'a FIFO', ...), None if absent."""
    try:
        return _kind(os.lstat(path).st_mode)
    except FileNotFoundError:
        return None


def ensure_dest(dest: Path) -> None:
    """DEST exists as a directory (it may itself be a link the operator made to one)."""
    if dest.exists() and not dest.is_dir():
        raise RepoFolderError(f"repository {dest} is {kind_of(dest)}, not a directory")
    try:
        dest.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RepoFolderError(f"cannot create repository {dest}: {exc.strerror}") from exc


def real_dir(path: Path, what: str) -> Path:
    """`path` as a real directory (made if absent); a link, file or FIFO there is an error."""
    found = kind_of(path)
    if found is None:
        with contextlib.suppress(FileExistsError):  # another fetch worker made it first
            path.mkdir()
        found = kind_of(path)
    if found != "a directory":
        raise RepoFolderError(f"{path} ({what}) is {found}, not a directory; remove it and "
                              "rerun fetch")
    return path


def partial_dir(dest: Path) -> Path:
    """DEST/.partial: where downloads and unpacking happen before their atomic rename."""
    return real_dir(dest / PARTIAL, "fetch's working folder")


def staging_file(dest: Path, name: str) -> Path:
    """A new, empty temporary file in DEST/.partial, on the repository's file system."""
    handle, path = tempfile.mkstemp(dir=partial_dir(dest), prefix=name + ".")
    os.close(handle)
    return Path(path)


def read_manifest(dest: Path) -> dict[str, Any]:
    """repo.json as written by fetch; an empty manifest when there is none yet."""
    path = dest / MANIFEST
    found = kind_of(path)
    if found is None:
        return {"schema": REPO_SCHEMA, "files": {}}
    if found != "a regular file":
        raise RepoFolderError(f"{path} is {found}, not a regular file; remove it and rerun "
                              "fetch")
    size = path.stat().st_size
    if size > MANIFEST_LIMIT:
        raise RepoFolderError(f"{path} is {size} bytes, more than a manifest can be "
                              f"({MANIFEST_LIMIT}); remove it and rerun fetch")
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise RepoFolderError(f"{path} is not valid JSON ({exc}); remove it and rerun "
                              "fetch") from exc
    if not isinstance(document, dict) or not isinstance(document.get("files"), dict):
        raise RepoFolderError(f"{path} has no 'files' mapping; remove it and rerun fetch")
    if document.get("schema") != REPO_SCHEMA:
        raise RepoFolderError(f"{path}: schema {document.get('schema')!r} is not "
                              f"{REPO_SCHEMA!r}; remove it and rerun fetch")
    for name, entry in document["files"].items():
        if not isinstance(entry, dict):
            raise RepoFolderError(f"{path}: the entry of {name!r} is not a mapping; remove "
                                  "it and rerun fetch")
    return document


def write_manifest(dest: Path, entries: dict[str, dict[str, Any]], *,
                   section: str = "files") -> None:
    """Merge these entries into one section of repo.json (`files`: the vendor files; fetch's
    Python half keeps `wheels`), atomically; the other sections are kept."""
    document = read_manifest(dest)
    document["schema"] = REPO_SCHEMA
    found = document.get(section)
    document[section] = {**(found if isinstance(found, dict) else {}), **entries}
    staging = staging_file(dest, MANIFEST)
    staging.write_text(json.dumps(document, indent=2, sort_keys=True), encoding="utf-8")
    if kind_of(dest / MANIFEST) not in (None, "a regular file"):
        staging.unlink()
        raise RepoFolderError(f"{dest / MANIFEST} is {kind_of(dest / MANIFEST)}, not a "
                              "regular file; remove it and rerun fetch")
    staging.replace(dest / MANIFEST)


def member_digests(dest: Path, download: str) -> dict[str, str] | None:
    """The recorded sha256 of every member unpacked from `download`, None if not recorded."""
    entry = read_manifest(dest)["files"].get(download)
    members = entry.get("members") if isinstance(entry, dict) else None
    if not isinstance(members, dict):
        return None
    return {name: str(value.get("sha256")) for name, value in members.items()
            if isinstance(value, dict)}
