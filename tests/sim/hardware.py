"""The simulated hardware of one host: state file, PCI sysfs, kernel headers, lsmod.

The hosts share the test machine's kernel, so whatever the real tools read about cards and
drivers is faked inside each root: `lspci` (the real one, from pciutils) reads a fake
`/sys/bus/pci/devices` tree; `lsmod` is replaced by a script reading `/sys/module/*`,
which the fake driver fills on install (this kernel has no `/proc/modules` to fake).
"""

from __future__ import annotations

import json
import os
import shutil
import struct
from pathlib import Path
from typing import Any

from tests.sim.chips import Chip
from tests.sim.layout import SimError

STATE_REL = Path("var/lib/ascend-sim/state.json")
TARGET_DIR = Path(__file__).parent / "target"
STATE_SCHEMA = "ascend-env-sim/state/v1"


def state_path(root: Path) -> Path:
    return root / STATE_REL


def read_state(root: Path) -> dict[str, Any]:
    p = state_path(root)
    if not p.exists():
        raise SimError(f"{p} missing: is {root} a simulated host root?")
    data: dict[str, Any] = json.loads(p.read_text())
    return data


def write_state(root: Path, state: dict[str, Any]) -> None:
    p = state_path(root)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_suffix(".tmp")
    tmp.write_text(json.dumps(state, indent=2, sort_keys=True) + "\n")
    tmp.replace(p)


def initial_state(chip: Chip, npus: int) -> dict[str, Any]:
    per_npu = chip.chips_per_npu if chip.bus_per_chip else 1  # Bus-Ids an NPU id takes
    most = len(chip.bus_ids) // per_npu
    if not 1 <= npus <= most:
        raise SimError(f"--devices must be 1..{most} for chip {chip.key}")
    buses = [list(chip.bus_ids[i * per_npu:(i + 1) * per_npu]) for i in range(npus)]
    return {
        "schema": STATE_SCHEMA,
        "chip": chip.key,
        "npu_name": chip.npu_name,
        "pci_device": chip.pci_device,
        "subsystem_vendor": chip.subsystem_vendor,
        "subsystem_device": chip.subsystem_device,
        "layout": chip.layout,
        "chips_per_npu": chip.chips_per_npu,
        "hbm_mb": chip.hbm_mb,
        "ddr_mb": chip.ddr_mb,
        "npus": [
            {
                "npu_id": i,
                "bus_id": buses[i][0],
                # Per chip: its own function (A3 dies) or the card's one (310P Duo chips).
                "bus_ids": [buses[i][c % len(buses[i])] for c in range(chip.chips_per_npu)],
                "device_base": i * chip.chips_per_npu,
                "fault": None,
                "error_code": None,
                "processes": [],
            }
            for i in range(npus)
        ],
    }


def npu_bus_ids(npu: dict[str, Any]) -> list[str]:
    """The PCI functions of one NPU id, once each (states written before bus_ids: its one)."""
    return list(dict.fromkeys(npu.get("bus_ids") or [npu["bus_id"]]))


def _pci_dir(root: Path, bus_id: str) -> Path:
    return root / "sys/bus/pci/devices" / bus_id.lower()


def write_pci_device(root: Path, state: dict[str, Any], bus_id: str) -> None:
    """One PCI function as sysfs shows it: attribute files plus a config-space blob."""
    d = _pci_dir(root, bus_id)
    d.mkdir(parents=True, exist_ok=True)
    cfg = bytearray(256)
    struct.pack_into("<HH", cfg, 0, 0x19E5, state["pci_device"])
    cfg[8] = 0x20  # revision, as in "Device d801 (rev 20)" (mind-cluster's npu_info_after.txt)
    cfg[10], cfg[11] = 0x00, 0x12  # class 0x1200: processing accelerator
    struct.pack_into("<HH", cfg, 0x2C, state["subsystem_vendor"], state["subsystem_device"])
    (d / "config").write_bytes(bytes(cfg))
    attrs = {
        "vendor": "0x19e5",
        "device": f"0x{state['pci_device']:04x}",
        "subsystem_vendor": f"0x{state['subsystem_vendor']:04x}",
        "subsystem_device": f"0x{state['subsystem_device']:04x}",
        "class": "0x120000",
        "revision": "0x20",
        "irq": "0",
        "numa_node": "-1",
    }
    for name, value in attrs.items():
        (d / name).write_text(value + "\n")


def remove_pci_device(root: Path, bus_id: str) -> None:
    d = _pci_dir(root, bus_id)
    if d.exists():
        shutil.rmtree(d)


def kernel_headers_dir(root: Path) -> Path:
    return root / "lib/modules" / os.uname().release / "build"


def install(root: Path, chip: Chip, npus: int, kernel_headers: bool = True) -> None:
    """Lay the hardware of a bare host into `root` (an OS without any Ascend software)."""
    state = initial_state(chip, npus)
    write_state(root, state)
    for npu in state["npus"]:
        for bus_id in npu_bus_ids(npu):
            write_pci_device(root, state, bus_id)
    (root / "sys/module").mkdir(parents=True, exist_ok=True)
    if kernel_headers:
        # Enough for the driver installer's "headers present" test; no real headers.
        kernel_headers_dir(root).mkdir(parents=True, exist_ok=True)
        (kernel_headers_dir(root) / "Makefile").write_text("# simulated kernel headers\n")
    lsmod = root / "usr/sbin/lsmod"
    if lsmod.exists() or lsmod.is_symlink():
        lsmod.unlink()
    shutil.copyfile(TARGET_DIR / "lsmod.sh", lsmod)
    Path(lsmod).chmod(0o755)
