"""Raw capture -> typed facts. Every parser is a pure function: text in, typed value out.

One parser per raw format (pyinfra style); each is tested with real captured samples in
tests/data/<parser>/. Parsers never raise on odd input: what they cannot read ends up in a
`notes` list, so one bad file never hides the rest of a host. `facts_from_capture` puts the
parsed pieces together into one `Facts` model that the check suite reads.
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields, is_dataclass
from enum import Enum
from typing import Any, Literal

from ascend_env.core.versions import AscendVersion, try_parse
from ascend_env.facts.capture import Capture, PathInfo
from ascend_env.remote import probe
from ascend_env.spec.matrix import ChipName, load_chips

FACTS_SCHEMA = "ascend-env/facts/v1"

# Facts are plain dataclasses, not pydantic models: only these parsers make them, so there is
# nothing to validate, and building their ~40 pydantic models cost every doctor ~15 ms.
# slots: assigning a misspelt field fails, as it did under pydantic.


def _none_if_na(value: str | None) -> str | None:
    """npu-smi and version files write NA (or nothing) for an unknown value."""
    if value is None:
        return None
    value = value.strip()
    return None if value in ("", "NA", "N/A", "-", "--") else value


def _int(value: str | None) -> int | None:
    value = _none_if_na(value)
    if value is None:
        return None
    try:
        return int(value, 0) if value.lower().startswith("0x") else int(value)
    except ValueError:
        return None


def _float(value: str | None) -> float | None:
    value = _none_if_na(value)
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        return None


def parse_kv(text: str, sep: str = "=") -> dict[str, str]:
    """KEY<sep>VALUE lines; blank, comment and odd lines ignored; the first key wins."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        if sep not in line or line.lstrip().startswith("#"):
            continue
        key, value = line.split(sep, 1)
        key = key.strip()
        if key and key not in out:
            out[key] = value.strip()
    return out


# -- version ranges ---------------------------------------------------------------------------

@dataclass(kw_only=True, slots=True)
class VersionRange:
    """One `[low,high]` (or `[code]`) item of a compatible_version* value; bounds inclusive.

    A high bound ending in `.` (`[23.0.0,23.0.0.]`) reads "this prefix and its patch
    releases" (ascend-facts §3.2, an interpretation); `7.5.99` likewise admits `7.5.99.x`.
    """

    low: str
    high: str

    def contains(self, version: AscendVersion | str) -> bool | None:
        """Whether `version` is in the range; None when a bound is not a version (codes)."""
        parsed = version if isinstance(version, AscendVersion) else try_parse(version)
        low = try_parse(self.low.rstrip("."))
        high_text = self.high.rstrip(".")
        high = try_parse(high_text)
        if parsed is None or low is None or high is None:
            return None
        if parsed < low:
            return False
        return parsed <= high or parsed.raw.lower().startswith(high_text.lower() + ".")


_BRACKETS = re.compile(r"\[([^\[\]]*)\]")


def parse_version_ranges(text: str) -> list[VersionRange]:
    """`[7.0.0,7.5.99]`, `[V100R001C13],[V100R001C15]`, `[23.0.rc3,23.0.rc3.],[23.0.0,23.0.0.]`."""
    ranges: list[VersionRange] = []
    for inner in _BRACKETS.findall(text):
        parts = [p.strip() for p in inner.split(",") if p.strip()]
        if len(parts) == 1:
            ranges.append(VersionRange(low=parts[0], high=parts[0]))
        elif len(parts) == 2:
            ranges.append(VersionRange(low=parts[0], high=parts[1]))
    return ranges


def any_range_contains(ranges: Iterable[VersionRange], version: AscendVersion | str
                       ) -> bool | None:
    """True if one range holds `version`, False if none does, None if none could tell."""
    answers = [r.contains(version) for r in ranges]
    if any(a is True for a in answers):
        return True
    return False if any(a is False for a in answers) else None


# -- version and install files ----------------------------------------------------------------

@dataclass(kw_only=True, slots=True)
class VersionInfo:
    """driver/version.info or firmware/version.info (ascend-facts §3.1, §3.2)."""

    version: str | None = None
    package_version: str | None = None
    inner_version: str | None = None
    compatible_version: list[VersionRange] = field(default_factory=list)
    compatible_firmware: list[VersionRange] = field(default_factory=list)
    compatible_driver: list[VersionRange] = field(default_factory=list)
    values: dict[str, str] = field(default_factory=dict)


def parse_version_info(text: str) -> VersionInfo:
    """Key=value lines of a driver/firmware version.info, compatibility lists as ranges."""
    values = parse_kv(text)
    return VersionInfo(
        version=_none_if_na(values.get("Version")),
        package_version=_none_if_na(values.get("package_version")),
        inner_version=_none_if_na(values.get("Innerversion")),
        compatible_version=parse_version_ranges(values.get("compatible_version", "")),
        compatible_firmware=parse_version_ranges(values.get("compatible_version_fw", "")),
        compatible_driver=parse_version_ranges(values.get("compatible_version_drv", "")),
        values=values,
    )


@dataclass(kw_only=True, slots=True)
class InstallInfo:
    """ascend_<package>_install.info of a CANN package (ascend-facts §3.3)."""

    package_name: str | None = None
    version: str | None = None
    inner_version: str | None = None
    compatible_version: list[VersionRange] = field(default_factory=list)
    arch: str | None = None
    os: str | None = None
    path: str | None = None
    values: dict[str, str] = field(default_factory=dict)


def parse_install_info(text: str) -> InstallInfo:
    """A toolkit/nnae/nnrt/ops install record."""
    values = parse_kv(text)
    return InstallInfo(
        package_name=_none_if_na(values.get("package_name")),
        version=_none_if_na(values.get("version")),
        inner_version=_none_if_na(values.get("innerversion")),
        compatible_version=parse_version_ranges(values.get("compatible_version", "")),
        arch=_none_if_na(values.get("arch")),
        os=_none_if_na(values.get("os")),
        path=_none_if_na(values.get("path")),
        values=values,
    )


@dataclass(kw_only=True, slots=True)
class BuildVersion:
    """One `[<component build>:<CANN version>]` item of version.cfg."""

    build: str
    version: str


@dataclass(kw_only=True, slots=True)
class VersionCfg:
    """CANN version.cfg: per component, the running/upgrade/installed build and release."""

    running: dict[str, list[BuildVersion]] = field(default_factory=dict)
    upgrade: dict[str, list[BuildVersion]] = field(default_factory=dict)
    installed: dict[str, list[BuildVersion]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def installed_version(self, component: str) -> str | None:
        items = self.installed.get(component)
        return items[-1].version if items else None


_CFG_LINE = re.compile(r"^\s*([A-Za-z0-9_]+?)_(running|upgrade|installed)_version\s*=\s*(.*)$")


def parse_version_cfg(text: str) -> VersionCfg:
    """`<component>_<running|upgrade|installed>_version=[build:version]` lines."""
    cfg = VersionCfg()
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _CFG_LINE.match(line)
        if match is None:
            cfg.notes.append(f"unparsed version.cfg line: {line.strip()[:120]}")
            continue
        component, kind, value = match.groups()
        items = []
        for inner in _BRACKETS.findall(value):
            build, sep, version = inner.rpartition(":")
            if sep and build.strip() and version.strip():
                items.append(BuildVersion(build=build.strip(), version=version.strip()))
        getattr(cfg, kind)[component] = items
    return cfg


@dataclass(kw_only=True, slots=True)
class AscendInstallRecord:
    """/etc/ascend_install.info: who runs the driver and where it is (ascend-facts §3.5)."""

    user_name: str | None = None
    user_group: str | None = None
    driver_install_type: str | None = None
    driver_install_path: str | None = None
    driver_install_for_all: bool | None = None
    driver_install_mode: str | None = None
    firmware_install_type: str | None = None
    firmware_install_path: str | None = None
    values: dict[str, str] = field(default_factory=dict)


def _yes_no(value: str | None) -> bool | None:
    if value is None:
        return None
    return {"yes": True, "y": True, "true": True, "no": False, "n": False,
            "false": False}.get(value.strip().lower())


def parse_ascend_install_info(text: str) -> AscendInstallRecord:
    """The driver/firmware install record."""
    values = parse_kv(text)
    return AscendInstallRecord(
        user_name=_none_if_na(values.get("UserName")),
        user_group=_none_if_na(values.get("UserGroup")),
        driver_install_type=_none_if_na(values.get("Driver_Install_Type")),
        driver_install_path=_none_if_na(values.get("Driver_Install_Path_Param")),
        driver_install_for_all=_yes_no(values.get("Driver_Install_For_All")),
        driver_install_mode=_none_if_na(values.get("Driver_Install_Mode")),
        firmware_install_type=_none_if_na(values.get("Firmware_Install_Type")),
        firmware_install_path=_none_if_na(values.get("Firmware_Install_Path_Param")),
        values=values,
    )


@dataclass(kw_only=True, slots=True)
class CannInstallRecord:
    """/etc/Ascend/ascend_cann_install.info: where CANN was installed."""

    install_path: str | None = None
    values: dict[str, str] = field(default_factory=dict)


def parse_cann_install_record(text: str) -> CannInstallRecord:
    values = parse_kv(text)
    return CannInstallRecord(install_path=_none_if_na(values.get("Install_Path")), values=values)


@dataclass(kw_only=True, slots=True)
class AtbVersionInfo:
    """NNAL/ATB version.info: `Key : value` lines, unlike the KEY=VALUE files (§3.6)."""

    version: str | None = None
    build: str | None = None
    platform: str | None = None
    values: dict[str, str] = field(default_factory=dict)


def parse_atb_version_info(text: str) -> AtbVersionInfo:
    values = parse_kv(text, ":")
    return AtbVersionInfo(version=_none_if_na(values.get("Ascend-cann-atb")),
                          build=_none_if_na(values.get("Ascend-cann-atb Version")),
                          platform=_none_if_na(values.get("Platform")), values=values)


def parse_set_env(text: str) -> dict[str, str]:
    """Variables a set_env.sh (or profile.d file) exports, values as written (unexpanded)."""
    out: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line.startswith("export "):
            continue
        assignment = line[len("export "):].strip()
        name, sep, value = assignment.partition("=")
        if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            continue
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        out[name] = value
    return out


# -- npu-smi --------------------------------------------------------------------------------

@dataclass(kw_only=True, slots=True)
class NpuChipRow:
    """One chip of `npu-smi info` (two table rows); a dual-chip card gives two of these."""

    npu_id: int
    chip_id: int | None = None
    device_id: int | None = None  # logical device (310P `Device` column)
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


@dataclass(kw_only=True, slots=True)
class NpuProcess:
    """A process row of `npu-smi info`: something is running on that NPU."""

    npu_id: int | None = None
    chip_id: int | None = None
    pid: int | None = None
    name: str | None = None
    memory_mb: int | None = None


@dataclass(kw_only=True, slots=True)
class NpuSmiInfo:
    """`npu-smi info`: the tool/driver versions, one row per chip, and the process table."""

    tool_version: str | None = None
    driver_version: str | None = None
    chips: list[NpuChipRow] = field(default_factory=list)
    processes: list[NpuProcess] = field(default_factory=list)
    idle_npus: list[int] = field(default_factory=list)
    error: str | None = None
    notes: list[str] = field(default_factory=list)


_TITLE = re.compile(r"npu-smi\s+(\S+)\s+Version:\s*(\S+)")
_PAIR = re.compile(r"(\S+)\s*/\s*(\S+)")
_NO_PROCESS = re.compile(r"No running processes found in NPU\s+(\d+)", re.IGNORECASE)


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _usage_names(header: str) -> list[str]:
    """Names of the used/total pairs in a header cell, e.g. ['Memory', 'HBM']."""
    return [m.split("-Usage")[0] for m in re.findall(r"([A-Za-z]+-Usage)", header)]


def _fill_usage(row: NpuChipRow, names: list[str], text: str) -> None:
    pairs = _PAIR.findall(text)
    for name, (used, total) in zip(names, pairs, strict=False):
        key = {"memory": "memory", "hbm": "hbm", "hugepages": "hugepages"}.get(name.lower())
        if key is None:
            continue
        suffix = "" if key == "hugepages" else "_mb"
        setattr(row, f"{key}_used{suffix}", _int(used))
        setattr(row, f"{key}_total{suffix}", _int(total))


def _header_kind(cells: list[str]) -> str | None:
    first = cells[0]
    if first.startswith("NPU") and len(cells) >= 2 and "Process" in cells[1]:
        return "processes"
    if first.startswith("NPU") and "Name" in first:
        return "top"
    if first.startswith("Chip") and len(cells) >= 2 and "Bus" in cells[1]:
        return "bottom"
    return None


def parse_npu_smi_info(text: str) -> NpuSmiInfo:
    """Every published layout of `npu-smi info` (ascend-facts §4.1-4.3).

    Rows are read by cells, not columns, so table width does not matter: 910B/910 tables
    (`Chip` under `NPU Name`), 310P tables (`Chip Device`, the NPU id repeated per chip),
    `NA` power or bus id, NPU ids that do not start at 0.
    """
    info = NpuSmiInfo()
    names: dict[str, list[str]] = {"top": [], "bottom": []}
    section = "devices"
    pending: list[str] | None = None  # first row of a chip, waiting for its second
    table_lines = [line.strip() for line in text.splitlines() if line.strip().startswith("|")]
    if not table_lines:
        info.error = text.strip().splitlines()[0].strip() if text.strip() else None
        return info
    info.notes += [f"unparsed npu-smi info line: {line.strip()[:120]}"
                   for line in text.splitlines()
                   if line.strip() and not line.strip().startswith(("|", "+"))]
    for line in table_lines:
        title = _TITLE.search(line)
        if title:
            info.tool_version, info.driver_version = title.group(1), title.group(2)
            continue
        cells = _cells(line)
        header = _header_kind(cells)
        if header is not None:
            section = "processes" if header == "processes" else section
            names[header] = _usage_names(cells[-1])
        elif section == "processes":
            _process_row(info, cells, line)
        elif pending is not None and _is_bus_cell(cells):
            info.chips.append(_chip_row(pending, cells, names["top"], names["bottom"]))
            pending = None
        else:
            if pending is not None:
                info.notes.append(f"npu-smi info row without its second line: {pending}")
            words = cells[0].split()
            pending = cells if len(cells) >= 3 and words and words[0].isdigit() else None
            if pending is None:
                info.notes.append(f"unparsed npu-smi info row: {line[:120]}")
    if pending is not None:
        info.notes.append(f"npu-smi info row without its second line: {pending}")
    return info


_BUS_ID = re.compile(r"^(?:[0-9A-Fa-f]{4}:)?[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]$")


def _is_bus_cell(cells: list[str]) -> bool:
    """The second row of a chip has the Bus-Id (or NA, ascend-facts §4.3) in its 2nd cell."""
    return len(cells) >= 2 and (cells[1] == "NA" or _BUS_ID.match(cells[1]) is not None)


def _chip_row(top: list[str], bottom: list[str], top_names: list[str],
              bottom_names: list[str]) -> NpuChipRow:
    head = top[0].split(maxsplit=1)
    ids = bottom[0].split()
    row = NpuChipRow(
        npu_id=int(head[0]),
        name=head[1].strip() if len(head) > 1 else None,
        health=_none_if_na(top[1]) if len(top) > 1 else None,
        chip_id=_int(ids[0]) if ids else None,
        device_id=_int(ids[1]) if len(ids) > 1 else None,
        bus_id=(_none_if_na(bottom[1]) or "").lower() or None if len(bottom) > 1 else None,
    )
    power_temp = top[2].split() if len(top) > 2 else []
    if power_temp:
        row.power_w = _float(power_temp[0])
    if len(power_temp) > 1:
        row.temp_c = _float(power_temp[1])
    _fill_usage(row, top_names or ["Hugepages"], " ".join(power_temp[2:]))
    usage = bottom[2].split(maxsplit=1) if len(bottom) > 2 else []
    if usage:
        row.aicore_pct = _float(usage[0])
    _fill_usage(row, bottom_names or ["Memory", "HBM"], usage[1] if len(usage) > 1 else "")
    return row


def _process_row(info: NpuSmiInfo, cells: list[str], line: str) -> None:
    idle = _NO_PROCESS.search(line)
    if idle:
        info.idle_npus.append(int(idle.group(1)))
        return
    ids = cells[0].split()
    if len(cells) >= 3 and ids and ids[0].isdigit():
        info.processes.append(NpuProcess(
            npu_id=_int(ids[0]), chip_id=_int(ids[1]) if len(ids) > 1 else None,
            pid=_int(cells[1]), name=_none_if_na(cells[2]),
            memory_mb=_int(cells[3]) if len(cells) > 3 else None))
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
                out.count, out.count_field = _int(value), key
            elif key == "NPU ID" and _int(value) is not None:
                entry = NpuListEntry(npu_id=_int(value) or 0)
                out.npus.append(entry)
            elif entry is not None and key == "Chip Count":
                entry.chip_count = _int(value)
            elif entry is not None and key == "Product Name":
                entry.product_name = _none_if_na(value)
            elif entry is not None and key == "Serial Number":
                entry.serial_number = _none_if_na(value)
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
    value = _none_if_na(value)
    return value.lower() if value is not None else None


def parse_npu_smi_board(text: str) -> NpuSmiBoard:
    """The board page; a wrong id gives `Invalid card id.` in `error`."""
    values: dict[str, str] = {}
    for record in _colon_records(text):
        for key, value in record:
            values.setdefault(key, value)
    board = NpuSmiBoard(
        npu_id=_int(values.get("NPU ID")),
        chip_id=_int(values.get("Chip ID")),
        software_version=_none_if_na(values.get("Software Version")),
        firmware_version=_none_if_na(values.get("Firmware Version")),
        compatibility=_none_if_na(values.get("Compatibility")),
        bus_id=_hex_id(values.get("PCIe Bus Info")),
        pci_vendor_id=_hex_id(values.get("PCI Vendor ID")),
        pci_device_id=_hex_id(values.get("PCI Device ID")),
        subsystem_vendor_id=_hex_id(values.get("Subsystem Vendor ID")),
        subsystem_device_id=_hex_id(values.get("Subsystem Device ID")),
        chip_count=_int(values.get("Chip Count")),
        product_name=_none_if_na(values.get("Product Name")),
        serial_number=_none_if_na(values.get("Serial Number")),
        board_id=_none_if_na(values.get("Board ID")),
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
            out.npu_id = _int(keys["NPU ID"])
            out.chip_count = _int(keys.get("Chip Count"))
        if "Chip ID" in keys:
            out.chips.append(ChipHealth(chip_id=_int(keys["Chip ID"]),
                                        health=_none_if_na(keys.get("Health"))))
        elif "Chip Name" in keys or ("Health" in keys and "NPU ID" not in keys):
            out.chips.append(ChipHealth(name=_none_if_na(keys.get("Chip Name")),
                                        health=_none_if_na(keys.get("Health"))))
        if "Health Status" in keys:
            out.status = _none_if_na(keys["Health Status"])
        if "Error Code" in keys:
            codes = _none_if_na(keys["Error Code"])
            out.error_codes = codes.split() if codes else []
        if "Error Information" in keys:
            info = _none_if_na(keys["Error Information"])
            out.error_information = [i.strip() for i in info.splitlines()] if info else []
    if out.npu_id is None and out.status is None and not out.chips and text.strip():
        out.error = text.strip().splitlines()[0].strip()
    return out


# -- system files and commands ----------------------------------------------------------------

@dataclass(kw_only=True, slots=True)
class LdconfigEntry:
    soname: str
    flags: str | None = None
    path: str


def parse_ldconfig(text: str) -> list[LdconfigEntry]:
    """`ldconfig -p` lines: `<soname> (<flags>) => <path>`."""
    out: list[LdconfigEntry] = []
    pattern = re.compile(r"^\s*(\S+)\s+\(([^)]*)\)\s+=>\s+(\S.*?)\s*$")
    for line in text.splitlines():
        match = pattern.match(line)
        if match:
            out.append(LdconfigEntry(soname=match.group(1), flags=match.group(2),
                                     path=match.group(3)))
    return out


@dataclass(kw_only=True, slots=True)
class OsRelease:
    id: str | None = None
    id_like: list[str] = field(default_factory=list)
    version_id: str | None = None
    version_codename: str | None = None
    name: str | None = None
    pretty_name: str | None = None
    values: dict[str, str] = field(default_factory=dict)


def parse_os_release(text: str) -> OsRelease:
    """os-release(5): shell-quoted KEY=VALUE."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        if "=" not in line or line.lstrip().startswith("#"):
            continue
        key, value = line.split("=", 1)
        try:
            words = shlex.split(value)
            value = " ".join(words)
        except ValueError:
            value = value.strip().strip("\"'")
        values[key.strip()] = value
    return OsRelease(
        id=values.get("ID") or None, id_like=values.get("ID_LIKE", "").split(),
        version_id=values.get("VERSION_ID") or None,
        version_codename=values.get("VERSION_CODENAME") or None,
        name=values.get("NAME") or None, pretty_name=values.get("PRETTY_NAME") or None,
        values=values)


@dataclass(kw_only=True, slots=True)
class PciFunction:
    """One PCI function of vendor 0x19e5 (ascend-facts §7)."""

    address: str
    vendor: str | None = None
    device: str | None = None
    subsystem_vendor: str | None = None
    subsystem_device: str | None = None
    class_code: str | None = None
    revision: str | None = None
    numa_node: int | None = None
    local_cpulist: str | None = None


def _pci_hex(value: str | None, width: int = 4) -> str | None:
    value = _none_if_na(value)
    if value is None:
        return None
    try:
        return f"0x{int(value, 16):0{width}x}"
    except ValueError:
        return None


_LSPCI = re.compile(
    r"^(?P<addr>(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+"
    r"(?P<cls>[0-9a-fA-F]{4}):\s+(?P<ven>[0-9a-fA-F]{4}):(?P<dev>[0-9a-fA-F]{4})"
    r"(?:\s+\(rev\s+(?P<rev>[0-9a-fA-F]+)\))?")


def parse_lspci(text: str) -> list[PciFunction]:
    """`lspci -n [-D] -d 19e5:` lines: `0000:c1:00.0 1200: 19e5:d802 (rev 20)`."""
    out: list[PciFunction] = []
    for line in text.splitlines():
        match = _LSPCI.match(line.strip())
        if match is None:
            continue
        addr = match.group("addr").lower()
        if addr.count(":") == 1:
            addr = "0000:" + addr
        out.append(PciFunction(address=addr, vendor=_pci_hex(match.group("ven")),
                               device=_pci_hex(match.group("dev")),
                               class_code=_pci_hex(match.group("cls")),
                               revision=_pci_hex(match.group("rev"), 2)))
    return out


def parse_pci_sysfs(devices: Mapping[str, Mapping[str, str]]) -> list[PciFunction]:
    """sysfs attribute files per PCI address (`{address: {attr: text}}`) -> functions."""
    out: list[PciFunction] = []
    for addr, attrs in sorted(devices.items()):
        cls = _pci_hex(attrs.get("class"), 6)
        out.append(PciFunction(
            address=addr.lower(), vendor=_pci_hex(attrs.get("vendor")),
            device=_pci_hex(attrs.get("device")),
            subsystem_vendor=_pci_hex(attrs.get("subsystem_vendor")),
            subsystem_device=_pci_hex(attrs.get("subsystem_device")),
            class_code=cls[:6] if cls else None,  # 0x120000 -> 0x1200, as lspci shows it
            revision=_pci_hex(attrs.get("revision"), 2),
            numa_node=_int(attrs.get("numa_node")),
            local_cpulist=_none_if_na(attrs.get("local_cpulist"))))
    return out


@dataclass(kw_only=True, slots=True)
class KernelModule:
    name: str
    size: int | None = None
    refcount: int | None = None
    used_by: list[str] = field(default_factory=list)
    state: str | None = None


def parse_proc_modules(text: str) -> list[KernelModule]:
    """/proc/modules: `name size refcount deps state address`."""
    out: list[KernelModule] = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 3 or not parts[1].isdigit():
            continue
        deps = parts[3] if len(parts) > 3 else "-"
        out.append(KernelModule(
            name=parts[0], size=_int(parts[1]), refcount=_int(parts[2]),
            used_by=[d for d in deps.split(",") if d and d != "-"],
            state=parts[4] if len(parts) > 4 else None))
    return out


def parse_lsmod(text: str) -> list[KernelModule]:
    """lsmod: `Module Size Used by` header, then `name size count [users]`."""
    out: list[KernelModule] = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 3 or not parts[1].isdigit():
            continue
        users = parts[3].split(",") if len(parts) > 3 else []
        out.append(KernelModule(name=parts[0], size=_int(parts[1]), refcount=_int(parts[2]),
                                used_by=[u for u in users if u]))
    return out


def parse_cpu_list(text: str) -> list[int]:
    """Kernel CPU list syntax: `0-3,8,10-11` -> [0, 1, 2, 3, 8, 10, 11]."""
    cpus: list[int] = []
    for part in text.strip().split(","):
        low, sep, high = part.strip().partition("-")
        if low.isdigit() and (not sep or high.isdigit()):
            stop = int(high) if sep else int(low)
            cpus.extend(range(int(low), min(stop, int(low) + 65536) + 1))
    return sorted(set(cpus))


@dataclass(kw_only=True, slots=True)
class CpuEntry:
    cpu: int
    core: int | None = None
    socket: int | None = None
    node: int | None = None


def parse_lscpu(text: str) -> list[CpuEntry]:
    """`lscpu -p=CPU,CORE,SOCKET,NODE`: one comma line per logical CPU (empty NODE allowed)."""
    out: list[CpuEntry] = []
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        parts = line.strip().split(",")
        if not parts[0].isdigit():
            continue
        fields = [_int(p) if p else None for p in parts[1:4]] + [None, None, None]
        out.append(CpuEntry(cpu=int(parts[0]), core=fields[0], socket=fields[1], node=fields[2]))
    return out


@dataclass(kw_only=True, slots=True)
class IdInfo:
    uid: int | None = None
    user: str | None = None
    gid: int | None = None
    group: str | None = None
    groups: dict[str, int] = field(default_factory=dict)  # group name -> gid


_ID_PART = re.compile(r"(\d+)(?:\(([^)]*)\))?")


def parse_id(text: str) -> IdInfo:
    """`id` output: `uid=0(root) gid=0(root) groups=0(root),27(sudo)`."""
    out = IdInfo()
    for item in text.split():
        key, sep, value = item.partition("=")
        if not sep:
            continue
        parts = [(int(m.group(1)), m.group(2)) for m in _ID_PART.finditer(value)]
        if key == "uid" and parts:
            out.uid, out.user = parts[0]
        elif key == "gid" and parts:
            out.gid, out.group = parts[0]
        elif key == "groups":
            out.groups = {name or str(gid): gid for gid, name in parts}
    return out


@dataclass(kw_only=True, slots=True)
class PasswdEntry:
    name: str
    uid: int | None = None
    gid: int | None = None
    home: str | None = None
    shell: str | None = None


def parse_getent_passwd(text: str) -> PasswdEntry | None:
    for line in text.splitlines():
        parts = line.strip().split(":")
        if len(parts) >= 7 and parts[0]:
            return PasswdEntry(name=parts[0], uid=_int(parts[2]), gid=_int(parts[3]),
                               home=parts[5] or None, shell=parts[6] or None)
    return None


@dataclass(kw_only=True, slots=True)
class GroupEntry:
    name: str
    gid: int | None = None
    members: list[str] = field(default_factory=list)


def parse_getent_group(text: str) -> GroupEntry | None:
    for line in text.splitlines():
        parts = line.strip().split(":")
        if len(parts) >= 4 and parts[0]:
            return GroupEntry(name=parts[0], gid=_int(parts[2]),
                              members=[m for m in parts[3].split(",") if m])
    return None


SelinuxMode = Literal["enforcing", "permissive", "disabled"]


def parse_getenforce(text: str) -> SelinuxMode | None:
    word = text.strip().lower()
    return word if word in ("enforcing", "permissive", "disabled") else None  # type: ignore[return-value]


def parse_sestatus(text: str) -> dict[str, str]:
    """sestatus `Key:   value` lines, keys lower-cased."""
    return {k.lower(): v for k, v in parse_kv(text, ":").items()}


def parse_ls_labels(text: str) -> dict[str, str]:
    """`ls -Zd PATH...` lines: `<label> <path>`; `?` means no label."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        label, sep, path = line.strip().partition(" ")
        if sep and label != "?" and path.startswith("/"):
            out[path.strip()] = label
    return out


def parse_env0(text: str) -> dict[str, str]:
    """`env -0` output: NAME=value items separated by NUL bytes (values may span lines)."""
    out: dict[str, str] = {}
    for item in text.split("\0"):
        name, sep, value = item.partition("=")
        name = name.strip("\n")
        if sep and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            out[name] = value
    return out


@dataclass(kw_only=True, slots=True)
class PythonEnv:
    """The framework interpreter and its installed distributions (names PEP 503-normalised)."""

    executable: str | None = None
    version: str | None = None
    prefix: str | None = None
    distributions: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def normalize_dist(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_python_distributions(text: str) -> PythonEnv:
    """The JSON the probe's distributions snippet prints."""
    try:
        doc = json.loads(text)
    except ValueError:
        return PythonEnv(notes=[f"unparsed distributions output: {text.strip()[:120]}"])
    if not isinstance(doc, dict):
        return PythonEnv(notes=["distributions output is not an object"])
    dists: dict[str, str] = {}
    for item in doc.get("distributions") or []:
        if isinstance(item, list) and len(item) >= 2 and item[0] and item[1]:
            # The first entry on sys.path wins, as it does for an import.
            dists.setdefault(normalize_dist(str(item[0])), str(item[1]))
    return PythonEnv(executable=_str_or_none(doc.get("executable")),
                     version=_str_or_none(doc.get("version")),
                     prefix=_str_or_none(doc.get("prefix")), distributions=dict(sorted(
                         dists.items())))


def _str_or_none(value: object) -> str | None:
    return str(value) if isinstance(value, str | int | float) and str(value) else None


# Parsers by the folder name of their samples under tests/data/ (test discovery reads this).
PARSERS: dict[str, Callable[[Any], Any]] = {
    "version_info": parse_version_info,
    "install_info": parse_install_info,
    "version_cfg": parse_version_cfg,
    "ascend_install_info": parse_ascend_install_info,
    "cann_install_record": parse_cann_install_record,
    "atb_version_info": parse_atb_version_info,
    "set_env": parse_set_env,
    "env0": parse_env0,
    "npu_smi_info": parse_npu_smi_info,
    "npu_smi_list": parse_npu_smi_list,
    "npu_smi_board": parse_npu_smi_board,
    "npu_smi_health": parse_npu_smi_health,
    "ldconfig": parse_ldconfig,
    "os_release": parse_os_release,
    "lspci": parse_lspci,
    "pci_sysfs": parse_pci_sysfs,
    "proc_modules": parse_proc_modules,
    "lsmod": parse_lsmod,
    "lscpu": parse_lscpu,
    "cpu_list": parse_cpu_list,
    "id": parse_id,
    "getent_passwd": parse_getent_passwd,
    "getent_group": parse_getent_group,
    "getenforce": parse_getenforce,
    "sestatus": parse_sestatus,
    "ls_labels": parse_ls_labels,
    "python_distributions": parse_python_distributions,
    "version_ranges": parse_version_ranges,
}


# =============================================================================================
# Facts: the capture put together
# =============================================================================================

@dataclass(kw_only=True, slots=True)
class OsFacts:
    id: str | None = None
    id_like: list[str] = field(default_factory=list)
    version_id: str | None = None
    pretty_name: str | None = None
    kernel: str | None = None


@dataclass(kw_only=True, slots=True)
class PciCard:
    """A Huawei PCI function with its chip family and product from chips.yaml."""

    address: str
    device: str | None = None
    subsystem: str | None = None  # '<subsystem vendor>:<subsystem device>'
    class_code: str | None = None
    chip: ChipName | None = None
    product: str | None = None
    numa_node: int | None = None
    kernel_driver: str | None = None  # driver bound in sysfs, if any


@dataclass(kw_only=True, slots=True)
class DriverFacts:
    version: AscendVersion | None = None
    version_raw: str | None = None
    package_version: str | None = None
    inner_version: str | None = None
    install_path: str
    complete: bool  # driver/tools/upgrade-tool present (ADEP26's test)
    compatible_firmware: list[VersionRange] = field(default_factory=list)
    compatible_cann: list[VersionRange] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class FirmwareFacts:
    version: AscendVersion | None = None
    version_raw: str | None = None
    package_version: str | None = None
    install_path: str
    compatible_driver: list[VersionRange] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class CannPackage:
    """One installed CANN package: toolkit, kernels (<= 8.3) or ops (8.5+), nnal, nnae..."""

    name: str
    version: str | None = None
    path: str | None = None
    arch: str | None = None
    source: str  # the file the version was read from


@dataclass(kw_only=True, slots=True)
class CannFacts:
    version: AscendVersion | None = None
    version_raw: str | None = None
    layout: Literal["old", "new"]
    install_path: str
    home: str  # the active toolkit folder, links resolved
    arch: str | None = None
    packages: dict[str, CannPackage] = field(default_factory=dict)
    installed_versions: list[str] = field(default_factory=list)
    # version.cfg installed version per component
    components: dict[str, str] = field(default_factory=dict)
    # opp/.../tbe/kernel/<soc> folders (ops/kernels)
    kernel_socs: list[str] = field(default_factory=list)
    set_env: str | None = None  # the documented set_env.sh, if present


@dataclass(kw_only=True, slots=True)
class NpuSmiFacts:
    """Whether npu-smi ran, and what it said overall."""

    available: bool = False
    rc: int | None = None
    error: str | None = None
    tool_version: str | None = None
    driver_version: str | None = None
    listed_ids: list[int] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class NpuDevice:
    """One chip as npu-smi reports it, with its board and health pages merged in."""

    npu_id: int
    chip_id: int | None = None
    device_id: int | None = None
    name: str | None = None
    chip: ChipName | None = None
    health: str | None = None
    health_status: str | None = None  # chip-level `Health Status`
    error_codes: list[str] = field(default_factory=list)
    error_information: list[str] = field(default_factory=list)
    bus_id: str | None = None
    hbm_used_mb: int | None = None
    hbm_total_mb: int | None = None
    memory_used_mb: int | None = None
    memory_total_mb: int | None = None
    compatibility: str | None = None
    software_version: str | None = None
    firmware_version: str | None = None
    processes: list[NpuProcess] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class DeviceNode:
    path: str
    type: str
    mode: str | None = None
    owner: str | None = None
    group: str | None = None
    uid: int | None = None
    gid: int | None = None
    rdev: str | None = None
    label: str | None = None


@dataclass(kw_only=True, slots=True)
class ModuleFacts:
    source: str | None = None  # /proc/modules, lsmod or /sys/module
    loaded: list[str] = field(default_factory=list)
    driver_loaded: bool | None = None


@dataclass(kw_only=True, slots=True)
class EnvFacts:
    """The probe's environment: what a job started the same way would get."""

    vars: dict[str, str] = field(default_factory=dict)
    ld_library_path: list[str] = field(default_factory=list)
    pythonpath: list[str] = field(default_factory=list)
    path: list[str] = field(default_factory=list)
    ascend_home_path: str | None = None
    toolkit_home: str | None = None
    opp_path: str | None = None
    sourced: bool = False  # a CANN set_env.sh was sourced (ASCEND_* set)
    # what `bash -l` gets (allow-listed); None = not captured
    login_vars: dict[str, str] | None = None
    login_sourced: bool | None = None
    threads: dict[str, str] = field(default_factory=dict)
    profile_files: dict[str, dict[str, str]] = field(default_factory=dict)
    set_env_scripts: dict[str, dict[str, str]] = field(default_factory=dict)


@dataclass(kw_only=True, slots=True)
class LibraryFacts:
    """Where one soname is: the loader cache, LD_LIBRARY_PATH, the Ascend folders."""

    soname: str
    ldconfig: list[str] = field(default_factory=list)
    ld_library_path: list[str] = field(default_factory=list)
    on_disk: list[str] = field(default_factory=list)
    resolvable: bool = False


@dataclass(kw_only=True, slots=True)
class FrameworkFacts:
    python: PythonEnv | None = None
    torch: str | None = None
    torch_npu: str | None = None
    mindspore: str | None = None
    mindspore_dist: str | None = None  # 'mindspore' or the old 'mindspore-ascend'
    error: str | None = None


@dataclass(kw_only=True, slots=True)
class SelinuxFacts:
    mode: SelinuxMode | None = None  # current mode; None = unknown
    config_mode: str | None = None
    config_type: str | None = None
    labels: dict[str, str] = field(default_factory=dict)


@dataclass(kw_only=True, slots=True)
class CpuFacts:
    logical_cpus: int | None = None
    online: list[int] = field(default_factory=list)
    physical_cores: int | None = None
    sockets: int | None = None
    threads_per_core: int | None = None
    numa_nodes: dict[int, list[int]] = field(default_factory=dict)
    affinity: list[int] | None = None  # CPUs the probe may run on
    cgroup_cpus: float | None = None  # cpu.max quota in CPUs; None = none
    source: str | None = None


@dataclass(kw_only=True, slots=True)
class UserFacts:
    driver_user: str = probe.DRIVER_USER
    driver_group: str = probe.DRIVER_USER
    driver_user_entry: PasswdEntry | None = None
    driver_group_entry: GroupEntry | None = None
    invoking: IdInfo | None = None
    invoking_in_driver_group: bool | None = None
    others: dict[str, IdInfo] = field(default_factory=dict)


@dataclass(kw_only=True, slots=True)
class ContainerFacts:
    in_container: bool = False
    kind: str | None = None
    mounts: list[str] = field(default_factory=list)  # Ascend-related mount points


@dataclass(kw_only=True, slots=True)
class Facts:
    """Everything the checks read about one host. Absent things are None or empty."""

    schema_: str = field(default=FACTS_SCHEMA, metadata={"alias": "schema"})
    host: str = ""
    captured_at: str = ""
    os: OsFacts | None = None
    arch: str | None = None
    container: ContainerFacts = field(default_factory=ContainerFacts)
    pci: list[PciCard] = field(default_factory=list)
    chip: ChipName | None = None  # the chip family, when the cards agree
    install_record: AscendInstallRecord | None = None
    driver: DriverFacts | None = None
    firmware: FirmwareFacts | None = None
    cann: CannFacts | None = None
    npu_smi: NpuSmiFacts = field(default_factory=NpuSmiFacts)
    devices: list[NpuDevice] = field(default_factory=list)
    device_nodes: list[DeviceNode] = field(default_factory=list)
    modules: ModuleFacts = field(default_factory=ModuleFacts)
    env: EnvFacts = field(default_factory=EnvFacts)
    libraries: dict[str, LibraryFacts] = field(default_factory=dict)
    frameworks: FrameworkFacts = field(default_factory=FrameworkFacts)
    selinux: SelinuxFacts = field(default_factory=SelinuxFacts)
    cpu: CpuFacts = field(default_factory=CpuFacts)
    users: UserFacts = field(default_factory=UserFacts)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The facts as JSON data, with `schema` spelled as the other documents spell it."""
        data: dict[str, Any] = _jsonable(self)
        return data


def _jsonable(value: Any) -> Any:
    """Facts as JSON data, the way pydantic dumped them when these were pydantic models:
    versions as their raw spelling, keys made strings, a field's `alias` metadata as its key."""
    if isinstance(value, Enum):
        value = value.value
    if value is None or isinstance(value, str | int | float):
        return value
    if isinstance(value, AscendVersion):  # a dataclass too, so before the dataclass case
        return value.raw
    if isinstance(value, list | tuple):
        return [_jsonable(item) for item in value]
    if isinstance(value, dict):
        return {str(_jsonable(key)): _jsonable(item) for key, item in value.items()}
    if is_dataclass(value):
        return {f.metadata.get("alias", f.name): _jsonable(getattr(value, f.name))
                for f in fields(value)}
    raise TypeError(f"facts hold a {type(value).__name__}, which has no JSON form")


# -- assembling -------------------------------------------------------------------------------

def chip_for_pci(device: str | None) -> ChipName | None:
    if device is None:
        return None
    for chip in load_chips().chips.values():
        if chip.pci_device_id.lower() == device.lower():
            return chip.name
    return None


def chip_for_npu_name(name: str | None) -> ChipName | None:
    if name is None:
        return None
    for chip in load_chips().chips.values():
        if name in chip.npu_smi_names:
            return chip.name
    return None


def _product(chip: ChipName | None, subsystem: str | None) -> str | None:
    if chip is None or subsystem is None:
        return None
    found = load_chips().chips.get(chip)
    return found.pci_subsystems.get(subsystem) if found else None


class _Builder:
    """Reads one capture; every step catches its own trouble into `notes`."""

    def __init__(self, capture: Capture) -> None:
        self.c = capture
        self.notes: list[str] = []

    def file(self, path: str) -> str | None:
        return self.c.files.get(path)

    def output(self, key: str) -> str | None:
        return self.c.output(key)

    def version(self, raw: str | None, what: str) -> AscendVersion | None:
        if raw is None:
            return None
        parsed = try_parse(raw)
        if parsed is None:
            self.notes.append(f"{what}: {raw!r} is not a version in any known vendor form")
        return parsed

    def resolved(self, path: str) -> str:
        info = self.c.paths.get(path)
        if info is not None and info.type == "link" and info.resolved:
            return info.resolved
        return path

    def exists(self, path: str) -> bool:
        info = self.c.paths.get(path)
        return info is not None and info.exists

    def install_paths(self) -> list[str]:
        paths = [p for p in self.c.options.get("install_paths") or [] if isinstance(p, str)]
        record = parse_ascend_install_info(self.file("/etc/ascend_install.info") or "")
        for extra in (self.c.options.get("install_path"), record.driver_install_path,
                      probe.DEFAULT_INSTALL_PATH):
            if isinstance(extra, str) and extra not in paths:
                paths.append(extra)
        return paths

    # each part ---------------------------------------------------------------------------

    def os_facts(self) -> OsFacts | None:
        text = self.file("/etc/os-release") or self.file("/usr/lib/os-release")
        kernel = ((self.output(probe.UNAME_R) or "").strip()
                  or (self.file("/proc/sys/kernel/osrelease") or "").strip()
                  or self.c.uname.get("release"))
        if text is None and not kernel:
            return None
        rel = parse_os_release(text or "")
        return OsFacts(id=rel.id, id_like=rel.id_like, version_id=rel.version_id,
                       pretty_name=rel.pretty_name, kernel=kernel or None)

    def arch(self) -> str | None:
        return ((self.output(probe.UNAME_M) or "").strip() or self.c.uname.get("machine")
                or None)

    def pci(self) -> list[PciCard]:
        devices: dict[str, dict[str, str]] = {}
        prefix = "/sys/bus/pci/devices/"
        for path, text in self.c.files.items():
            if path.startswith(prefix):
                addr, _, attr = path[len(prefix):].partition("/")
                if attr in probe.PCI_ATTRS:
                    devices.setdefault(addr, {})[attr] = text
        functions = parse_pci_sysfs(devices)
        known = {f.address for f in functions}
        lspci = self.output(probe.LSPCI)
        if lspci:
            functions += [f for f in parse_lspci(lspci) if f.address not in known]
        cards = []
        for f in functions:
            if f.vendor != probe.HUAWEI_PCI_VENDOR:
                continue
            chip = chip_for_pci(f.device)
            subsystem = (f"{f.subsystem_vendor}:{f.subsystem_device}"
                         if f.subsystem_vendor and f.subsystem_device else None)
            driver = self.c.paths.get(f"{prefix}{f.address}/driver")
            cards.append(PciCard(
                address=f.address, device=f.device, subsystem=subsystem,
                class_code=f.class_code, chip=chip, product=_product(chip, subsystem),
                numa_node=f.numa_node if f.numa_node is not None and f.numa_node >= 0 else None,
                kernel_driver=posixpath.basename(driver.target) if driver and driver.target
                else None))
        return cards

    def driver(self, record: AscendInstallRecord) -> DriverFacts | None:
        for base in _unique([record.driver_install_path, *self.install_paths()]):
            text = self.file(f"{base}/driver/version.info")
            if text is None:
                continue
            info = parse_version_info(text)
            return DriverFacts(
                version=self.version(info.version, f"{base}/driver/version.info Version"),
                version_raw=info.version, package_version=info.package_version,
                inner_version=info.inner_version, install_path=base,
                complete=self.exists(f"{base}/driver/tools/upgrade-tool"),
                compatible_firmware=info.compatible_firmware,
                compatible_cann=info.compatible_version)
        return None

    def firmware(self, record: AscendInstallRecord) -> FirmwareFacts | None:
        for base in _unique([record.firmware_install_path, *self.install_paths()]):
            text = self.file(f"{base}/firmware/version.info")
            if text is None:
                continue
            info = parse_version_info(text)
            return FirmwareFacts(
                version=self.version(info.version, f"{base}/firmware/version.info Version"),
                version_raw=info.version, package_version=info.package_version,
                install_path=base, compatible_driver=info.compatible_driver)
        return None

    def cann(self, arch: str | None) -> CannFacts | None:
        record = parse_cann_install_record(
            self.file("/etc/Ascend/ascend_cann_install.info") or "")
        for base in _unique([record.install_path, *self.install_paths()]):
            found = self.cann_at(base, arch)
            if found is not None:
                return found
        return None

    def cann_at(self, base: str, arch: str | None) -> CannFacts | None:
        # New layout (8.5+): <base>/cann -> cann-<ver>; old: ascend-toolkit/latest -> <ver>.
        candidates: list[tuple[str, Literal["old", "new"]]] = [
            (f"{base}/cann", "new"), (f"{base}/ascend-toolkit/latest", "old")]
        # Without a `latest`/`cann` link (an interrupted install), the newest version folder.
        for version in reversed(self.installed_versions(base)):
            candidates += [(f"{base}/cann-{version}", "new"),
                           (f"{base}/ascend-toolkit/{version}", "old")]
        for logical, named_layout in candidates:
            info_path, info = self.toolkit_info(logical, arch)
            cfg_text = self.file(f"{logical}/version.cfg")
            if info is None and cfg_text is None:
                continue
            if not logical.endswith(("/cann", "/latest")):
                self.notes.append(f"no ascend-toolkit/latest or cann link under {base}; "
                                  f"reading {logical}")
            cfg = parse_version_cfg(cfg_text or "")
            home = self.resolved(logical)
            # ascend-toolkit/latest is kept on 8.5+ as a link into cann-<ver>.
            layout: Literal["old", "new"] = (
                "new" if posixpath.basename(home).startswith("cann-") else named_layout)
            raw = (info.version if info else None) or cfg.installed_version("toolkit") or \
                parse_kv(self.file(f"{logical}/compiler/version.info") or "").get("Version")
            packages: dict[str, CannPackage] = {}
            if info is not None and info_path is not None:
                packages["toolkit"] = CannPackage(name="toolkit", version=info.version,
                                                  path=info.path, arch=info.arch,
                                                  source=info_path)
            elif raw:
                packages["toolkit"] = CannPackage(name="toolkit", version=raw,
                                                  source=f"{logical}/version.cfg")
            kernels = cfg.installed_version("opp_kernel")
            if kernels:
                name = "ops" if layout == "new" else "kernels"
                packages[name] = CannPackage(name=name, version=kernels,
                                             source=f"{logical}/version.cfg")
            self.other_install_infos(logical, packages)
            self.runtime_packages(base, packages)
            set_env = next((p for p in (f"{base}/cann/set_env.sh",
                                        f"{base}/ascend-toolkit/set_env.sh")
                            if self.exists(p) or p in self.c.files), None)
            return CannFacts(
                version=self.version(raw, f"CANN version in {logical}"), version_raw=raw,
                layout=layout, install_path=base, home=home,
                arch=(info.arch if info else None) or arch,
                packages=packages, installed_versions=self.installed_versions(base),
                components={k: v[-1].version for k, v in cfg.installed.items() if v},
                kernel_socs=list(self.c.listings.get(
                    f"{logical}/opp/built-in/op_impl/ai_core/tbe/kernel", [])),
                set_env=set_env)
        return None

    def toolkit_info(self, home: str, arch: str | None) -> tuple[str | None, InstallInfo | None]:
        paths = sorted(p for p in self.c.files
                       if p.startswith(home + "/") and p.endswith("/ascend_toolkit_install.info")
                       and p.count("/") == home.count("/") + 2)
        if not paths:
            return None, None
        preferred = [p for p in paths if arch and f"/{arch}-linux/" in p]
        chosen = (preferred or paths)[0]
        return chosen, parse_install_info(self.c.files[chosen])

    def other_install_infos(self, home: str, packages: dict[str, CannPackage]) -> None:
        """ops/kernels packages that leave an install record of their own."""
        for path, text in sorted(self.c.files.items()):
            if not (path.startswith(home + "/") and path.endswith("_install.info")):
                continue
            info = parse_install_info(text)
            name = (info.package_name or "").lower()
            kind = "ops" if name.endswith("-ops") else "kernels" if "kernels" in name else None
            if kind is not None and kind not in packages:
                packages[kind] = CannPackage(name=kind, version=info.version, path=info.path,
                                             arch=info.arch, source=path)

    def runtime_packages(self, base: str, packages: dict[str, CannPackage]) -> None:
        nnal = f"{base}/nnal/atb/latest/atb/version.info"
        if nnal not in self.c.files:
            target = self.resolved(f"{base}/nnal/atb/latest")
            nnal = f"{target}/atb/version.info"
        if nnal in self.c.files:
            atb = parse_atb_version_info(self.c.files[nnal])
            packages["nnal"] = CannPackage(name="nnal", version=atb.version,
                                           arch=atb.platform, path=f"{base}/nnal/atb",
                                           source=nnal)
        for name, pattern in (("nnae", f"{base}/nnae/latest/ascend_nnae_install.info"),
                              ("tfplugin", f"{base}/tfplugin/latest/ascend_tfplugin_install.info")):
            if pattern in self.c.files:
                info = parse_install_info(self.c.files[pattern])
                packages[name] = CannPackage(name=name, version=info.version, path=info.path,
                                             arch=info.arch, source=pattern)
        for path in sorted(self.c.files):
            if path.startswith(f"{base}/nnrt/latest/") and path.endswith("nnrt_install.info"):
                info = parse_install_info(self.c.files[path])
                packages["nnrt"] = CannPackage(name="nnrt", version=info.version, path=info.path,
                                               arch=info.arch, source=path)

    def installed_versions(self, base: str) -> list[str]:
        versions = [n for n in self.c.listings.get(f"{base}/ascend-toolkit", [])
                    if n not in ("latest", "set_env.sh") and try_parse(n) is not None]
        versions += [n[len("cann-"):] for n in self.c.listings.get(base, [])
                     if n.startswith("cann-")]
        return sorted(set(versions), key=lambda v: try_parse(v) or AscendVersion.parse("0.0.0"))

    def npu(self) -> tuple[NpuSmiFacts, list[NpuDevice]]:
        facts = NpuSmiFacts()
        result = self.c.commands.get(probe.NPU_SMI_INFO)
        listing = self.c.commands.get(probe.NPU_SMI_LIST)
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
        self.notes += table.notes
        facts.tool_version, facts.driver_version = table.tool_version, table.driver_version
        ids = parse_npu_smi_list(listing.stdout) if listing and listing.ok else NpuSmiList()
        facts.listed_ids = [n.npu_id for n in ids.npus]
        devices = [self.device(row, table) for row in table.chips]
        seen = {d.npu_id for d in devices}
        for entry in ids.npus:  # listed but missing from the table: still a device to report
            if entry.npu_id not in seen:
                devices.append(self.device(NpuChipRow(npu_id=entry.npu_id), table))
        return facts, devices

    def device(self, row: NpuChipRow, table: NpuSmiInfo) -> NpuDevice:
        board = parse_npu_smi_board(
            self.output(probe.NPU_SMI_BOARD.format(npu=row.npu_id)) or "")
        chip_index = row.chip_id if row.chip_id is not None else 0
        chip_health = parse_npu_smi_health(self.output(
            probe.NPU_SMI_CHIP_HEALTH.format(npu=row.npu_id, chip=chip_index)) or "")
        npu_health = parse_npu_smi_health(
            self.output(probe.NPU_SMI_HEALTH.format(npu=row.npu_id)) or "")
        health = row.health or next((c.health for c in npu_health.chips
                                     if c.chip_id == chip_index), None)
        processes = [p for p in table.processes
                     if p.npu_id == row.npu_id and (p.chip_id in (None, row.chip_id))]
        if row.npu_id in table.idle_npus:
            processes = []
        return NpuDevice(
            npu_id=row.npu_id, chip_id=row.chip_id, device_id=row.device_id, name=row.name,
            chip=chip_for_npu_name(row.name) or chip_for_pci(board.pci_device_id),
            health=health, health_status=chip_health.status,
            error_codes=chip_health.error_codes,
            error_information=chip_health.error_information,
            bus_id=row.bus_id or board.bus_id, hbm_used_mb=row.hbm_used_mb,
            hbm_total_mb=row.hbm_total_mb, memory_used_mb=row.memory_used_mb,
            memory_total_mb=row.memory_total_mb, compatibility=board.compatibility,
            software_version=board.software_version, firmware_version=board.firmware_version,
            processes=processes)

    def device_nodes(self) -> list[DeviceNode]:
        nodes = []
        for path, info in sorted(self.c.paths.items(), key=lambda kv: _natural(kv[0])):
            name = posixpath.basename(path)
            if not path.startswith("/dev/") or not info.exists:
                continue
            if re.fullmatch(r"v?davinci\d+", name) or name in probe.DEVICE_NODES:
                nodes.append(_node(path, info))
        return nodes

    def modules(self) -> ModuleFacts:
        text = self.file("/proc/modules")
        names: list[str]
        if text:
            names, source = [m.name for m in parse_proc_modules(text)], "/proc/modules"
        elif self.output(probe.LSMOD):
            names, source = [m.name for m in parse_lsmod(self.output(probe.LSMOD) or "")], "lsmod"
        elif "/sys/module" in self.c.listings:
            # Without /proc/modules (some containers, chroots) /sys/module still names them,
            # though built-in modules are listed there too.
            names, source = self.c.listings["/sys/module"], "/sys/module"
        else:
            return ModuleFacts()
        loaded = sorted(n for n in names if n.startswith(("drv_", "ascend")) or "davinci" in n)
        return ModuleFacts(source=source, loaded=loaded, driver_loaded=bool(loaded))

    def env(self) -> EnvFacts:
        env = dict(self.c.env)

        def split(name: str) -> list[str]:
            return [p for p in env.get(name, "").split(":") if p]

        threads = {k: v for k, v in env.items()
                   if k.startswith(("OMP_", "KMP_", "GOMP_", "MKL_", "OPENBLAS_"))
                   or k in ("TASK_QUEUE_ENABLE", "CPU_AFFINITY_CONF", "NUMEXPR_NUM_THREADS")}
        profile = {p: parse_set_env(t) for p, t in self.c.files.items()
                   if p.startswith("/etc/profile.d/")}
        scripts = {p: parse_set_env(t) for p, t in self.c.files.items()
                   if p.endswith("/set_env.sh")}
        home = env.get("ASCEND_HOME_PATH") or None
        toolkit = env.get("ASCEND_TOOLKIT_HOME") or None
        login_text = self.output(probe.LOGIN_ENV)
        login = parse_env0(login_text) if login_text is not None else None
        return EnvFacts(vars=env, ld_library_path=split("LD_LIBRARY_PATH"),
                        login_vars=login,
                        login_sourced=None if login is None else bool(
                            login.get("ASCEND_HOME_PATH") or login.get("ASCEND_TOOLKIT_HOME")),
                        pythonpath=split("PYTHONPATH"), path=split("PATH"),
                        ascend_home_path=home, toolkit_home=toolkit,
                        opp_path=env.get("ASCEND_OPP_PATH") or None,
                        sourced=bool(home or toolkit), threads=threads,
                        profile_files=profile, set_env_scripts=scripts)

    def libraries(self, ld_path: list[str]) -> dict[str, LibraryFacts]:
        result = self.c.commands.get(probe.LDCONFIG)
        cache = parse_ldconfig(result.stdout) if result and result.ok else []
        out: dict[str, LibraryFacts] = {}
        ld_dirs = [posixpath.normpath(d) for d in ld_path if d.startswith("/")]
        for soname in probe.ASCEND_SONAMES:
            lib = LibraryFacts(soname=soname)
            lib.ldconfig = [e.path for e in cache if e.soname.split(".so")[0] + ".so" == soname]
            for folder, names in self.c.listings.items():
                hits = [f"{folder}/{n}" for n in names if n.split(".so")[0] + ".so" == soname]
                lib.on_disk += hits
                if folder in ld_dirs:
                    lib.ld_library_path += hits
            lib.resolvable = bool(lib.ldconfig or lib.ld_library_path)
            out[soname] = lib
        return out

    def frameworks(self) -> FrameworkFacts:
        result = self.c.commands.get(probe.FRAMEWORK_PYTHON)
        if result is None:
            return FrameworkFacts()
        if not result.ok:
            return FrameworkFacts(error=(result.stderr.strip() or f"exit status {result.rc}")
                                  .splitlines()[-1])
        env = parse_python_distributions(result.stdout)
        self.notes += env.notes
        dists = env.distributions
        ms_name = next((n for n in ("mindspore", "mindspore-ascend") if n in dists), None)
        return FrameworkFacts(python=env, torch=dists.get("torch"),
                              torch_npu=dists.get("torch-npu"),
                              mindspore=dists.get(ms_name) if ms_name else None,
                              mindspore_dist=ms_name)

    def selinux(self) -> SelinuxFacts:
        mode = parse_getenforce(self.output(probe.GETENFORCE) or "")
        enforce = (self.file("/sys/fs/selinux/enforce") or "").strip()
        if mode is None and enforce in ("0", "1"):
            mode = "enforcing" if enforce == "1" else "permissive"
        status = parse_sestatus(self.output(probe.SESTATUS) or "")
        if mode is None and status.get("selinux status") == "disabled":
            mode = "disabled"
        config = parse_kv(self.file("/etc/selinux/config") or "")
        labels = {p: i.label for p, i in self.c.paths.items() if i.label}
        ls = self.c.commands.get(probe.LS_LABELS)
        if ls and ls.ok:
            root = self.c.root.rstrip("/")
            for path, label in parse_ls_labels(ls.stdout).items():
                labels.setdefault(path[len(root):] if root and path.startswith(root) else path,
                                  label)
        return SelinuxFacts(mode=mode, config_mode=config.get("SELINUX") or None,
                            config_type=config.get("SELINUXTYPE") or None,
                            labels=dict(sorted(labels.items())))

    def cpu(self) -> CpuFacts:
        # Copied: facts share no list with the capture (pydantic copied them on validation).
        affinity = self.c.process.affinity
        facts = CpuFacts(affinity=list(affinity) if affinity is not None else None)
        cores: dict[int, tuple[int | None, int | None]] = {}
        nodes: dict[int, list[int]] = {}
        base = "/sys/devices/system/cpu/cpu"
        for path, text in self.c.files.items():
            match = re.fullmatch(rf"{base}(\d+)/topology/(core_id|physical_package_id)", path)
            if match:
                cpu = int(match.group(1))
                core, pkg = cores.get(cpu, (None, None))
                value = _int(text)
                cores[cpu] = (value, pkg) if match.group(2) == "core_id" else (core, value)
            node = re.fullmatch(r"/sys/devices/system/node/node(\d+)/cpulist", path)
            if node:
                nodes[int(node.group(1))] = parse_cpu_list(text)
        entries = [CpuEntry(cpu=cpu, core=core, socket=pkg) for cpu, (core, pkg) in cores.items()]
        facts.source = "sysfs" if entries else None
        lscpu = self.output(probe.LSCPU)
        if not entries and lscpu:
            entries, facts.source = parse_lscpu(lscpu), "lscpu"
            if not nodes:  # sysfs node lists, where captured, are the better source
                for e in entries:
                    if e.node is not None:
                        nodes.setdefault(e.node, []).append(e.cpu)
        online = self.file("/sys/devices/system/cpu/online")
        facts.online = parse_cpu_list(online) if online else sorted(e.cpu for e in entries)
        if entries:
            facts.logical_cpus = len(entries)
            physical = {(e.socket, e.core) for e in entries}
            facts.physical_cores = len(physical)
            facts.sockets = len({e.socket for e in entries})
            facts.threads_per_core = max(1, round(len(entries) / max(1, len(physical))))
        elif self.c.process.cpu_count:
            facts.logical_cpus = self.c.process.cpu_count
        facts.numa_nodes = {n: sorted(set(c)) for n, c in sorted(nodes.items())}
        quota = (self.file("/sys/fs/cgroup/cpu.max") or "").split()
        if len(quota) == 2 and quota[0] != "max" and _float(quota[1]):
            facts.cgroup_cpus = round((_float(quota[0]) or 0) / (_float(quota[1]) or 1), 2)
        return facts

    def users(self, record: AscendInstallRecord) -> UserFacts:
        user = record.user_name or probe.DRIVER_USER
        group = record.user_group or user
        facts = UserFacts(driver_user=user, driver_group=group)
        facts.driver_user_entry = parse_getent_passwd(
            self.output(probe.GETENT_PASSWD.format(user=user)) or "")
        facts.driver_group_entry = parse_getent_group(
            self.output(probe.GETENT_GROUP.format(group=group)) or "")
        id_text = self.output(probe.ID)
        if id_text:
            facts.invoking = parse_id(id_text)
        elif self.c.process.uid is not None:  # what `id` would print, from the probe itself
            process, names = self.c.process, self.c.process.group_names
            primary = [process.gid] if process.gid is not None else []
            facts.invoking = IdInfo(uid=process.euid, user=process.user, gid=process.gid,
                                    group=names.get(str(process.gid)),
                                    groups={names.get(str(g)) or str(g): g
                                            for g in dict.fromkeys(primary + process.groups)})
        if facts.invoking is not None and facts.driver_group_entry is not None:
            entry = facts.driver_group_entry
            facts.invoking_in_driver_group = (
                entry.name in facts.invoking.groups
                or entry.gid in facts.invoking.groups.values()
                or (facts.invoking.user in entry.members))
        for key, result in self.c.commands.items():
            if key.startswith("id ") and result.ok:
                facts.others[key[3:]] = parse_id(result.stdout)
        return facts

    def container(self) -> ContainerFacts:
        env_kind = self.c.env.get("container")
        kind = ("docker" if self.exists("/.dockerenv") else
                "podman" if self.exists("/run/.containerenv") else env_kind or None)
        cgroup = self.file("/proc/1/cgroup") or ""
        if kind is None and re.search(r"docker|kubepods|containerd|libpod", cgroup):
            kind = "kubernetes" if "kubepods" in cgroup else "container"
        mounts = []
        for line in (self.file("/proc/self/mountinfo") or "").splitlines():
            parts = line.split()
            if len(parts) > 4:
                mounts.append(parts[4])
        return ContainerFacts(in_container=kind is not None, kind=kind, mounts=mounts)

    def build(self) -> Facts:
        record_text = self.file("/etc/ascend_install.info")
        record = parse_ascend_install_info(record_text or "")
        arch = self.arch()
        npu_smi, devices = self.npu()
        env = self.env()
        pci = self.pci()
        chips = {c.chip for c in pci if c.chip} | {d.chip for d in devices if d.chip}
        for error in self.c.errors:
            self.notes.append(f"probe could not read {error.where}: {error.error}")
        facts = Facts(
            host=self.c.host, captured_at=self.c.captured_at, os=self.os_facts(), arch=arch,
            container=self.container(), pci=pci,
            chip=next(iter(chips)) if len(chips) == 1 else None,
            install_record=record if record_text is not None else None,
            driver=self.driver(record), firmware=self.firmware(record), cann=self.cann(arch),
            npu_smi=npu_smi, devices=devices, device_nodes=self.device_nodes(),
            modules=self.modules(), env=env, libraries=self.libraries(env.ld_library_path),
            frameworks=self.frameworks(), selinux=self.selinux(), cpu=self.cpu(),
            users=self.users(record))
        if len(chips) > 1:
            self.notes.append(f"cards of several chip families: {', '.join(sorted(chips))}")
        facts.notes = self.notes
        return facts


def _node(path: str, info: PathInfo) -> DeviceNode:
    return DeviceNode(path=path, type=info.type, mode=info.mode, owner=info.owner,
                      group=info.group, uid=info.uid, gid=info.gid, rdev=info.rdev,
                      label=info.label)


def _natural(text: str) -> list[Any]:
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text)]


def _unique(items: Iterable[str | None]) -> list[str]:
    out: list[str] = []
    for item in items:
        if item and item not in out:
            out.append(item.rstrip("/") or "/")
    return out


def facts_from_capture(capture: Capture) -> Facts:
    """Typed facts of one host; never raises on odd content (it becomes a note)."""
    return _Builder(capture).build()
