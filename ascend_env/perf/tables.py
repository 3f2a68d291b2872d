"""The vendor's CSV and JSON files, streamed: opened as regular files only, read row by row (or
event by event), with the column names each CANN release used.

Column names drift between releases: `Block Dim` became `Block Num` in some, kernel_details'
`Accelerator Core` was `Task Type` before (and still is in msprof's op_summary), `Step Id`
is also written `Step ID` (msprof-analyze reads both: advisor_backend/compute_advice/npu_fused/
op_perf.py, advisor_backend/common_func_advisor/constant.py). A column no alias names is
reported as unknown, never dropped in silence.

No file is refused for its size: a run of a million kernels writes a kernel table of some
400 MB, and msprof itself slices its CSVs at a million rows (analysis/common_func/
file_slice_helper.py in Ascend/msprof, CSV_LIMIT). What is bounded is memory: one line
(MAX_LINE), one field (the csv module's field_size_limit) and what the readers keep.
"""

from __future__ import annotations

import csv
import io
import math
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO

from ascend_env.core.inputs import InputError, file_kind

# A row of a kernel table is a few hundred bytes; its longest real cells are shape lists. A
# line beyond this is not a table row, and reading it whole would hold it all in memory.
MAX_LINE = 1024 * 1024
READ_BUFFER = 1024 * 1024

# Each field the summary uses: the names vendors have written for it, newest first.
ALIASES: dict[str, tuple[str, ...]] = {
    "name": ("Name", "Op Name"),
    "type": ("Type", "OP Type", "Op Type"),
    "core": ("Accelerator Core", "Task Type"),
    "duration": ("Duration(us)", "Task Duration(us)"),
    "wait": ("Wait Time(us)", "Task Wait Time(us)"),
    "block": ("Block Dim", "Block Num"),
    "mix_block": ("Mix Block Dim", "Mix Block Num"),
    "step": ("Step Id", "Step ID", "Step"),
    "device": ("Device_id", "Device ID", "Device Id"),
    "input_shapes": ("Input Shapes",),
    "input_dtypes": ("Input Data Types",),
    "output_shapes": ("Output Shapes",),
    "output_dtypes": ("Output Data Types",),
    "computing": ("Computing",),
    "comm_not_overlapped": ("Communication(Not Overlapped)",),
    "overlapped": ("Overlapped",),
    "communication": ("Communication",),
    "free": ("Free",),
    "stage": ("Stage",),
    "bubble": ("Bubble",),
    "preparing": ("Preparing",),
    "comm_not_overlapped_no_receive": ("Communication(Not Overlapped and Exclude Receive)",),
    "row_type": ("Type",),
    "index": ("Index",),
}

# Columns the vendor writes that this summary does not use: known, so not "unknown".
KNOWN_EXTRA = {
    "Model ID", "Task ID", "Stream ID", "OP State", "Start Time(us)", "HF32 Eligible",
    "Input Formats", "Output Formats", "Context ID", "Task Start Time(us)", "Op Flag",
    "Task Wait Time(us)", "Job Info", "Device Id", "Model Name", "Infer ID",
}
# aic_metrics columns (aicore_time(us), aic_mac_ratio, aiv_vec_time(us), cube_utilization(%))
# follow a pattern rather than a list.
_METRIC_PREFIXES = ("aic_", "aiv_", "aicore_", "cube_", "vector_", "mac_", "scalar_", "mte",
                    "fixpipe", "icache", "l2_", "memory_", "ub_", "l0", "l1_")
_ALL_ALIASES = {alias for aliases in ALIASES.values() for alias in aliases}


def open_regular(path: Path, *, what: str) -> IO[bytes]:
    """PATH opened for reading if it is a regular file (a FIFO or a device is refused before
    a byte is read, so it cannot hang the command); an InputError otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        raise InputError(f"cannot read {what} {path}: {exc.strerror or exc}") from exc
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise InputError(f"cannot read {what} {path}: it is {file_kind(mode)}, not a "
                             "regular file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb", buffering=READ_BUFFER)
    except BaseException:
        os.close(fd)
        raise


@dataclass
class Table:
    """A CSV's header: where each field is (aliases resolved), and the columns nothing claimed."""

    path: Path
    columns: dict[str, str]  # field -> the header the file used
    index: dict[str, int]  # field -> its position in a row
    unknown: list[str]
    width: int = 0  # columns in the header

    def has(self, field_name: str) -> bool:
        return field_name in self.columns


class TableReader:
    """A vendor CSV read row by row: `with TableReader(...) as reader: for row in reader.rows()`.
    Rows are lists of raw cells (`cell` cleans one); an InputError when the file is not CSV."""

    def __init__(self, path: Path, fields: tuple[str, ...], *, what: str) -> None:
        self.path = path
        self.fields = fields
        self.what = what
        self._handle: IO[str] | None = None
        self._reader: Iterator[list[str]] | None = None
        self.table = Table(path, {}, {}, [])

    def __enter__(self) -> TableReader:
        binary = open_regular(self.path, what=self.what)
        self._handle = io.TextIOWrapper(binary, encoding="utf-8-sig", errors="replace",
                                        newline="")
        self._reader = csv.reader(self._lines(self._handle))
        try:
            header = [h.strip() for h in next(self._reader)]
        except StopIteration:
            self.close()
            raise InputError(f"{self.what} {self.path}: empty file, no header") from None
        except (csv.Error, InputError) as exc:
            self.close()
            raise InputError(f"{self.what} {self.path}: not CSV ({exc})") from exc
        self.table = _header(self.path, header, self.fields)
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def _lines(self, handle: IO[str]) -> Iterator[str]:
        read = handle.readline
        while True:
            line = read(MAX_LINE)
            if not line:
                return
            if len(line) >= MAX_LINE and not line.endswith("\n"):
                raise InputError(f"{self.what} {self.path}: a line longer than {MAX_LINE} "
                                 "characters: not a profiler table")
            yield line

    def rows(self) -> Iterator[list[str]]:
        """Each non-empty row, as the file has it."""
        assert self._reader is not None, "rows() outside `with`"
        try:
            for record in self._reader:
                if record and any(record):
                    yield record
        except csv.Error as exc:
            raise InputError(f"{self.what} {self.path}: not CSV ({exc})") from exc
        except UnicodeError as exc:
            raise InputError(f"{self.what} {self.path}: not text ({exc})") from exc


def _header(path: Path, header: list[str], fields: tuple[str, ...]) -> Table:
    columns: dict[str, str] = {}
    index: dict[str, int] = {}
    for field_name in fields:
        for alias in ALIASES[field_name]:
            if alias in header:
                columns[field_name] = alias
                index[field_name] = header.index(alias)
                break
    claimed = set(columns.values())
    unknown = [h for h in header if h and h not in claimed and h not in KNOWN_EXTRA
               and h not in _ALL_ALIASES and not h.lower().startswith(_METRIC_PREFIXES)]
    return Table(path, columns, index, unknown, len(header))


def read_header(path: Path, fields: tuple[str, ...], *, what: str) -> Table:
    """A vendor CSV's header alone, its fields looked up by their aliases."""
    with TableReader(path, fields, what=what) as reader:
        return reader.table


def cell(record: list[str], at: int | None) -> str:
    """One cell, cleaned: kernel_details writes shapes as "\\"81920,4096;8192,512\\"" and
    timestamps with a trailing tab (so spreadsheets keep them as text)."""
    if at is None or at >= len(record):
        return ""
    return record[at].strip().strip('"').strip()


def number(text: str | None) -> float | None:
    """A cell as a finite float, or None (N/A, empty, garbage)."""
    if text is None:
        return None
    try:
        value = float(text.strip().strip('"').strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None
