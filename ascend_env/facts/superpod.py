"""A3 SuperPoD identity of each NPU die: `npu-smi info -t spod-info` placed by `npu-smi info -m`.

Formats, from public sources (tests/data/npu_smi_spod_info/ and npu_smi_map/ quote them):
- spod-info prints `SDID : 16777216`, `Super Pod Size : 384`, `Super Pod ID : 0` and
  `Server Index : 4`, one per line; the SDID is what a 1.2 rank table calls super_device_id
  (HCCL's EI0014 page: "the SDID in the output is the superDeviceID").
- `-m` prints a header `NPU ID  Chip ID  Chip Logic ID  [Chip Phy-ID]  Chip Name` and a row per
  chip; the Mcu rows have `-` for their logic id (no device of their own).
spod-info is asked per (NPU ID, chip ID); the logical device (the number of /dev/davinci<N>,
hccn_tool -i and a rank table's device_id) comes from `-m`. What is not understood is kept
in the device's `unparsed`, and a die `-m` does not place is a note: never a pass.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ascend_env.facts.model import DeviceNetwork, NetworkFacts
from ascend_env.facts.reader import CaptureReader
from ascend_env.remote import probe

_SPOD_KEY = re.compile(r"npu-smi info -t spod-info -i (\d+) -c (\d+)$")
SPOD_FIELDS = ("SDID", "Super Pod Size", "Super Pod ID", "Server Index")


@dataclass(kw_only=True, slots=True)
class ChipMapRow:
    npu_id: int
    chip_id: int
    logic_id: int | None  # None: not a device (the board's Mcu)
    phy_id: int | None
    name: str


@dataclass(kw_only=True, slots=True)
class ChipMap:
    """`npu-smi info -m`: one row per chip; lines it could not read, verbatim."""

    rows: list[ChipMapRow] = field(default_factory=list)
    unparsed: list[str] = field(default_factory=list)


def parse_npu_smi_map(text: str) -> ChipMap | None:
    """The chip map; None without its header line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    header = next((i for i, line in enumerate(lines)
                   if line.startswith("NPU ID") and "Chip Logic ID" in line), None)
    if header is None:
        return None
    columns = 4 if "Phy-ID" in lines[header] else 3  # the numbered ones, before the name
    found = ChipMap()
    for line in lines[header + 1:]:
        tokens = line.split()
        ids = tokens[:columns]
        if (len(tokens) <= columns or not (ids[0].isdigit() and ids[1].isdigit())
                or not all(t.isdigit() or t == "-" for t in ids)):
            found.unparsed.append(line)
            continue
        npu, chip, logic, *phy = (int(t) if t.isdigit() else None for t in ids)
        assert npu is not None and chip is not None
        found.rows.append(ChipMapRow(npu_id=npu, chip_id=chip, logic_id=logic,
                                     phy_id=phy[0] if phy else None,
                                     name=" ".join(tokens[columns:])))
    return found


def parse_spod_info(text: str) -> dict[str, str] | None:
    """spod-info's fields by their printed names; None unless it gives a numeric SDID."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() in SPOD_FIELDS:
            fields[key.strip()] = value.strip()
    return fields if fields.get("SDID", "").isdigit() else None


def read_superpod(r: CaptureReader, network: NetworkFacts) -> None:
    """Each die's spod-info onto its logical device's port (network.devices)."""
    spod = {key: m for key in r.capture.commands if (m := _SPOD_KEY.match(key))}
    if not spod:
        return
    listed = r.output(probe.NPU_SMI_MAP)
    chip_map = parse_npu_smi_map(listed) if listed is not None else None
    where = {(row.npu_id, row.chip_id): row.logic_id for row in chip_map.rows} \
        if chip_map is not None else {}
    if chip_map is None:
        r.notes.append(f"{probe.NPU_SMI_MAP} gave no chip map: the SuperPoD ids of "
                       f"{len(spod)} chip(s) are placed on no device")
    else:
        r.notes.extend(f"{probe.NPU_SMI_MAP}: line not understood: {line!r}"
                       for line in chip_map.unparsed)
    for key, match in sorted(spod.items()):
        logic = where.get((int(match.group(1)), int(match.group(2))))
        if logic is None:
            if chip_map is not None:
                r.notes.append(f"{key}: {probe.NPU_SMI_MAP} names no device for this chip")
            continue
        port = network.devices.setdefault(logic, DeviceNetwork(device=logic))
        result = r.capture.commands[key]
        fields = parse_spod_info(result.stdout) if result.rc == 0 else None
        if fields is None:
            output = "\n".join(p for p in (result.stdout, result.stderr) if p.strip())
            port.unparsed[key] = output.strip() or f"exit status {result.rc}"
            continue
        port.super_device_id = fields["SDID"]
        port.super_pod_id = fields.get("Super Pod ID")
        port.server_index = fields.get("Server Index")


# Parsers by the folder name of their samples under tests/data/.
PARSERS: dict[str, Callable[[Any], Any]] = {
    "npu_smi_map": parse_npu_smi_map,
    "npu_smi_spod_info": parse_spod_info,
}
