"""`ascend-env fetch`: a local repository of verified vendor files for one plan.

A file enters the repository only after its sha256 matched, by an atomic rename; downloads
resume from a partial file with an HTTP Range request; zips are unpacked beside themselves only
when no member could escape its folder. The repository is flat: `<dest>/<file>`, unpacked zips
in `<dest>/<zip name without .zip>/`, partial downloads in `<dest>/.partial/` (never read as
repository content), and `<dest>/repo.json` listing what was verified.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import shutil
import stat
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from ascend_env.core.errors import AscendEnvError
from ascend_env.install.wheelhouse import DownloadError, Target, python_stack, requirements_for
from ascend_env.install.wheelhouse import download as download_wheels
from ascend_env.spec.envspec import EnvSpec
from ascend_env.spec.plan import Plan, PlanItem

REPO_SCHEMA = "ascend-env/repo/v1"
MANIFEST = "repo.json"
CHUNK = 1 << 20
ATTEMPTS = 3

FileStatus = Literal["present", "downloaded", "imported", "failed", "missing"]


class FetchError(AscendEnvError):
    """One vendor file could not be put into the repository."""

    exit_code = 1


class FetchedFile(BaseModel):
    """What happened to one file of the plan."""

    file: str = Field(description="the downloaded file name (archive or installer/wheel)")
    component: str
    status: FileStatus
    sha256: str | None = None
    size: int | None = None
    message: str = ""
    unpacked: list[str] = Field(default_factory=list)


class PythonWheels(BaseModel):
    """How much of the framework venv's dependency closure the repository holds."""

    requirements: list[str]
    wheels: list[str] = Field(description="the repository's wheels that make up the closure")
    missing: list[str] = Field(description="requirements no wheel in the repository satisfies")
    complete: bool
    message: str = Field("", description="pip's error, or the command that fills the gap")


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


def sha256_of(path: Path) -> str:
    """The sha256 of a file, streamed."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def mirrored(url: str, mirror: str) -> str:
    """The same path under a site mirror (`https://mirror/CANN/CANN%208.5.0/<file>`)."""
    path = urllib.parse.urlsplit(url).path
    return mirror.rstrip("/") + path


def fetch(plan: Plan, dest: Path, source: Source, *, workers: int = 4,
          progress: Progress | None = None) -> FetchResult:
    """Bring every file of the plan into `dest`, verified; never raises for one bad file."""
    progress = progress or Progress()
    dest.mkdir(parents=True, exist_ok=True)
    jobs: dict[str, _Job] = {}
    for item in plan.items:
        # Driver and firmware come in one HDK bundle: download it once.
        if item.download in jobs:
            continue
        url = item.url
        if url and source.mirror:
            url = mirrored(url, source.mirror)
        jobs[item.download] = _Job(item, item.download, url)
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        results = list(pool.map(lambda job: _bring(job, dest, source, progress),
                                jobs.values()))
    complete = all(r.status in ("present", "downloaded", "imported") for r in results)
    result = FetchResult(dest=str(dest), spec=plan.spec, digest=plan.digest, complete=complete,
                         files=results)
    _write_manifest(dest, results)
    return result


def fetch_python(result: FetchResult, spec: EnvSpec, *, download: bool = False,
                 index_url: str | None = None) -> FetchResult:
    """Report (and with `download`, first fill with `pip download`) the repository's share of
    the framework venv's closure; a gap makes the result incomplete only when it was asked
    to be filled."""
    dest = Path(result.dest)
    error = ""
    requirements = requirements_for(spec)
    if download and requirements:
        try:
            download_wheels(requirements, Target.of(spec), dest, index_url=index_url)
        except DownloadError as exc:
            error = str(exc)
    stack = python_stack(spec, dest)
    if stack is None:
        return result
    python = PythonWheels(requirements=stack.requirements,
                          wheels=[str(w.relative_to(dest)) for w in stack.wheels],
                          missing=[str(m) for m in stack.missing], complete=stack.offline,
                          message=error or ("" if stack.offline else stack.hint))
    return result.model_copy(update={
        "python": python, "complete": result.complete and (python.complete or not download)})


def _bring(job: _Job, dest: Path, source: Source, progress: Progress) -> FetchedFile:
    item, name = job.item, job.name
    target = dest / name
    try:
        if target.exists() and _verified(target, item):
            status: FileStatus = "present"
        elif source.from_dir is not None and (source.from_dir / name).is_file():
            _import(source.from_dir / name, target, item)
            status = "imported"
        elif job.url:
            _download(job.url, target, item, progress)
            status = "downloaded"
        else:
            where = f" or in {source.from_dir}" if source.from_dir else ""
            return FetchedFile(file=name, component=item.component, status="missing",
                               message=f"{name} has no download URL in the catalogue{where}; "
                                       "add it with --catalogue or --from-dir")
        unpacked = _unpack(target, dest) if name.endswith(".zip") else []
    except FetchError as error:
        return FetchedFile(file=name, component=item.component, status="failed",
                           message=str(error))
    return FetchedFile(file=name, component=item.component, status=status,
                       sha256=item.sha256, size=target.stat().st_size, unpacked=unpacked)


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


def _import(found: Path, target: Path, item: PlanItem) -> None:
    expected = _require_digest(item)
    actual = sha256_of(found)
    if actual != expected:
        raise _mismatch(found.name, expected, actual)
    staging = _staging(target)
    shutil.copyfile(found, staging)
    staging.replace(target)


def _staging(target: Path) -> Path:
    """A temporary name in the repository's .partial/ folder, on the same file system."""
    partial = target.parent / ".partial"
    partial.mkdir(exist_ok=True)
    handle, name = tempfile.mkstemp(dir=partial, prefix=target.name + ".")
    os.close(handle)
    return Path(name)


def _download(url: str, target: Path, item: PlanItem, progress: Progress) -> None:
    expected = _require_digest(item)
    partial = target.parent / ".partial" / (target.name + ".part")
    partial.parent.mkdir(exist_ok=True)
    last_error = ""
    for _attempt in range(ATTEMPTS):
        try:
            _download_once(url, partial, progress, target.name)
            break
        except _Interrupted as exc:
            last_error = str(exc)  # keep the partial file: the next attempt resumes it
    else:
        raise FetchError(f"{target.name}: download from {url} failed {ATTEMPTS} times "
                         f"({last_error}); rerun fetch to resume")
    actual = sha256_of(partial)
    if actual != expected:
        partial.unlink()
        raise _mismatch(target.name, expected, actual)
    partial.replace(target)


class _Interrupted(Exception):
    """A transfer that ended early; it can be resumed."""


def _download_once(url: str, partial: Path, progress: Progress, name: str) -> None:
    have = partial.stat().st_size if partial.exists() else 0
    request = urllib.request.Request(url, headers={
        # The vendor's OBS buckets want a Referer from their own site (CCI Dockerfiles).
        "Referer": "https://www.hiascend.com/", "User-Agent": "ascend-env"})
    if have:
        request.add_header("Range", f"bytes={have}-")
    try:
        response = urllib.request.urlopen(request, timeout=60)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and have:  # already complete: the digest check decides
            return
        raise FetchError(f"{name}: {url} answered HTTP {exc.code} {exc.reason}") from exc
    except (urllib.error.URLError, OSError) as exc:
        raise _Interrupted(f"cannot reach {url}: {exc}") from exc
    with response:
        resumed = response.status == 206
        mode = "ab" if resumed else "wb"
        length = response.headers.get("Content-Length")
        expected_total = (int(length) + (have if resumed else 0)) if length else None
        progress.start(name, expected_total)
        if resumed:
            progress.advance(name, have)
        written = have if resumed else 0
        try:
            with partial.open(mode) as handle:
                for block in iter(lambda: response.read(CHUNK), b""):
                    handle.write(block)
                    written += len(block)
                    progress.advance(name, len(block))
        except (OSError, http.client.HTTPException) as exc:
            raise _Interrupted(f"connection lost after {written} bytes: {exc!r}") from exc
        finally:
            progress.finish(name)
    if expected_total is not None and written < expected_total:
        raise _Interrupted(f"truncated: {written} of {expected_total} bytes")


def _safe_members(archive: zipfile.ZipFile, name: str) -> list[zipfile.ZipInfo]:
    members = []
    for info in archive.infolist():
        path = Path(info.filename)
        mode = info.external_attr >> 16
        if path.is_absolute() or ".." in path.parts or info.filename.startswith(("/", "\\")):
            raise FetchError(f"{name}: member {info.filename!r} would escape its folder")
        if stat.S_ISLNK(mode) or (mode and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))):
            raise FetchError(f"{name}: member {info.filename!r} is a link or special file")
        members.append(info)
    return members


def _unpack(archive_path: Path, dest: Path) -> list[str]:
    """Unpack a verified zip into `<dest>/<stem>/`, all or nothing."""
    folder = dest / archive_path.name.removesuffix(".zip")
    try:
        with zipfile.ZipFile(archive_path) as archive:
            members = _safe_members(archive, archive_path.name)
            names = sorted(m.filename for m in members if not m.is_dir())
            if folder.is_dir():
                return names
            (dest / ".partial").mkdir(exist_ok=True)
            staging = Path(tempfile.mkdtemp(dir=dest / ".partial"))
            try:
                for info in members:
                    archive.extract(info, staging)
                    mode = (info.external_attr >> 16) & 0o777
                    if mode and not info.is_dir():
                        (staging / info.filename).chmod(mode)
                staging.replace(folder)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
    except zipfile.BadZipFile as exc:
        raise FetchError(f"{archive_path.name}: not a valid zip archive: {exc}") from exc
    return names


def _write_manifest(dest: Path, results: Iterable[FetchedFile]) -> None:
    """Record the verified files (merged with earlier fetches into the same repository)."""
    manifest = dest / MANIFEST
    known: dict[str, dict[str, object]] = {}
    if manifest.exists():
        try:
            known = json.loads(manifest.read_text())["files"]
        except (ValueError, KeyError, TypeError):
            known = {}
    for result in results:
        if result.status in ("present", "downloaded", "imported"):
            known[result.file] = {"sha256": result.sha256, "size": result.size,
                                  "component": result.component, "unpacked": result.unpacked}
    staging = _staging(manifest)
    staging.write_text(json.dumps({"schema": REPO_SCHEMA, "files": known}, indent=2,
                                  sort_keys=True))
    staging.replace(manifest)


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
