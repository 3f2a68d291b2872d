"""Unpacking a verified vendor zip, all or nothing, with every member's sha256 recorded.

The zip's own digest matched before this runs, but a matching digest says only that the file is
the one the catalogue (or an operator's overlay) named, not that it is harmless: a member could
name a path outside its folder, be a link, be encrypted, use a method nobody can read, or
expand far beyond its compressed size. All of that is refused from the central directory
before one byte is written, and the bytes written are counted again while unpacking, since a
member's declared size is the archive's word only.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ascend_env.core.errors import AscendEnvError
from ascend_env.repository.repo_folder import kind_of, partial_dir, sha256_of

CHUNK = 1 << 20
# Linux NAME_MAX; PATH_MAX is 4096 but no vendor member comes near a quarter of it.
NAME_MAX = 255
PATH_MAX = 1024
# Vendor zips hold .run installers that are already compressed (ratio about 1); a zip bomb
# reaches 1000 and more. Small archives get a floor so a zip of text files is not refused.
RATIO_LIMIT = 100
RATIO_FLOOR = 64 << 20
TOTAL_LIMIT = 64 << 30
METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflate",
           zipfile.ZIP_BZIP2: "bzip2", zipfile.ZIP_LZMA: "lzma"}


class ArchiveError(AscendEnvError):
    """A verified archive that is refused for its content: exit 1, the file is wrong."""

    exit_code = 1


@dataclass(frozen=True)
class Member:
    """What one unpacked regular member holds."""

    sha256: str
    size: int


def _member_path(info: zipfile.ZipInfo, name: str) -> PurePosixPath:
    raw = info.filename
    path = PurePosixPath(raw)
    if (raw.startswith(("/", "\\")) or "\\" in raw or ".." in path.parts or path.is_absolute()
            or (len(raw) > 1 and raw[1] == ":")):
        raise ArchiveError(f"{name}: member {raw!r} would escape its folder")
    if "\x00" in raw or any(ord(char) < 32 for char in raw):
        raise ArchiveError(f"{name}: member {raw!r} has a control character in its name")
    if len(raw.encode()) > PATH_MAX or any(len(part.encode()) > NAME_MAX
                                            for part in path.parts):
        raise ArchiveError(f"{name}: member {raw[:80]!r}... has an overlong name (more than "
                           f"{NAME_MAX} bytes in one part or {PATH_MAX} in all)")
    return path


def _check_member(info: zipfile.ZipInfo, name: str) -> None:
    mode = info.external_attr >> 16
    kind = stat.S_IFMT(mode)
    # Many zip writers leave the file-type bits at 0 (permission bits only, or nothing):
    # those are regular files or, with a trailing slash, folders.
    if kind and kind not in (stat.S_IFREG, stat.S_IFDIR):
        raise ArchiveError(f"{name}: member {info.filename!r} is a link or special file")
    if info.flag_bits & 0x1:
        raise ArchiveError(f"{name}: member {info.filename!r} is encrypted")
    if info.compress_type not in METHODS:
        raise ArchiveError(f"{name}: member {info.filename!r} uses compression method "
                           f"{info.compress_type}, which is not one of "
                           f"{', '.join(METHODS.values())}")


def check_members(archive: zipfile.ZipFile, name: str, archive_size: int
                  ) -> list[zipfile.ZipInfo]:
    """Every member, checked; raises ArchiveError naming the first one refused."""
    members = archive.infolist()
    files: set[PurePosixPath] = set()
    folders: set[PurePosixPath] = set()
    total = 0
    for info in members:
        path = _member_path(info, name)
        _check_member(info, name)
        if path in files or (not info.is_dir() and path in folders):
            raise ArchiveError(f"{name}: member {info.filename!r} appears twice or is both "
                               "a file and a folder")
        (folders if info.is_dir() else files).add(path)
        folders.update(path.parents)
        total += info.file_size
    clash = files & folders
    if clash:
        raise ArchiveError(f"{name}: {sorted(map(str, clash))[0]!r} is both a file and a "
                           "folder in the archive")
    limit = min(TOTAL_LIMIT, max(RATIO_FLOOR, RATIO_LIMIT * archive_size))
    if total > limit:
        raise ArchiveError(f"{name}: unpacks to {total} bytes, more than the {limit} allowed "
                           f"for a {archive_size}-byte archive (at most {RATIO_LIMIT} times "
                           f"its size, {TOTAL_LIMIT} in all)")
    return members


def _write_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, target: Path,
                  name: str) -> Member:
    digest = hashlib.sha256()
    written = 0
    mode = (info.external_attr >> 16) & 0o777 or 0o644
    # O_EXCL|O_NOFOLLOW: the staging folder is new, so anything already there is an attack.
    handle = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with archive.open(info) as source, os.fdopen(handle, "wb") as sink:
        for block in iter(lambda: source.read(CHUNK), b""):
            written += len(block)
            if written > info.file_size:
                raise ArchiveError(f"{name}: member {info.filename!r} holds more than the "
                                   f"{info.file_size} bytes it declares")
            digest.update(block)
            sink.write(block)
    target.chmod(mode)
    return Member(sha256=digest.hexdigest(), size=written)


def unpack(archive_path: Path, folder: Path, name: str) -> dict[str, Member]:
    """Unpack `archive_path` into `folder` (absent or replaced whole); returns each regular
    member's digest by its path inside the folder. Nothing is left behind on an error."""
    dest = folder.parent
    found = kind_of(folder)
    if found not in (None, "a directory"):
        raise ArchiveError(f"{folder} (the unpack folder of {name}) is {found}; remove it "
                           "and rerun fetch")
    try:
        with zipfile.ZipFile(archive_path) as archive:
            members = check_members(archive, name, archive_path.stat().st_size)
            needed = sum(info.file_size for info in members)
            free = shutil.disk_usage(dest).free
            if needed > free:
                raise ArchiveError(f"{name}: unpacking needs {needed} bytes and {dest} has "
                                   f"{free} free")
            staging = Path(tempfile.mkdtemp(dir=partial_dir(dest), prefix=folder.name + "."))
            try:
                digests: dict[str, Member] = {}
                for info in members:
                    path = PurePosixPath(info.filename)
                    target = staging.joinpath(*path.parts)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    if info.is_dir():
                        target.mkdir(exist_ok=True)
                    else:
                        digests[str(path)] = _write_member(archive, info, target, name)
                if found is not None:
                    # A folder from an earlier fetch whose content differs: set it aside first
                    # so the rename below cannot meet a non-empty folder.
                    old = staging.with_name(staging.name + ".old")
                    folder.replace(old)
                staging.replace(folder)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
                shutil.rmtree(staging.with_name(staging.name + ".old"), ignore_errors=True)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError) as exc:
        raise ArchiveError(f"{name}: not a valid zip archive: {exc}") from exc
    except OSError as exc:
        raise ArchiveError(f"{name}: cannot unpack: {exc}") from exc
    return digests


def matches(folder: Path, members: dict[str, str]) -> bool:
    """Whether `folder` holds exactly these regular files with these digests (no links)."""
    for relative, digest in members.items():
        path = folder / relative
        if kind_of(path) != "a regular file" or sha256_of(path) != digest:
            return False
    return True
