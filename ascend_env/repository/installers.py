"""The installers install ships to hosts, found in a fetched repository and checked again.

fetch verified each archive and recorded the sha256 of every member it unpacked (repo.json);
an installer changed since (by accident or on purpose) would otherwise be copied to every
host and run as root. So each installer's bytes are hashed again here, before ansible-playbook
starts, and the digest travels with it so the host checks its copy before running it (like
apt, which checks every file it unpacks against signed digests).
"""

from __future__ import annotations

import fnmatch
import shlex
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ascend_env.core.errors import AscendEnvError
from ascend_env.repository.repo_folder import MANIFEST, kind_of, read_manifest, sha256_of
from ascend_env.spec.plan import Plan, PlanItem

# CANN items of the plan, by the component tag that installs them.
CANN_KINDS = ("toolkit", "ops", "nnal", "nnae", "nnrt")
FRAMEWORKS = ("torch", "torch_npu", "mindspore")


class RepoError(AscendEnvError):
    """The repository lacks a file the plan needs, or a file fails its digest."""

    exit_code = 1


@dataclass(frozen=True)
class Installer:
    """One verified installer: where it is in the repository and the digest it must keep."""

    path: Path
    sha256: str


def item_component(item: PlanItem) -> str:
    """The install component (driver, firmware, cann, python) a plan item belongs to."""
    if item.component in CANN_KINDS:
        return "cann"
    if item.component in FRAMEWORKS:
        return "python"
    return item.component


def _member(repo: Path, item: PlanItem, files: dict[str, object]
            ) -> tuple[Path, str] | str | None:
    """The unpacked installer of `item` and its recorded digest; a problem as text; or None
    when the archive holds no such member."""
    assert item.archive is not None
    entry = files.get(item.archive)
    members = entry.get("members") if isinstance(entry, dict) else None
    if not isinstance(members, dict):
        return (f"{item.archive}: {repo / MANIFEST} records no digests of its unpacked "
                "files (fetched by an older ascend-env?); run fetch again")
    folder = repo / item.archive.removesuffix(".zip")
    # The plan may name the member by a pattern (the firmware's version is the bundle's own).
    for name, value in sorted(members.items()):
        if fnmatch.fnmatchcase(PurePosixPath(name).name, item.file) and isinstance(value, dict):
            return folder / name, str(value.get("sha256"))
    return None


def _locate(repo: Path, item: PlanItem, files: dict[str, object]
            ) -> tuple[Path, str] | str | None:
    if item.archive:
        return _member(repo, item, files)
    if item.sha256 is None:
        return f"{item.file}: no sha256 is known for it; it cannot be verified"
    return repo / item.file, item.sha256


def verify_repo(plan: Plan, repo: Path, components: set[str]) -> dict[str, Installer]:
    """Every installer the selected components need, found and verified, by plan component.

    Raises RepoError naming every missing or altered file (with both digests) before any
    host is touched; a repository folder or repo.json that cannot be read is a
    RepoFolderError (exit 2).
    """
    if not repo.is_dir():
        raise RepoError(f"repository {repo} does not exist; run "
                        f"`ascend-env fetch --repo {shlex.quote(str(repo))}` with the same spec "
                        "first")
    files: dict[str, object] = read_manifest(repo)["files"]
    found: dict[str, Installer] = {}
    problems: list[str] = []
    archives: dict[str, bool] = {}
    for item in plan.items:
        if item_component(item) not in components or item.component in FRAMEWORKS:
            continue  # frameworks are the wheels' (python_stack checks them)
        download = repo / item.download
        if kind_of(download) is None:
            problems.append(f"{item.file} ({item.component}) is not in {repo}")
            continue
        if item.download not in archives:
            archives[item.download] = (item.sha256 is not None
                                       and kind_of(download) == "a regular file"
                                       and sha256_of(download) == item.sha256)
        if not archives[item.download]:
            problems.append(f"{item.download} in {repo} does not match its sha256 "
                            f"{item.sha256 or '(unknown)'}; run fetch again")
            continue
        located = _locate(repo, item, files)
        if located is None:
            problems.append(f"{item.file} ({item.component}) is not in {item.download}")
            continue
        if isinstance(located, str):
            problems.append(located)
            continue
        path, expected = located
        kind = kind_of(path)
        if kind != "a regular file":
            problems.append(f"{path} is {kind or 'missing'}, not the regular file fetch "
                            "unpacked; run fetch again")
            continue
        actual = sha256_of(path)
        if actual != expected:
            problems.append(f"{path}: sha256 mismatch: expected {expected} (recorded by "
                            f"fetch), got {actual}; it was changed after fetch, run fetch "
                            "again")
            continue
        found[item.component] = Installer(path=path, sha256=actual)
    if problems:
        raise RepoError("the repository is not ready, nothing was changed on any host:\n  "
                        + "\n  ".join(problems))
    return found
