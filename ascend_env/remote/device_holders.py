#!/usr/bin/env python3
"""Which processes hold an NPU: those with a `/dev/davinci*` node open (read from
/proc/<pid>/fd, as fuser does), and the command lines of the pids npu-smi's process table
lists.

Runs ON a target with only the standard library, Python 3.8+:
`python3 device_holders.py [--pids 1,2] [--device-prefix /dev/davinci] [--proc /proc]`;
prints one JSON document {"schema", "holders": [{pid, command, device}], "listed": [{pid,
command}]}. install runs it before a driver or firmware change: the driver's hot reset fails
while any process or container holds /dev/davinci* (the vendor's upgrade guide,
https://www.hiascend.com/document/detail/zh/Atlas%20200I%20A2/2520/ep/upgradeguide).
A process whose folder vanishes or cannot be read while it is scanned is skipped.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from typing import Dict, List, Optional, Sequence

SCHEMA = "ascend-env/device-holders/v1"
MAX_CMDLINE = 4096
# The NPUs' nodes and the driver's manager node; not devmm_svm or hisi_hdc, which the
# driver's own services keep open.
_NODE = r"(\d+|_manager)$"


def command(proc: str, pid: int) -> Optional[str]:
    """The command line of `pid` (its first MAX_CMDLINE bytes), None when it is gone."""
    try:
        with open(os.path.join(proc, str(pid), "cmdline"), "rb") as handle:
            raw = handle.read(MAX_CMDLINE)
    except OSError:
        return None
    text = raw.rstrip(b"\0").replace(b"\0", b" ").decode("utf-8", "replace")
    return text or None


def holders(proc: str, prefix: str) -> List[Dict[str, object]]:
    """Every (pid, node) where a process has an NPU node open, in pid order."""
    node = re.compile("^" + re.escape(prefix) + _NODE)
    found: List[Dict[str, object]] = []
    try:
        pids = sorted(int(entry) for entry in os.listdir(proc) if entry.isdigit())
    except OSError:
        return found
    for pid in pids:
        fd_dir = os.path.join(proc, str(pid), "fd")
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue
        nodes = set()
        for fd in fds:
            try:
                target = os.readlink(os.path.join(fd_dir, fd))
            except OSError:
                continue
            if node.match(target):
                nodes.add(target)
        for device in sorted(nodes):
            found.append({"pid": pid, "command": command(proc, pid), "device": device})
    return found


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pids", default="", help="pids npu-smi listed, comma separated")
    parser.add_argument("--device-prefix", default="/dev/davinci")
    parser.add_argument("--proc", default="/proc")
    args = parser.parse_args(argv)
    listed = [int(pid) for pid in args.pids.split(",") if pid.strip().isdigit()]
    json.dump({"schema": SCHEMA, "holders": holders(args.proc, args.device_prefix),
               "listed": [{"pid": pid, "command": command(args.proc, pid)} for pid in listed]},
              sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
