"""npu-smi: `info -l`, the board page and the health pages, with the `info` table
(npu_smi_table.py).

read_npu merges them into one NpuDevice per chip, with its chip family from chips.yaml.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ascend_env.facts.model import NpuDevice, NpuSmiFacts
from ascend_env.facts.npu_smi_table import NpuChipRow, NpuSmiInfo, parse_npu_smi_info
from ascend_env.facts.pci import chip_for_pci
from ascend_env.facts.reader import CaptureReader
from ascend_env.facts.values import none_if_na, to_int
from ascend_env.remote import probe
from ascend_env.spec.matrix import ChipName, load_chips


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
    """`npu-smi info -l`: NPU ids and chips per NPU (ids need not be 0..N-1, https://github.com/ascend-ai-coding/awesome-ascend-skills/issues/78)."""

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
    """`npu-smi info -t board -i N` (sample:
    https://github.com/Ascend/mind-cluster/blob/master/docs/en/faultdiag/user_guide/03_collecting_logs.md);
    `compatibility` is driver vs firmware."""

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
    """Both health pages, including the tab-indented multi-line alarm form (npusmi_027 and
    npusmi_028 of https://www.hiascend.com/document/detail/zh/Atlas%20200I%20A2/2520/re/npu/)."""
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
