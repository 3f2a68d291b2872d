"""Files the commands write for the operator: capture files, JUnit, Prometheus, build contexts.

An output file is written whole or not at all: a temporary file in the target's own folder,
fsync, then os.replace (a reader such as node_exporter never sees half a file, and a full
disk leaves the old file as it was). Only a regular file or an absent name is replaced: a
directory, a device node (`/dev/full` must stay a device), a FIFO or a socket is refused, as
is anything under /proc or /sys (kernel interfaces, never a report's place). Every refusal
is an OutputError (exit 2, could not run), and no temporary file is left behind.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ascend_env.core.errors import UsageError

# Kernel interfaces: writing a report there either fails late or changes the kernel.
_KERNEL_TREES = (Path("/proc"), Path("/sys"))
_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"),
          (stat.S_ISSOCK, "a socket"))


class OutputError(UsageError):
    """An output path that cannot take the file: exit 2, nothing written."""


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _within(path: Path, tree: Path) -> bool:
    return path == tree or tree in path.parents


def _resolved(path: Path | str, what: str, noun: str) -> tuple[str, Path, int | None]:
    """PATH as given, its real path (links followed) and that path's mode (None: absent),
    or an OutputError for an empty path, a NUL, a kernel interface or an unreadable one."""
    text = os.fspath(path)
    if not text.strip():
        raise OutputError(f"{what}: an empty path names no {noun}")
    if "\x00" in text:
        raise OutputError(f"{what} {text!r}: a path cannot hold a NUL character")
    real = Path(os.path.realpath(text))
    for tree in _KERNEL_TREES:
        if _within(real, tree):
            raise OutputError(f"{what} {text}: {real} is under {tree}, a kernel interface, "
                              f"not a place for a {noun}")
    try:
        mode = real.stat().st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise OutputError(f"{what} {text}: {exc.strerror or exc}") from exc
    return text, real, mode


def output_target(path: Path | str, *, what: str = "output") -> Path:
    """The real path a file for PATH goes to (links followed, as a shell's `>` does), or an
    OutputError saying why it cannot go there. Cheap: commands call it before long work."""
    text, real, mode = _resolved(path, what, "file")
    if mode is not None and not stat.S_ISREG(mode):
        raise OutputError(f"{what} {text}: {real} is {_kind(mode)}; name a regular file "
                          "(or a new one) to write")
    parent = real.parent
    try:
        parent_mode = parent.stat().st_mode
    except FileNotFoundError:
        raise OutputError(f"{what} {text}: the folder {parent} does not exist") from None
    except OSError as exc:
        raise OutputError(f"{what} {text}: {parent}: {exc.strerror or exc}") from exc
    if not stat.S_ISDIR(parent_mode):
        raise OutputError(f"{what} {text}: {parent} is not a folder")
    return real


def write_output(path: Path | str, data: bytes | str, *, what: str = "output",
                 mode: int | None = None) -> Path:
    """Write DATA to PATH atomically; the path written (links resolved). An existing file
    keeps its permission bits; a new one gets MODE, else 0644 less the umask."""
    real = output_target(path, what=what)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    if mode is None:
        try:
            mode = stat.S_IMODE(real.stat().st_mode)
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o644 & ~umask
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".tmp", dir=real.parent)
    except OSError as exc:
        raise OutputError(f"{what} {path}: cannot create a file in {real.parent}: "
                          f"{exc.strerror or exc}") from exc
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
            os.fchmod(handle.fileno(), mode)
        # Again just before the rename: the name may have become a directory or device
        # while the data was written.
        output_target(real, what=what)
        Path(tmp).replace(real)
    except OSError as exc:
        with contextlib.suppress(OSError):
            Path(tmp).unlink()
        raise OutputError(f"{what} {path}: {exc.strerror or exc}") from exc
    except BaseException:
        with contextlib.suppress(OSError):
            Path(tmp).unlink()
        raise
    _sync_folder(real.parent)
    return real


def _sync_folder(folder: Path) -> None:
    """fsync the folder so the rename itself survives a crash (best effort: some file
    systems refuse to open or sync a directory)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def output_folder(path: Path | str, *, what: str = "output folder") -> Path:
    """The real path of a folder to fill (absent, or an empty directory), or an OutputError."""
    text, real, mode = _resolved(path, what, "folder")
    if mode is not None:
        if not stat.S_ISDIR(mode):
            raise OutputError(f"{what} {text}: {real} is {_kind(mode)}, not a folder")
        try:
            empty = not any(real.iterdir())
        except OSError as exc:
            raise OutputError(f"{what} {text}: {exc.strerror or exc}") from exc
        if not empty:
            raise OutputError(f"{what} {text}: the folder is not empty")
    parent = real.parent
    if not parent.is_dir():
        raise OutputError(f"{what} {text}: the folder {parent} does not exist")
    return real


@contextlib.contextmanager
def staged_folder(path: Path | str, *, what: str = "output folder") -> Iterator[Path]:
    """A temporary folder beside PATH to fill; renamed to PATH when the block ends without
    an error, removed (with whatever it holds) when it raises: a failed command leaves no
    half-written folder behind."""
    real = output_folder(path, what=what)
    try:
        staging = Path(tempfile.mkdtemp(prefix=f".{real.name}.", dir=real.parent))
    except OSError as exc:
        raise OutputError(f"{what} {path}: cannot create a folder in {real.parent}: "
                          f"{exc.strerror or exc}") from exc
    try:
        umask = os.umask(0)
        os.umask(umask)
        staging.chmod(0o755 & ~umask)
        yield staging
        output_folder(real, what=what)
        # rename(2) replaces an empty directory, so an empty --context folder is filled.
        staging.rename(real)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise OutputError(f"{what} {path}: {exc.strerror or exc}") from exc
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
