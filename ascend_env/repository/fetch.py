"""`ascend-env fetch`: a local repository of verified vendor files for one plan.

A file enters the repository only after its sha256 matched, by an atomic rename; downloads
resume from a partial file with an HTTP Range request (repository/http.py); zips are unpacked
beside themselves, all or nothing, only when no member is refused (repository/archive.py), and
every unpacked member's sha256 is recorded so that install can check the installer it ships.
The repository is flat: `<dest>/<file>`, unpacked zips in `<dest>/<zip name without .zip>/`,
partial downloads in `<dest>/.partial/` (never read as repository content), and
`<dest>/repo.json` listing what was verified (repository/repo_folder.py).
"""

from __future__ import annotations

import shutil
import urllib.parse
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from ascend_env.core.urls import URLError, check_url
from ascend_env.repository.archive import ArchiveError, Member, matches, unpack
from ascend_env.repository.http import FetchError, Interrupted, download_once
from ascend_env.repository.os_result import OsPackages
from ascend_env.repository.python_fetch import PythonWheels, python_wheels
from ascend_env.repository.repo_folder import (
    PARTIAL,
    REPO_SCHEMA,
    RepoFolderError,
    ensure_dest,
    kind_of,
    partial_dir,
    read_manifest,
    sha256_of,
    staging_file,
    write_manifest,
)
from ascend_env.spec.envspec import EnvSpec
from ascend_env.spec.plan import Plan, PlanItem

ATTEMPTS = 3

FileStatus = Literal["present", "downloaded", "imported", "failed", "missing"]


class MemberDigest(BaseModel):
    """One regular file unpacked from an archive whose digest had matched."""

    sha256: str
    size: int


class FetchedFile(BaseModel):
    """What happened to one file of the plan."""

    file: str = Field(description="the downloaded file name (archive or installer/wheel)")
    component: str
    status: FileStatus
    sha256: str | None = None
    size: int | None = None
    message: str = ""
    unpacked: list[str] = Field(default_factory=list)
    members: dict[str, MemberDigest] = Field(
        default_factory=dict, description="each unpacked file's sha256 and size, by its path "
                                          "inside the unpack folder")


class FetchResult(BaseModel):
    """The outcome of one fetch: every file and whether the repository is complete."""

    schema_: str = Field(REPO_SCHEMA, alias="schema")
    dest: str
    spec: str
    digest: str
    complete: bool
    files: list[FetchedFile]
    python: PythonWheels | None = Field(
        None, description="the framework wheels' closure (specs with frameworks)")
    os_packages: OsPackages | None = Field(
        None, description="the OS packages of the spec's OS key (with --os-mirror)")

    model_config = {"populate_by_name": True}


@dataclass
class Progress:
    """Callbacks for progress display; the CLI plugs rich in, tests leave them silent."""

    start: Callable[[str, int | None], None] = lambda name, total: None
    advance: Callable[[str, int], None] = lambda name, size: None
    finish: Callable[[str], None] = lambda name: None


@dataclass(frozen=True)
class Source:
    """Where a file comes from: a URL and/or a local directory of files a user already has."""

    mirror: str | None = None
    from_dir: Path | None = None


@dataclass
class _Job:
    item: PlanItem
    name: str
    url: str | None
    result: FetchedFile = field(init=False)


def mirrored(url: str, mirror: str) -> str:
    """The same path under a site mirror (`https://mirror/CANN/CANN%208.5.0/<file>`)."""
    path = urllib.parse.urlsplit(url).path
    return mirror.rstrip("/") + path


def fetch(plan: Plan, dest: Path, source: Source, *, workers: int = 4,
          progress: Progress | None = None) -> FetchResult:
    """Bring every file of the plan into `dest`, verified; never raises for one bad file."""
    progress = progress or Progress()
    if source.mirror is not None:
        check_url(source.mirror, "--mirror")
    # The folder's own shape is checked once, before anything is written in it.
    ensure_dest(dest)
    _check_place(dest, PARTIAL, "a directory")
    manifest = read_manifest(dest)["files"]
    jobs: dict[str, _Job] = {}
    for item in plan.items:
        # Driver and firmware come in one HDK bundle: download it once.
        if item.download in jobs:
            continue
        url = item.url
        if url and source.mirror:
            url = mirrored(url, source.mirror)
        jobs[item.download] = _Job(item, item.download, url)
    for name in jobs:
        _check_place(dest, name, "a regular file")
        if name.endswith(".zip"):
            _check_place(dest, name.removesuffix(".zip"), "a directory")
    partial_dir(dest)
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        results = list(pool.map(lambda job: _bring(job, dest, source, progress, manifest),
                                jobs.values()))
    complete = all(r.status in ("present", "downloaded", "imported") for r in results)
    result = FetchResult(dest=str(dest), spec=plan.spec, digest=plan.digest, complete=complete,
                         files=results)
    write_manifest(dest, {r.file: _entry(r) for r in results
                          if r.status in ("present", "downloaded", "imported")})
    return result


def _check_place(dest: Path, name: str, wanted: str) -> None:
    """`dest/name` is absent or of the kind fetch writes there; a link would make fetch write
    (or unpack) wherever it points."""
    found = kind_of(dest / name)
    if found not in (None, wanted):
        raise RepoFolderError(f"{dest / name} is {found}, not {wanted}; remove it and rerun "
                              "fetch")


def _bring(job: _Job, dest: Path, source: Source, progress: Progress,
           manifest: dict[str, Any]) -> FetchedFile:
    item, name = job.item, job.name
    target = dest / name
    verified: Path | None = None
    try:
        found = kind_of(target)
        if found not in (None, "a regular file"):
            raise FetchError(f"{target} is {found}, not a regular file; remove it and rerun "
                             "fetch")
        if found is not None and _verified(target, item):
            status: FileStatus = "present"
            verified = target
        elif source.from_dir is not None and (source.from_dir / name).is_file():
            verified = _import(source.from_dir / name, dest, item)
            status = "imported"
        elif job.url:
            verified = _download(job.url, dest, item, progress)
            status = "downloaded"
        else:
            where = f" or in {source.from_dir}" if source.from_dir else ""
            return FetchedFile(file=name, component=item.component, status="missing",
                               message=f"{name} has no download URL in the catalogue{where}; "
                                       "add it with --catalogue or --from-dir")
        members = (_unpacked(verified, dest, name, item, manifest.get(name))
                   if name.endswith(".zip") else {})
        if verified != target:
            verified.replace(target)
    except ArchiveError as error:
        # A refused archive does not stay in the repository, under its name or half-way.
        if verified is not None:
            verified.unlink(missing_ok=True)
        return FetchedFile(file=name, component=item.component, status="failed",
                           message=f"{error}; the archive was removed from the repository")
    except (FetchError, URLError) as error:
        return FetchedFile(file=name, component=item.component, status="failed",
                           message=str(error))
    return FetchedFile(file=name, component=item.component, status=status,
                       sha256=item.sha256, size=target.stat().st_size,
                       unpacked=sorted(members), members=members)


def _entry(result: FetchedFile) -> dict[str, Any]:
    return {"sha256": result.sha256, "size": result.size, "component": result.component,
            "unpacked": result.unpacked,
            "members": {name: member.model_dump() for name, member in result.members.items()}}


def _verified(path: Path, item: PlanItem) -> bool:
    return item.sha256 is not None and sha256_of(path) == item.sha256


def _require_digest(item: PlanItem) -> str:
    if item.sha256 is None:
        raise FetchError(f"{item.download}: no sha256 is known, so it cannot be verified; "
                         "supply a catalogue overlay with its digest (--catalogue)")
    return item.sha256


def _mismatch(name: str, expected: str, actual: str) -> FetchError:
    return FetchError(f"{name}: sha256 mismatch: expected {expected}, got {actual}; "
                      "the file was not added to the repository")


def _import(found: Path, dest: Path, item: PlanItem) -> Path:
    """A verified copy of `found` in .partial/; the copy is what is hashed, so a file that
    changes while it is read cannot slip in."""
    expected = _require_digest(item)
    staging = staging_file(dest, item.download)
    try:
        shutil.copyfile(found, staging)
    except OSError as exc:
        staging.unlink(missing_ok=True)
        raise FetchError(f"{found}: cannot read it: {exc.strerror}") from exc
    actual = sha256_of(staging)
    if actual != expected:
        staging.unlink()
        raise _mismatch(found.name, expected, actual)
    return staging


def _download(url: str, dest: Path, item: PlanItem, progress: Progress) -> Path:
    """The verified download in .partial/, ready for its rename into the repository."""
    expected = _require_digest(item)
    name = item.download
    partial = partial_dir(dest) / (name + ".part")
    found = kind_of(partial)
    if found not in (None, "a regular file"):
        raise FetchError(f"{partial} is {found}, not a regular file; remove it and rerun fetch")
    last_error = ""
    for _attempt in range(ATTEMPTS):
        try:
            download_once(url, partial, name, start=progress.start, advance=progress.advance)
            break
        except Interrupted as exc:
            last_error = str(exc)  # keep the partial file: the next attempt resumes it
        finally:
            progress.finish(name)
    else:
        raise FetchError(f"{name}: download from {url} failed {ATTEMPTS} times "
                         f"({last_error}); rerun fetch to resume")
    actual = sha256_of(partial)
    if actual != expected:
        partial.unlink()
        raise _mismatch(name, expected, actual)
    return partial


def _unpacked(archive: Path, dest: Path, name: str, item: PlanItem,
              recorded: dict[str, Any] | None) -> dict[str, MemberDigest]:
    """The archive's members in `<dest>/<stem>/`: kept when they match what an earlier fetch
    of the same archive recorded, else unpacked again (replacing an altered folder)."""
    folder = dest / name.removesuffix(".zip")
    members = recorded.get("members") if recorded else None
    if (recorded is not None and recorded.get("sha256") == item.sha256
            and isinstance(members, dict) and kind_of(folder) == "a directory"):
        try:
            known = {path: MemberDigest.model_validate(value) for path, value in members.items()}
        except ValueError:
            known = {}
        if known and matches(folder, {path: m.sha256 for path, m in known.items()}):
            return known
    unpacked: dict[str, Member] = unpack(archive, folder, name)
    return {path: MemberDigest(sha256=m.sha256, size=m.size) for path, m in unpacked.items()}


def locate(dest: Path, item: PlanItem) -> Path | None:
    """The installer or wheel of a plan item inside a fetched repository, if present."""
    direct = dest / item.file
    if direct.is_file():
        return direct
    if item.archive:
        folder = dest / item.archive.removesuffix(".zip")
        found = sorted(folder.rglob(item.file)) if folder.is_dir() else []
        if found:
            return found[0]
    return None


def fetch_python(result: FetchResult, spec: EnvSpec, *, download: bool = False,
                 index_url: str | None = None, mirror: str | None = None) -> FetchResult:
    """The fetch result with the framework wheels' share (python_fetch.py); a gap makes it
    incomplete only when it was asked to be filled."""
    python, recorded = python_wheels(Path(result.dest), spec, download=download,
                                     index_url=index_url, mirror=mirror)
    if python is None:
        return result
    return result.model_copy(update={
        "python": python,
        "complete": result.complete and (python.complete or not download) and recorded})
