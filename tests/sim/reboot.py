"""Simulated reboots: the hosts share the test machine's kernel, so a reboot is a new boot id.

`install` reads the boot id to know whether a new driver is loaded yet; these variables point
its hdk_reboot role at a per-host file, and the fake reboot command writes a new id there.
"""

from __future__ import annotations

import time
from pathlib import Path

BOOT_ID = "var/lib/ascend-sim/boot_id"
REBOOT_COMMAND = "usr/local/sbin/sim-reboot"

# Extra vars for `ascend-env install` against simulated hosts: never a real reboot.
FAKE_REBOOT_VARS: dict[str, str | int] = {
    "ascend_boot_id_file": f"/{BOOT_ID}",
    "hdk_reboot_command": f"/{REBOOT_COMMAND}",
    "hdk_reboot_timeout": 60,
}


def prepare_reboots(root: Path) -> None:
    """Give a host root its boot id file and the fake reboot command that changes it."""
    (root / BOOT_ID).parent.mkdir(parents=True, exist_ok=True)
    (root / BOOT_ID).write_text("boot-1\n")
    script = root / REBOOT_COMMAND
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(f"#!/bin/sh\ndate +%s%N > /{BOOT_ID}\n")
    script.chmod(0o755)


def reboot(root: Path) -> None:
    """What a reboot changes for the install: the boot id."""
    (root / BOOT_ID).write_text(f"boot-{time.monotonic_ns()}\n")
