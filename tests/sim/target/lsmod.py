#!/usr/bin/python3
"""Fake lsmod for a simulated host: lists /sys/module entries the fake driver created.

The hosts share one kernel (without /proc/modules), so module state lives in the host's
fake sysfs; the output keeps lsmod's real column layout.
"""

from __future__ import annotations

from pathlib import Path


def main() -> None:
    print("Module                  Size  Used by")
    mods = Path("/sys/module")
    if not mods.is_dir():
        return
    for d in sorted(mods.iterdir(), key=lambda p: p.name):
        if not (d / "initstate").is_file():
            continue
        size = (d / "coresize").read_text().strip() if (d / "coresize").is_file() else "0"
        refs = (d / "refcnt").read_text().strip() if (d / "refcnt").is_file() else "0"
        holders = d / "holders"
        users = ",".join(sorted(h.name for h in holders.iterdir())) if holders.is_dir() else ""
        print(f"{d.name:<19} {size:>8}  {refs} {users}".rstrip())


if __name__ == "__main__":
    main()
