"""PCI functions of Huawei cards (sysfs attributes, `lspci -n`) and the chip family they name."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ascend_env.facts.model import PciCard
from ascend_env.facts.reader import CaptureReader
from ascend_env.facts.values import none_if_na, to_int
from ascend_env.remote import probe
from ascend_env.spec.matrix import ChipName, load_chips


@dataclass(kw_only=True, slots=True)
class PciFunction:
    """One PCI function of vendor 0x19e5 (ascend-deployer's module_utils/common_info.py, https://pypi.org/project/ascend-deployer/26.0.0/)."""

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
    value = none_if_na(value)
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
            numa_node=to_int(attrs.get("numa_node")),
            local_cpulist=none_if_na(attrs.get("local_cpulist"))))
    return out


def chip_for_pci(device: str | None) -> ChipName | None:
    """The chip family of a PCI device id (0xd802...), from chips.yaml."""
    if device is None:
        return None
    for chip in load_chips().chips.values():
        if chip.pci_device_id.lower() == device.lower():
            return chip.name
    return None


def _product(chip: ChipName | None, subsystem: str | None) -> str | None:
    if chip is None or subsystem is None:
        return None
    found = load_chips().chips.get(chip)
    return found.pci_subsystems.get(subsystem) if found else None


def read_pci(r: CaptureReader) -> list[PciCard]:
    """Huawei cards from sysfs, and from lspci where sysfs did not show them."""
    devices: dict[str, dict[str, str]] = {}
    prefix = "/sys/bus/pci/devices/"
    for path, text in r.capture.files.items():
        if path.startswith(prefix):
            addr, _, attr = path[len(prefix):].partition("/")
            if attr in probe.PCI_ATTRS:
                devices.setdefault(addr, {})[attr] = text
    functions = parse_pci_sysfs(devices)
    known = {f.address for f in functions}
    lspci = r.output(probe.LSPCI)
    if lspci:
        functions += [f for f in parse_lspci(lspci) if f.address not in known]
    cards = []
    for f in functions:
        if f.vendor != probe.HUAWEI_PCI_VENDOR:
            continue
        chip = chip_for_pci(f.device)
        subsystem = (f"{f.subsystem_vendor}:{f.subsystem_device}"
                     if f.subsystem_vendor and f.subsystem_device else None)
        driver = r.capture.paths.get(f"{prefix}{f.address}/driver")
        cards.append(PciCard(
            address=f.address, device=f.device, subsystem=subsystem,
            class_code=f.class_code, chip=chip, product=_product(chip, subsystem),
            numa_node=f.numa_node if f.numa_node is not None and f.numa_node >= 0 else None,
            kernel_driver=posixpath.basename(driver.target) if driver and driver.target
            else None))
    return cards


# Parsers by the folder name of their samples under tests/data/.
PARSERS: dict[str, Callable[[Any], Any]] = {
    "lspci": parse_lspci,
    "pci_sysfs": parse_pci_sysfs,
}
