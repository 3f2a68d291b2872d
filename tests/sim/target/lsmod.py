#!/usr/bin/python3 -S
"""Fake lsmod for a simulated host: lists /sys/module entries the fake driver created.

The hosts share one kernel (without /proc/modules), so module state lives in the host's
fake sysfs; the output keeps lsmod's real column layout.
"""

from __future__ import annotations

import os

# Plain os.path, no pathlib: the probe runs lsmod on every host of a simulated fleet, and the
# hosts share the test machine's CPUs.


def _read(path: str, default: str) -> str:
    if not os.path.isfile(path):
        return default
    with open(path) as fh:
        return fh.read().strip()


def main() -> None:
    print("Module                  Size  Used by")
    mods = "/sys/module"
    if not os.path.isdir(mods):
        return
    for name in sorted(os.listdir(mods)):
        d = os.path.join(mods, name)
        if not os.path.isfile(os.path.join(d, "initstate")):
            continue
        size = _read(os.path.join(d, "coresize"), "0")
        refs = _read(os.path.join(d, "refcnt"), "0")
        holders = os.path.join(d, "holders")
        users = ",".join(sorted(os.listdir(holders))) if os.path.isdir(holders) else ""
        print(f"{name:<19} {size:>8}  {refs} {users}".rstrip())


if __name__ == "__main__":
    main()
