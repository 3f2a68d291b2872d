"""Numbers a user types: device lists like `0,1` or `0-3`, bounded before they are expanded.

A range is expanded into a list, so `0-999999999` would be a billion integers and a
5000-digit number would reach int()'s digit limit (ValueError) before any bound: the text is
checked first, ASCII digits only (`\\d` also matches Arabic-Indic and other digits, which
int() would accept), then every number against the device count.
"""

from __future__ import annotations

import re

from ascend_env.core.errors import UsageError

# The most NPU devices one host has (the spec's hardware.devices allows 64).
MAX_DEVICES = 64
_ITEM = re.compile(r"([0-9]{1,4})(?:-([0-9]{1,4}))?", re.ASCII)


def parse_device_list(text: str, *, option: str = "--devices",
                      count: int = MAX_DEVICES) -> list[int]:
    """Device numbers from `0,1` / `0-3` / `0,2-3`, each below `count`, in order.

    Reversed ranges and numbers named twice are errors, not silently fixed: either is a
    typo whose meaning is unknown.
    """
    numbers: list[int] = []
    for raw in text.split(","):
        part = raw.strip()
        if not part:
            continue
        match = _ITEM.fullmatch(part)
        if match is None:
            shown = part if len(part) <= 20 else part[:17] + "..."
            raise UsageError(f"{option}: {shown!r} is not a device number or range; give NPU "
                             f"numbers like 0,1 or 0-3 (0 to {count - 1})")
        first, last = int(match.group(1)), int(match.group(2) or match.group(1))
        if last < first:
            raise UsageError(f"{option}: the range {part} runs backwards; write {last}-{first}")
        if last >= count:
            raise UsageError(f"{option}: device {last} does not exist; there are {count} "
                             f"(0-{count - 1})")
        span = range(first, last + 1)
        twice = sorted(set(numbers).intersection(span))
        if twice:
            raise UsageError(f"{option}: device {twice[0]} is named twice")
        numbers += span
    if not numbers:
        raise UsageError(f"{option} is empty: give NPU numbers like 0,1, or 'all'")
    return sorted(numbers)
