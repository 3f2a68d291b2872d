"""What each simulated chip looks like to software (npu-smi samples in tests/data/real; PCI IDs
as ascend-deployer 26.0.0 maps them, https://pypi.org/project/ascend-deployer/26.0.0/)."""

from __future__ import annotations

from dataclasses import dataclass

from tests.sim.layout import SimError


@dataclass(frozen=True)
class Chip:
    key: str  # spec token: hardware.chip
    npu_name: str  # npu-smi "Name" column (no "Ascend" prefix)
    pci_device: int
    subsystem_vendor: int
    subsystem_device: int
    layout: str  # npu-smi info table style: "train" (910B, 910ProB) or "infer" (310P)
    chips_per_npu: int
    hbm_mb: int  # per chip; 0 where the table has no HBM column
    ddr_mb: int
    ops_token: str  # chip token in CANN ops/kernels file names
    hdk_token: str  # chip token in HDK file names
    bus_ids: tuple[str, ...]  # what a real server of this kind shows, per NPU (A3: per die)
    # Each chip (die) of an NPU id is its own PCI function with its own Bus-Id (A3), rather
    # than the chips sharing their card's one (310P Duo).
    bus_per_chip: bool = False


CHIPS: dict[str, Chip] = {
    # Atlas 800T A2: 910B3, 64 GB HBM, no DDR column value (vllm-ascend #198); subsystem 19e5:3000.
    "910b": Chip(
        "910b", "910B3", 0xD802, 0x19E5, 0x3000, "train", 1, 65536, 0, "910b", "910b",
        ("0000:C1:00.0", "0000:C2:00.0", "0000:81:00.0", "0000:82:00.0",
         "0000:01:00.0", "0000:02:00.0", "0000:41:00.0", "0000:42:00.0"),
    ),
    # Atlas 800 training (first generation): 910ProB with DDR + 32 GB HBM (vllm-ascend #1047).
    "910": Chip(
        "910", "910ProB", 0xD801, 0x0200, 0x0100, "train", 1, 32768, 15665, "910", "910",
        ("0000:C1:00.0", "0000:81:00.0", "0000:41:00.0", "0000:01:00.0",
         "0000:C2:00.0", "0000:82:00.0", "0000:42:00.0", "0000:02:00.0"),
    ),
    # Atlas 800T A3: two dies per NPU ID ("Chip Count : 2", NPUSMI-A3), each die its own PCI
    # function: npu-smi prints NPU 0's dies at 9D and 9F, NPU 1's at 99 and 9B
    # (tests/data/real/a3-*), so these Bus-Ids go per die (four NPUs' worth).
    "910_93": Chip(
        "910_93", "Ascend910", 0xD803, 0x19E5, 0x3000, "train", 2, 65536, 0, "A3", "910_93",
        ("0000:9D:00.0", "0000:9F:00.0", "0000:99:00.0", "0000:9B:00.0",
         "0000:B9:00.0", "0000:BB:00.0", "0000:BD:00.0", "0000:BF:00.0"),
        bus_per_chip=True,
    ),
    # Atlas 300I Duo: two 310P3 chips per card, one Bus-Id per card (Syllo/nvtop #421);
    # 0x0200:0x0110.
    "310p": Chip(
        "310p", "310P3", 0xD500, 0x0200, 0x0110, "infer", 2, 0, 44280, "310p", "310p",
        ("0000:01:00.0", "0000:81:00.0", "0000:02:00.0", "0000:82:00.0",
         "0000:03:00.0", "0000:83:00.0", "0000:04:00.0", "0000:84:00.0"),
    ),
}


def get_chip(key: str) -> Chip:
    try:
        return CHIPS[key]
    except KeyError:
        raise SimError(f"unknown chip {key!r}; choose one of {', '.join(CHIPS)}") from None
