"""npu-smi's `info` table: one row pair per chip, its process table, and what it could not
read, kept verbatim (npu_smi.py merges it with the `-l`, board and health pages).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ascend_env.facts.model import NpuProcess
from ascend_env.facts.values import none_if_na, to_float, to_int


@dataclass(kw_only=True, slots=True)
class NpuChipRow:
    """One chip of `npu-smi info` (two table rows); a dual-chip card gives two of these."""

    npu_id: int
    chip_id: int | None = None
    device_id: int | None = None  # logical device (310P `Device` column)
    phy_id: int | None = None  # physical die id (A3 `Phy-ID` column)
    name: str | None = None
    health: str | None = None
    bus_id: str | None = None
    power_w: float | None = None
    temp_c: float | None = None
    aicore_pct: float | None = None
    hugepages_used: int | None = None
    hugepages_total: int | None = None
    memory_used_mb: int | None = None
    memory_total_mb: int | None = None
    hbm_used_mb: int | None = None
    hbm_total_mb: int | None = None
    # `<column> '<raw text>'` for every cell of the two rows that does not read as its column.
    unparsed: list[str] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class NpuSmiInfo:
    """`npu-smi info`: the tool/driver versions, one row per chip, and the process table."""

    tool_version: str | None = None
    driver_version: str | None = None
    chip_header: str | None = None  # second header row: "Chip", "Chip Device", "Chip Phy-ID"
    chips: list[NpuChipRow] = field(default_factory=list)
    processes: list[NpuProcess] = field(default_factory=list)
    idle_npus: list[int] = field(default_factory=list)
    # Whether the process table's header was there: without it (a table cut short) no process
    # was read because none could be, not because none ran.
    process_table: bool = False
    unparsed: list[str] = field(default_factory=list)  # table lines not read, verbatim
    error: str | None = None
    notes: list[str] = field(default_factory=list)


_TITLE = re.compile(r"npu-smi\s+(\S+)\s+Version:\s*(\S+)")
_PAIR = re.compile(r"(\d+)\s*/\s*(\d+)")
_NO_PROCESS = re.compile(r"No running processes found in NPU\s+(\d+)", re.IGNORECASE)
# A table border: +---+, +===+ (a pasted table may end in a border cut short).
_BORDER = re.compile(r"^\+[-=+]*$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
_NUMBER = re.compile(r"^(?:\d+(?:\.\d+)?|NA|-)$")
_BUS_ID = re.compile(r"^(?:[0-9A-Fa-f]{4}:)?[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]$")


def _cells(line: str) -> list[str]:
    """The cells between a row's outer borders: one `|` each side, so a doubled border is an
    empty cell (and the row unread), not a row that reads like any other."""
    line = line.strip()
    line = line[1:] if line.startswith("|") else line
    line = line[:-1] if line.endswith("|") else line
    return [c.strip() for c in line.split("|")]


def _usage_names(header: str) -> list[str]:
    """Names of the used/total pairs in a header cell, e.g. ['Memory', 'HBM']."""
    return [m.split("-Usage")[0] for m in re.findall(r"([A-Za-z]+-Usage)", header)]


def _fill_usage(row: NpuChipRow, names: list[str], text: str, column: str) -> None:
    """Set the used/total pairs of a cell; a cell that is not exactly those pairs is unparsed."""
    pairs = _PAIR.findall(text)
    if _PAIR.sub("", text).strip() or len(pairs) != len(names):
        row.unparsed.append(f"{column} '{text}'")
    for name, (used, total) in zip(names, pairs, strict=False):
        key = {"memory": "memory", "hbm": "hbm", "hugepages": "hugepages"}.get(name.lower())
        if key is None:
            continue
        suffix = "" if key == "hugepages" else "_mb"
        setattr(row, f"{key}_used{suffix}", to_int(used))
        setattr(row, f"{key}_total{suffix}", to_int(total))


def _header_kind(cells: list[str]) -> str | None:
    first = cells[0]
    if first.startswith("NPU") and len(cells) >= 2 and "Process" in cells[1]:
        return "processes"
    if first.startswith("NPU") and "Name" in first:
        return "top"
    if first.startswith("Chip") and len(cells) >= 2 and "Bus" in cells[1]:
        return "bottom"
    return None


def _is_top(cells: list[str]) -> bool:
    """A chip's first row: `NPU-id Name` in the first cell (the name may be unreadable)."""
    words = cells[0].split()
    return len(words) >= 2 and words[0].isdigit() and not all(w.isdigit() for w in words)


def _is_bottom(cells: list[str]) -> bool:
    """A chip's second row: only ids in the first cell (`Chip`, `Chip Device|Phy-ID`)."""
    words = cells[0].split()
    return bool(words) and all(w.isdigit() for w in words)


def parse_npu_smi_info(text: str) -> NpuSmiInfo:
    """Every published layout of `npu-smi info` (tests/data/real, each sample with its source).

    Rows are read by cells, not columns, so table width does not matter: 910B/910 tables
    (`Chip` under `NPU Name`), 310P tables (`Chip Device`, the NPU id repeated per chip), A3
    tables (`Chip Phy-ID`, two dies per NPU id), `NA` power or bus id, NPU ids that do not
    start at 0. Nothing is dropped: a cell that does not read as its column stays in the row's
    `unparsed`, a line that is no row at all in `unparsed` (redacted `0000:xx:00.0` Bus-Ids
    included), so a check can say what it could not judge.
    """
    info = NpuSmiInfo()
    names: dict[str, list[str]] = {"top": [], "bottom": []}
    section = "devices"
    pending: tuple[list[str], str] | None = None  # first row of a chip, waiting for its second
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not any(line.startswith("|") for line in lines):
        info.error = lines[0] if lines else None
        return info
    for line in lines:
        title = _TITLE.search(line)
        if title and line.startswith("|"):
            info.tool_version, info.driver_version = title.group(1), title.group(2)
            continue
        if _BORDER.match(line):
            continue
        cells = _cells(line) if line.startswith("|") else []
        header = _header_kind(cells) if cells else None
        if header is not None:
            if header == "processes":
                section, info.process_table = "processes", True
            names[header] = _usage_names(cells[-1])
            if header == "bottom":
                info.chip_header = " ".join(cells[0].split())
        elif not cells:
            info.unparsed.append(line)
        elif section == "processes":
            _process_row(info, cells, line)
        elif pending is not None and _is_bottom(cells):
            info.chips.append(_chip_row(pending[0], cells, names["top"], names["bottom"],
                                        info.chip_header))
            pending = None
        else:
            if pending is not None:
                info.unparsed.append(pending[1])
            pending = (cells, line) if _is_top(cells) else None
            if pending is None:
                info.unparsed.append(line)
    if pending is not None:
        info.unparsed.append(pending[1])
    info.notes += [f"unparsed npu-smi info line: {line[:120]}" for line in info.unparsed]
    return info


def _chip_row(top: list[str], bottom: list[str], top_names: list[str],
              bottom_names: list[str], chip_header: str | None) -> NpuChipRow:
    head = top[0].split()
    row = NpuChipRow(npu_id=int(head[0]))
    name = " ".join(head[1:])
    if _NAME.match(name):
        row.name = name
    else:
        row.unparsed.append(f"Name '{name}'")
    if len(top) != 3 or len(bottom) != 3:
        row.unparsed.append(f"row '{' | '.join(top)}' / '{' | '.join(bottom)}'")
    row.health = none_if_na(top[1]) if len(top) > 1 else None
    # Second id column: `Device` (310P logical device) or `Phy-ID` (A3 die); none on 910/910B.
    ids = bottom[0].split()
    second = (chip_header or "").split()[1:]
    row.chip_id = to_int(ids[0])
    if len(ids) > 1 and second == ["Phy-ID"]:
        row.phy_id = to_int(ids[1])
    elif len(ids) > 1:
        row.device_id = to_int(ids[1])
    if len(ids) > 1 + min(len(second), 1):
        row.unparsed.append(f"Chip '{bottom[0]}'")
    bus = bottom[1] if len(bottom) > 1 else ""
    if _BUS_ID.match(bus):
        row.bus_id = bus.lower()
    elif bus != "NA":  # NA: no PCIe bus id on this product (Atlas 200I A2, https://www.hiascend.com/document/detail/zh/Atlas%20200I%20A2/2520/re/npu/npusmi_007.html)
        row.unparsed.append(f"Bus-Id '{bus}'")
    power_temp = top[2].split() if len(top) > 2 else []
    for value, attr, column in zip(power_temp[:2], ("power_w", "temp_c"),
                                   ("Power(W)", "Temp(C)"), strict=False):
        if _NUMBER.match(value):
            setattr(row, attr, to_float(value))
        else:
            row.unparsed.append(f"{column} '{value}'")
    if len(power_temp) < 2:
        row.unparsed.append(f"Power(W) Temp(C) '{top[2] if len(top) > 2 else ''}'")
    _fill_usage(row, top_names or ["Hugepages"], " ".join(power_temp[2:]), "Hugepages-Usage")
    usage = bottom[2].split(maxsplit=1) if len(bottom) > 2 else []
    if usage and _NUMBER.match(usage[0]):
        row.aicore_pct = to_float(usage[0])
    else:
        row.unparsed.append(f"AICore(%) '{usage[0] if usage else ''}'")
    _fill_usage(row, bottom_names or ["Memory", "HBM"], usage[1] if len(usage) > 1 else "",
                "Memory-Usage")
    return row


def _process_row(info: NpuSmiInfo, cells: list[str], line: str) -> None:
    idle = _NO_PROCESS.search(line)
    if idle:
        info.idle_npus.append(int(idle.group(1)))
        return
    ids = cells[0].split()
    if len(cells) >= 3 and ids and ids[0].isdigit():
        info.processes.append(NpuProcess(
            npu_id=to_int(ids[0]), chip_id=to_int(ids[1]) if len(ids) > 1 else None,
            pid=to_int(cells[1]), name=none_if_na(cells[2]),
            memory_mb=to_int(cells[3]) if len(cells) > 3 else None))
        return
    # ascend-deployer treats any other row in the process table as "occupied": keep it
    # visible (https://pypi.org/project/ascend-deployer/26.0.0/).
    info.processes.append(NpuProcess(name=" ".join(c for c in cells if c) or None))
    info.notes.append(f"unparsed npu-smi process row: {line[:120]}")
