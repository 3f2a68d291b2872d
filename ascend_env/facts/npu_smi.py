"""npu-smi: `info` (the device table), `info -l`, the board page and the health pages.

read_npu merges them into one NpuDevice per chip, with its chip family from chips.yaml.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ascend_env.facts.model import NpuDevice, NpuProcess, NpuSmiFacts
from ascend_env.facts.pci import chip_for_pci
from ascend_env.facts.reader import CaptureReader
from ascend_env.facts.values import none_if_na, to_float, to_int
from ascend_env.remote import probe
from ascend_env.spec.matrix import ChipName, load_chips


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
    """Every published layout of `npu-smi info` (ascend-facts §4.1-4.3, tests/data/real).

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
    elif bus != "NA":  # NA: no PCIe bus id on this product (Atlas 200I A2, §4.3)
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
    # ADEP26 treats any other row in the process table as "occupied": keep it visible.
    info.processes.append(NpuProcess(name=" ".join(c for c in cells if c) or None))
    info.notes.append(f"unparsed npu-smi process row: {line[:120]}")


def _colon_records(text: str) -> list[list[tuple[str, str]]]:
    """`Key : value` lines grouped by blank lines; `: more` lines continue the previous key."""
    records: list[list[tuple[str, str]]] = []
    current: list[tuple[str, str]] = []
    last: list[tuple[str, str]] | None = None
    for raw in text.splitlines():
        if not raw.strip():
            if current:
                records.append(current)
                last = current
                current = []
            continue
        key, sep, value = raw.partition(":")
        if not sep:
            continue
        key, value = key.strip(), value.strip()
        if not key:
            target = current or last
            if target:
                k, v = target[-1]
                target[-1] = (k, f"{v}\n{value}" if v else value)
            continue
        current.append((key, value))
    if current:
        records.append(current)
    return records


@dataclass(kw_only=True, slots=True)
class NpuListEntry:
    npu_id: int
    chip_count: int | None = None
    product_name: str | None = None
    serial_number: str | None = None


@dataclass(kw_only=True, slots=True)
class NpuSmiList:
    """`npu-smi info -l`: NPU ids and chips per NPU (ids need not be 0..N-1, §4.5)."""

    count: int | None = None
    count_field: str | None = None  # 'Total Count' or 'Card Count'
    npus: list[NpuListEntry] = field(default_factory=list)
    error: str | None = None


def parse_npu_smi_list(text: str) -> NpuSmiList:
    """Both forms: `Total Count` (A2/A3 servers) and `Card Count` (Atlas 200I A2)."""
    out = NpuSmiList()
    for record in _colon_records(text):
        entry: NpuListEntry | None = None
        for key, value in record:
            if key in ("Total Count", "Card Count"):
                out.count, out.count_field = to_int(value), key
            elif key == "NPU ID" and to_int(value) is not None:
                entry = NpuListEntry(npu_id=to_int(value) or 0)
                out.npus.append(entry)
            elif entry is not None and key == "Chip Count":
                entry.chip_count = to_int(value)
            elif entry is not None and key == "Product Name":
                entry.product_name = none_if_na(value)
            elif entry is not None and key == "Serial Number":
                entry.serial_number = none_if_na(value)
    if out.count is None and not out.npus and text.strip():
        out.error = text.strip().splitlines()[0].strip()
    return out


@dataclass(kw_only=True, slots=True)
class NpuSmiBoard:
    """`npu-smi info -t board -i N` (ascend-facts §4.6); `compatibility` is driver vs firmware."""

    npu_id: int | None = None
    chip_id: int | None = None
    software_version: str | None = None
    firmware_version: str | None = None
    compatibility: str | None = None
    bus_id: str | None = None
    pci_vendor_id: str | None = None
    pci_device_id: str | None = None
    subsystem_vendor_id: str | None = None
    subsystem_device_id: str | None = None
    chip_count: int | None = None
    product_name: str | None = None
    serial_number: str | None = None
    board_id: str | None = None
    values: dict[str, str] = field(default_factory=dict)
    error: str | None = None


def _hex_id(value: str | None) -> str | None:
    value = none_if_na(value)
    return value.lower() if value is not None else None


def parse_npu_smi_board(text: str) -> NpuSmiBoard:
    """The board page; a wrong id gives `Invalid card id.` in `error`."""
    values: dict[str, str] = {}
    for record in _colon_records(text):
        for key, value in record:
            values.setdefault(key, value)
    board = NpuSmiBoard(
        npu_id=to_int(values.get("NPU ID")),
        chip_id=to_int(values.get("Chip ID")),
        software_version=none_if_na(values.get("Software Version")),
        firmware_version=none_if_na(values.get("Firmware Version")),
        compatibility=none_if_na(values.get("Compatibility")),
        bus_id=_hex_id(values.get("PCIe Bus Info")),
        pci_vendor_id=_hex_id(values.get("PCI Vendor ID")),
        pci_device_id=_hex_id(values.get("PCI Device ID")),
        subsystem_vendor_id=_hex_id(values.get("Subsystem Vendor ID")),
        subsystem_device_id=_hex_id(values.get("Subsystem Device ID")),
        chip_count=to_int(values.get("Chip Count")),
        product_name=none_if_na(values.get("Product Name")),
        serial_number=none_if_na(values.get("Serial Number")),
        board_id=none_if_na(values.get("Board ID")),
        values=values,
    )
    if not values and text.strip():
        board.error = text.strip().splitlines()[0].strip()
    return board


@dataclass(kw_only=True, slots=True)
class ChipHealth:
    chip_id: int | None = None
    name: str | None = None  # component name, e.g. MCU
    health: str | None = None


@dataclass(kw_only=True, slots=True)
class NpuSmiHealth:
    """`npu-smi info -t health -i N [-c C]`: per-chip health, or status with error codes."""

    npu_id: int | None = None
    chip_count: int | None = None
    chips: list[ChipHealth] = field(default_factory=list)
    status: str | None = None  # `Health Status` of the chip-level query
    error_codes: list[str] = field(default_factory=list)
    error_information: list[str] = field(default_factory=list)
    error: str | None = None


_HEALTH_RANK = {"OK": 0, "WARNING": 1, "ALARM": 2, "CRITICAL": 3, "UNKNOWN": 4}


def worst_health(values: Iterable[str | None]) -> str | None:
    """The worst of several health words (DCMI: the worst alarm wins); unknown words count."""
    known = [v for v in values if v]
    if not known:
        return None
    return max(known, key=lambda v: _HEALTH_RANK.get(v.upper(), 5))


def parse_npu_smi_health(text: str) -> NpuSmiHealth:
    """Both health pages (§4.7), including the tab-indented multi-line alarm form."""
    out = NpuSmiHealth()
    for record in _colon_records(text):
        keys = dict(record)
        if "NPU ID" in keys:
            out.npu_id = to_int(keys["NPU ID"])
            out.chip_count = to_int(keys.get("Chip Count"))
        if "Chip ID" in keys:
            out.chips.append(ChipHealth(chip_id=to_int(keys["Chip ID"]),
                                        health=none_if_na(keys.get("Health"))))
        elif "Chip Name" in keys or ("Health" in keys and "NPU ID" not in keys):
            out.chips.append(ChipHealth(name=none_if_na(keys.get("Chip Name")),
                                        health=none_if_na(keys.get("Health"))))
        if "Health Status" in keys:
            out.status = none_if_na(keys["Health Status"])
        if "Error Code" in keys:
            codes = none_if_na(keys["Error Code"])
            out.error_codes = codes.split() if codes else []
        if "Error Information" in keys:
            info = none_if_na(keys["Error Information"])
            out.error_information = [i.strip() for i in info.splitlines()] if info else []
    if out.npu_id is None and out.status is None and not out.chips and text.strip():
        out.error = text.strip().splitlines()[0].strip()
    return out


def chip_for_npu_name(name: str | None, chip_header: str | None = None) -> ChipName | None:
    """The chip family of an npu-smi `Name` (910B3, 310P3...), from chips.yaml.

    A name of `npu_smi_names_under` counts only in a table whose second header row has that
    column: A3 hosts print `Ascend910` under `Chip  Phy-ID` (tests/data/real/a3-*).
    """
    if name is None:
        return None
    columns = (chip_header or "").split()[1:]
    for chip in load_chips().chips.values():
        if name in chip.npu_smi_names or chip.npu_smi_names_under.get(name) in columns:
            return chip.name
    return None


def unknown_name_note(name: str, chip_header: str | None) -> str:
    """Why a name did not give a chip family, with the raw name (never a silent None)."""
    header = f" under '{chip_header}'" if chip_header else ""
    return (f"npu-smi name '{name}'{header} is no chip family of chips.yaml "
            "(PCI device id decides where the capture has it)")


def read_npu(r: CaptureReader) -> tuple[NpuSmiFacts, list[NpuDevice]]:
    """What npu-smi said overall, and one device per chip it shows or lists."""
    facts = NpuSmiFacts()
    result = r.capture.commands.get(probe.NPU_SMI_INFO)
    listing = r.capture.commands.get(probe.NPU_SMI_LIST)
    if result is None and listing is None:
        return facts, []
    facts.available = bool(result and not result.missing)
    facts.rc = result.rc if result else None
    table = parse_npu_smi_info(result.stdout) if result and result.stdout.strip() \
        else NpuSmiInfo()
    if result is not None and result.rc != 0:
        facts.error = (table.error or result.stderr.strip() or result.stdout.strip()
                       or f"exit status {result.rc}")
    elif table.error and not table.chips:
        facts.error = table.error
    r.notes += table.notes
    facts.tool_version, facts.driver_version = table.tool_version, table.driver_version
    facts.unparsed = table.unparsed
    facts.process_table = table.process_table or bool(table.idle_npus)
    ids = parse_npu_smi_list(listing.stdout) if listing and listing.ok else NpuSmiList()
    facts.listed_ids = [n.npu_id for n in ids.npus]
    devices = [_device(r, row, table) for row in table.chips]
    seen = {d.npu_id for d in devices}
    for entry in ids.npus:  # listed but missing from the table: still a device to report
        if entry.npu_id not in seen:
            devices.append(_device(r, NpuChipRow(npu_id=entry.npu_id), table))
    return facts, devices


def _device(r: CaptureReader, row: NpuChipRow, table: NpuSmiInfo) -> NpuDevice:
    """One chip's table row with its board and health pages and its processes."""
    board = parse_npu_smi_board(
        r.output(probe.NPU_SMI_BOARD.format(npu=row.npu_id)) or "")
    chip_index = row.chip_id if row.chip_id is not None else 0
    chip_health = parse_npu_smi_health(r.output(
        probe.NPU_SMI_CHIP_HEALTH.format(npu=row.npu_id, chip=chip_index)) or "")
    npu_health = parse_npu_smi_health(
        r.output(probe.NPU_SMI_HEALTH.format(npu=row.npu_id)) or "")
    health = row.health or next((c.health for c in npu_health.chips
                                 if c.chip_id == chip_index), None)
    processes = [p for p in table.processes
                 if p.npu_id == row.npu_id and (p.chip_id in (None, row.chip_id))]
    if row.npu_id in table.idle_npus:
        processes = []
    chip = chip_for_npu_name(row.name, table.chip_header) or chip_for_pci(board.pci_device_id)
    note = unknown_name_note(row.name, table.chip_header) if row.name else None
    if chip is None and note is not None and note not in r.notes:
        r.notes.append(note)
    return NpuDevice(
        npu_id=row.npu_id, chip_id=row.chip_id, device_id=row.device_id, phy_id=row.phy_id,
        name=row.name, chip=chip, unparsed=row.unparsed,
        health=health, health_status=chip_health.status,
        error_codes=chip_health.error_codes,
        error_information=chip_health.error_information,
        bus_id=row.bus_id or board.bus_id, hbm_used_mb=row.hbm_used_mb,
        hbm_total_mb=row.hbm_total_mb, memory_used_mb=row.memory_used_mb,
        memory_total_mb=row.memory_total_mb, compatibility=board.compatibility,
        software_version=board.software_version, firmware_version=board.firmware_version,
        processes=processes)


# Parsers by the folder name of their samples under tests/data/.
PARSERS: dict[str, Callable[[Any], Any]] = {
    "npu_smi_info": parse_npu_smi_info,
    "npu_smi_list": parse_npu_smi_list,
    "npu_smi_board": parse_npu_smi_board,
    "npu_smi_health": parse_npu_smi_health,
}
