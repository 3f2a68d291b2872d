#!/usr/bin/env python3
"""Read what the install needs to know about one Ascend host; print it as JSON.

Runs on the target with the standard library only (Python 3.8+). Read-only.
Arguments: INSTALL_PATH ARCH BOOT_ID_FILE REBOOT_MARKER USER GROUP.
"""

import glob
import grp
import json
import os
import pwd
import shutil
import sys


def read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None


def key_values(path, separator="="):
    text = read(path) or ""
    pairs = (line.split(separator, 1) for line in text.splitlines() if separator in line)
    return {key.strip(): value.strip() for key, value in pairs}


def pci_devices():
    found = []
    for device in sorted(glob.glob("/sys/bus/pci/devices/*")):
        vendor = (read(os.path.join(device, "vendor")) or "").strip().lower()
        if vendor != "0x19e5":
            continue
        found.append({
            "address": os.path.basename(device),
            "device": (read(os.path.join(device, "device")) or "").strip().lower(),
            "class": (read(os.path.join(device, "class")) or "").strip().lower(),
        })
    return found


def toolkit_info(root, arch):
    # 8.5+ layout first (cann/ points at cann-<ver>), then the old ascend-toolkit/latest.
    for info in (os.path.join(root, "cann", arch + "-linux", "ascend_toolkit_install.info"),
                 os.path.join(root, "ascend-toolkit", "latest", arch + "-linux",
                              "ascend_toolkit_install.info")):
        values = key_values(info)
        if values.get("version"):
            home = os.path.dirname(os.path.dirname(os.path.realpath(info)))
            return values["version"], home
    return None, None


def ops_version(home):
    if not home:
        return None
    text = read(os.path.join(home, "version.cfg")) or ""
    for line in text.splitlines():
        if line.startswith("opp_kernel_installed_version=["):
            return line.rstrip("]").rsplit(":", 1)[1]
    return None


def nnal_version(root):
    text = read(os.path.join(root, "nnal", "atb", "latest", "atb", "version.info")) or ""
    for line in text.splitlines():
        if line.startswith("Ascend-cann-atb :"):
            return line.split(":", 1)[1].strip()
    return None


def exists(lookup, name):
    try:
        lookup(name)
    except KeyError:
        return False
    return True


def free_mb(path):
    while path and not os.path.exists(path):
        path = os.path.dirname(path)
    return shutil.disk_usage(path or "/").free // (1024 * 1024)


def main():
    root, arch, boot_id_file, marker, user, group = sys.argv[1:7]
    driver = key_values(os.path.join(root, "driver", "version.info"))
    firmware = key_values(os.path.join(root, "firmware", "version.info"))
    toolkit, home = toolkit_info(root, arch)
    release = os.uname().release
    state = {
        "arch": os.uname().machine,
        "kernel": release,
        "kernel_headers": os.path.isdir("/lib/modules/%s/build" % release),
        "pci": pci_devices(),
        "free_mb": free_mb(root),
        # The boot id tells whether the host rebooted since a new driver was installed.
        "boot_id": (read(boot_id_file) or "").strip(),
        "reboot_marker": (read(marker) or "").strip() or None,
        "user_exists": exists(pwd.getpwnam, user) and exists(grp.getgrnam, group),
        "installed": {
            "driver": driver.get("Version"),
            "driver_complete": os.path.isfile(
                os.path.join(root, "driver", "tools", "upgrade-tool")),
            "firmware": firmware.get("Version"),
            "toolkit": toolkit,
            "toolkit_home": home,
            "ops": ops_version(home),
            "nnal": nnal_version(root),
        },
    }
    print(json.dumps(state, sort_keys=True))


if __name__ == "__main__":
    main()
