"""The sha256 of every wheel in a repository, recorded in repo.json and checked before install.

fetch records the framework wheels it verified in repo.json's `files`; the wheels `fetch
--python-wheels` downloads, and those an operator drops into `REPO/wheels/`, are recorded in
its `wheels` section (path inside the repository -> sha256, size) by the next `fetch`. Install
then re-hashes each wheel it is about to ship: one altered after it was recorded, or never
recorded, stops install before any host is touched, and the python role installs with
`pip install --require-hashes` from the recorded digests, so pip on the host checks them once
more (apt's model: the digest travels with the file).
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ascend_env.core.errors import AscendEnvError
from ascend_env.repository.repo_folder import MANIFEST, read_manifest, sha256_of, write_manifest

SECTION = "wheels"


class WheelDigestError(AscendEnvError):
    """A wheel in the repository that does not match (or lacks) its recorded digest."""

    exit_code = 1


def recorded(repo: Path) -> dict[str, str]:
    """Recorded sha256 by path inside the repository: fetch's verified files and `wheels`."""
    document = read_manifest(repo)
    digests = {name: str(entry["sha256"]) for name, entry in document["files"].items()
               if name.endswith(".whl") and entry.get("sha256")}
    section = document.get(SECTION)
    if isinstance(section, dict):
        digests.update({name: str(entry["sha256"]) for name, entry in section.items()
                        if isinstance(entry, dict) and isinstance(entry.get("sha256"), str)})
    return digests


def record(repo: Path, wheels: Iterable[Path]) -> list[str]:
    """Record the wheels not recorded yet (their digest now is the one install will demand);
    returns a note per wheel whose file no longer matches what was recorded (left as is)."""
    known = recorded(repo)
    notes: list[str] = []
    added: dict[str, dict[str, Any]] = {}
    for wheel in sorted(wheels):
        name = wheel.relative_to(repo).as_posix()
        digest = sha256_of(wheel)
        if name not in known:
            added[name] = {"sha256": digest, "size": wheel.stat().st_size}
        elif known[name] != digest:
            notes.append(_mismatch(repo, name, known[name], digest))
    if added:
        write_manifest(repo, added, section=SECTION)
    return notes


def verify(repo: Path, wheels: Iterable[Path]) -> dict[Path, str]:
    """Each wheel's sha256, checked against the record; raises naming every bad one."""
    known = recorded(repo)
    digests: dict[Path, str] = {}
    problems = []
    for wheel in sorted(wheels):
        name = wheel.relative_to(repo).as_posix()
        digest = sha256_of(wheel)
        if name not in known:
            problems.append(f"{repo / name} is not recorded in {repo / MANIFEST} (sha256 "
                            f"{digest}); if it is the wheel you meant to add, record it with "
                            f"`ascend-env fetch --repo {shlex.quote(str(repo))}` and the same spec")
        elif known[name] != digest:
            problems.append(_mismatch(repo, name, known[name], digest))
        digests[wheel] = digest
    if problems:
        raise WheelDigestError("wheels in the repository do not match repo.json, nothing was "
                               "changed on any host:\n  " + "\n  ".join(problems))
    return digests


def _mismatch(repo: Path, name: str, expected: str, actual: str) -> str:
    return (f"{repo / name}: sha256 {actual}, but repo.json records {expected}; the file was "
            "changed after it was fetched: fetch it again")
