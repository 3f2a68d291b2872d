"""Read what `explain` is given: files, `-` (standard input), or folders such as CANN's plog
tree (~/ascend/log/debug/plog/, device-*/ under it), walked with bounds.

A folder is walked without following links and yields regular files only; binary files,
unreadable files and whatever exceeds the limits are skipped and reported, not fatal. A path
named on the command line that cannot be read is an error (exit 2).
"""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from ascend_env.core.errors import UsageError

MAX_FILE_BYTES = 64 * 1024 * 1024  # per file: the last 64 MiB (errors come late in a log)
MAX_TOTAL_BYTES = 512 * 1024 * 1024  # per run, over every file
MAX_FILES = 5000  # per run
MAX_DEPTH = 8  # below a folder argument
_CHUNK = 1024 * 1024


@dataclass
class Source:
    name: str
    text: str
    skipped_lines: int = 0  # lines before the part read, when the file was over the limit

    @property
    def note(self) -> str | None:
        if not self.skipped_lines:
            return None
        return f"read the last {MAX_FILE_BYTES // (1024 * 1024)} MiB; " \
               f"{self.skipped_lines} earlier lines skipped"


@dataclass
class Inputs:
    sources: list[Source] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, why)
    total_bytes: int = 0

    def texts(self) -> list[tuple[str, str]]:
        return [(s.name, s.text) for s in self.sources]


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _read_bounded(handle: BinaryIO, size: int | None) -> tuple[bytes, int]:
    """The file's bytes, or its last MAX_FILE_BYTES and the number of lines before them."""
    if size is None or size <= MAX_FILE_BYTES:
        data = handle.read(MAX_FILE_BYTES + 1)
        if len(data) <= MAX_FILE_BYTES:
            return data, 0
        # A stream longer than the limit: keep its head (a pipe cannot be read backwards).
        return data[:MAX_FILE_BYTES], 0
    skip = size - MAX_FILE_BYTES
    skipped_lines, left = 0, skip
    while left > 0:
        chunk = handle.read(min(_CHUNK, left))
        if not chunk:
            break
        skipped_lines += chunk.count(b"\n")
        left -= len(chunk)
    data = handle.read(MAX_FILE_BYTES)
    # The part read starts mid-line: drop that partial line so numbering stays exact.
    cut = data.find(b"\n")
    if cut >= 0:
        data = data[cut + 1:]
        skipped_lines += 1
    return data, skipped_lines


def _binary(data: bytes) -> bool:
    return b"\0" in data[:8192]


def _add_file(inputs: Inputs, path: Path, *, named: bool) -> None:
    if len(inputs.sources) >= MAX_FILES:
        inputs.skipped.append((str(path), f"over the limit of {MAX_FILES} files"))
        return
    if inputs.total_bytes >= MAX_TOTAL_BYTES:
        inputs.skipped.append((str(path), f"over the limit of "
                                          f"{MAX_TOTAL_BYTES // (1024 * 1024)} MiB read"))
        return
    try:
        with path.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            data, skipped_lines = _read_bounded(handle, size)
    except OSError as exc:
        if named:
            raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from exc
        inputs.skipped.append((str(path), f"unreadable: {exc.strerror or exc}"))
        return
    if _binary(data):
        if named:
            raise UsageError(f"{path}: not a text log (binary content)")
        inputs.skipped.append((str(path), "binary"))
        return
    inputs.total_bytes += len(data)
    inputs.sources.append(Source(str(path), _decode(data), skipped_lines))


def _walk(inputs: Inputs, root: Path) -> None:
    base_depth = len(root.parts)
    for folder, dirs, files in os.walk(root, followlinks=False):
        here = Path(folder)
        if len(here.parts) - base_depth >= MAX_DEPTH:
            dirs.clear()
        dirs.sort()
        for name in sorted(files):
            path = here / name
            try:
                mode = path.lstat().st_mode
            except OSError as exc:
                inputs.skipped.append((str(path), f"unreadable: {exc.strerror or exc}"))
                continue
            if not stat.S_ISREG(mode):
                inputs.skipped.append((str(path), "not a regular file"))
                continue
            _add_file(inputs, path, named=False)


def read_inputs(names: list[str], stdin: BinaryIO | None = None) -> Inputs:
    """Every named input read (no names: standard input). UsageError when a named path is
    missing or unreadable, or standard input is a terminal."""
    inputs = Inputs()
    for name in names or ["-"]:
        if name == "-":
            stream = stdin if stdin is not None else sys.stdin.buffer
            if stdin is None and sys.stdin.isatty():
                raise UsageError("no log given: name files or folders, or pipe text into "
                                 "`ascend-env explain -`")
            data, _ = _read_bounded(stream, None)
            if _binary(data):
                raise UsageError("standard input is not a text log (binary content)")
            inputs.total_bytes += len(data)
            inputs.sources.append(Source("<stdin>", _decode(data)))
            continue
        path = Path(name)
        try:
            mode = path.stat().st_mode
        except OSError as exc:
            raise UsageError(f"{name}: {exc.strerror or exc}") from exc
        if stat.S_ISDIR(mode):
            _walk(inputs, path)
        elif stat.S_ISREG(mode):
            _add_file(inputs, path, named=True)
        else:
            raise UsageError(f"{name}: not a regular file or folder")
    return inputs
