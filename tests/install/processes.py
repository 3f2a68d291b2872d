"""The processes a test run started, found by a marker in their environment."""

from __future__ import annotations

from pathlib import Path


def marked(marker: str) -> list[str]:
    """Live processes whose environment carries `marker` (everything the run started
    inherits it, whatever its session or parent now), as `pid command`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker.encode() not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            stat = (entry / "stat").read_bytes()
            if stat[stat.rfind(b")") + 2:][:1] == b"Z":
                continue
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ")[:160]
        except OSError:
            continue
        found.append(f"{entry.name} {command.decode(errors='replace')}")
    return found
