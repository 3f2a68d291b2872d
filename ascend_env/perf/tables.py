"""The vendor's CSV and JSON files, read bounded, with the column names each CANN release used.

Column names drift between releases: `Block Dim` became `Block Num` in some, kernel_details'
`Accelerator Core` was `Task Type` before (and still is in msprof's op_summary), `Step Id`
is also written `Step ID` (msprof-analyze reads both: advisor_backend/compute_advice/npu_fused/
op_perf.py, advisor_backend/common_func_advisor/constant.py). A column no alias names is
reported as unknown, never dropped in silence.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ascend_env.core.inputs import InputError, read_bounded

# A CSV summary of a long run is tens of MB; a trace_view.json of a few steps hundreds. Past
# these the file is not read (and said so): Python holds some ten times a JSON file's size.
MAX_TABLE_BYTES = 256 * 1024 * 1024
MAX_JSON_BYTES = 512 * 1024 * 1024
MAX_ROWS = 2_000_000

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


@dataclass
class Table:
    """A CSV's rows keyed by field (aliases resolved), and the columns nothing claimed."""

    path: Path
    rows: list[dict[str, str]]
    columns: dict[str, str]  # field -> the header the file used
    unknown: list[str]

    def has(self, field_name: str) -> bool:
        return field_name in self.columns


def read_table(path: Path, fields: tuple[str, ...], *, what: str) -> Table:
    """A vendor CSV with FIELDS looked up by their aliases; an InputError when unreadable."""
    raw = read_bounded(path, what=what, limit=MAX_TABLE_BYTES)
    text = raw.decode("utf-8-sig", errors="replace")
    reader = csv.reader(io.StringIO(text))
    try:
        header = [h.strip() for h in next(reader)]
    except StopIteration:
        raise InputError(f"{what} {path}: empty file, no header") from None
    except csv.Error as exc:
        raise InputError(f"{what} {path}: not CSV ({exc})") from exc
    columns: dict[str, str] = {}
    claimed: set[str] = set()
    for field_name in fields:
        for alias in ALIASES[field_name]:
            if alias in header:
                columns[field_name] = alias
                claimed.add(alias)
                break
    unknown = [h for h in header if h and h not in claimed and h not in KNOWN_EXTRA
               and not any(alias == h for aliases in ALIASES.values() for alias in aliases)
               and not h.lower().startswith(_METRIC_PREFIXES)]
    index = {h: i for i, h in enumerate(header)}
    rows: list[dict[str, str]] = []
    try:
        for number, record in enumerate(reader, start=2):
            if number > MAX_ROWS:
                raise InputError(f"{what} {path}: more than {MAX_ROWS} rows")
            if not any(cell.strip() for cell in record):
                continue
            rows.append({f: _cell(record, index[alias]) for f, alias in columns.items()})
    except csv.Error as exc:
        raise InputError(f"{what} {path}: not CSV ({exc})") from exc
    return Table(path, rows, columns, unknown)


def _cell(record: list[str], at: int) -> str:
    # kernel_details writes shapes as "\"81920,4096;8192,512\"" and timestamps with a trailing
    # tab (so spreadsheets keep them as text): strip both.
    return record[at].strip().strip('"').strip() if at < len(record) else ""


def number(text: str | None) -> float | None:
    """A cell as a finite float, or None (N/A, empty, garbage)."""
    if text is None:
        return None
    try:
        value = float(text.strip().strip('"').strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def read_json(path: Path, *, what: str) -> Any:
    """A bounded JSON file; an InputError when unreadable or not JSON."""
    raw = read_bounded(path, what=what, limit=MAX_JSON_BYTES)
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise InputError(f"{what} {path}: not JSON ({exc})") from exc
