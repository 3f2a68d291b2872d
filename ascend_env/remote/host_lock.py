#!/usr/bin/env python3
"""The host's ascend-env lock: one run that changes a host at a time, as dpkg's lock does
for package installs. Runs ON the host (Python 3.8+, standard library only), started by the
host_lock role as `python3 -c SOURCE take|release ...`.

The lock is a file (default /run/ascend-env.lock) holding its holder as JSON: the
controller's host name and boot id, ascend-env's pid there and its start time, the command,
a token, this host's boot id and when it was taken. Every read-decide-write happens under
flock(2) on a guard file beside it, and the lock is written whole (a temporary file renamed
over it), so two runs never both take it and nobody reads half a holder.

take: free -> taken (exit 0). Held by the same token -> taken again (a re-run of the role,
after a reboot). Taken in another boot of this host -> taken over (the host rebooted since,
so the holder's run cannot be changing it), unless its run marked it with --may-reboot before
a reboot of its own (it takes the lock again after that reboot, which clears the mark).
Held, and --takeover names its token (the controller found the holder's process gone) ->
taken over. Otherwise, with --wait S, polled
every second for S seconds; then exit 3 with the holder. A lock file that is not a regular
file or not a holder is never overwritten: exit 4, the operator decides.
release --token T: removes the lock if T holds it.
Output: one JSON document {"schema", "taken"|"released", "holder", "took_over", "reason"}.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import fcntl
import json
import os
import socket
import stat
import sys
import time
from typing import Any, Dict, Iterator, List, Optional, Tuple

SCHEMA = "ascend-env/host-lock-result/v1"
HELD, UNREADABLE = 3, 4
MAX_BYTES = 64 * 1024


def read_boot_id(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read(256).strip()
    except OSError:
        return ""


def read_holder(path: str) -> Tuple[Optional[Dict[str, Any]], str]:
    """The holder in the lock file: (None, "") when there is none, (None, why) if unreadable."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None, ""
    except OSError as exc:
        return None, f"{path} cannot be read: {exc.strerror}"
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return None, f"{path} is not a regular file"
        data = handle.read(MAX_BYTES + 1)
    try:
        holder = json.loads(data.decode("utf-8")) if len(data) <= MAX_BYTES else None
    except ValueError:
        holder = None
    if not isinstance(holder, dict) or not isinstance(holder.get("token"), str):
        return None, f"{path} does not hold an ascend-env lock holder"
    return holder, ""


def write_holder(path: str, holder: Dict[str, Any]) -> None:
    temporary = f"{path}.{os.getpid()}.tmp"
    # One left by a run killed while writing (the same pid, after a reboot).
    with contextlib.suppress(FileNotFoundError):
        os.unlink(temporary)
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(holder, handle, sort_keys=True)
        handle.write("\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.rename(temporary, path)


@contextlib.contextmanager
def guard_of(path: str) -> Iterator[int]:
    """The guard file beside the lock, opened (never through a link) for flock."""
    fd = os.open(f"{path}.guard", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        yield fd
    finally:
        os.close(fd)


def attempt(path: str, mine: Dict[str, Any], takeover: str, boot_id: str
            ) -> Tuple[int, Dict[str, Any]]:
    """One try under the guard's flock: (exit code, result document)."""
    with guard_of(path) as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)
        current, unreadable = read_holder(path)
        if unreadable:
            return UNREADABLE, {"taken": False, "holder": None, "reason": unreadable}
        reason = ""
        if current is not None and current["token"] != mine["token"]:
            if current.get("boot_id") and boot_id and current["boot_id"] != boot_id \
                    and not current.get("may_reboot"):
                reason = "the host rebooted since it was taken"
            elif takeover and current["token"] == takeover:
                reason = "the run that took it is gone"
            else:
                return HELD, {"taken": False, "holder": current, "reason": "held"}
        write_holder(path, mine)
        return 0, {"taken": True, "holder": mine,
                   "took_over": current if reason else None, "reason": reason}


def take(args: argparse.Namespace) -> Tuple[int, Dict[str, Any]]:
    try:
        mine = json.loads(args.holder)
    except ValueError as exc:
        return 2, {"taken": False, "holder": None, "reason": f"--holder: {exc}"}
    if not isinstance(mine, dict) or not isinstance(mine.get("token"), str):
        return 2, {"taken": False, "holder": None, "reason": "--holder has no token"}
    os.makedirs(os.path.dirname(os.path.abspath(args.path)), mode=0o755, exist_ok=True)
    deadline = time.monotonic() + max(0.0, args.wait)
    while True:
        # Read at every try: the holder may reboot the host while this one waits.
        boot_id = read_boot_id(args.boot_id_file)
        mine = {**mine, "host": socket.gethostname(), "boot_id": boot_id,
                "may_reboot": bool(args.may_reboot),
                "since": datetime.datetime.now(datetime.timezone.utc).strftime(
                    "%Y-%m-%dT%H:%M:%SZ")}
        code, result = attempt(args.path, mine, args.takeover or "", boot_id)
        if code != HELD or time.monotonic() >= deadline:
            return code, result
        time.sleep(1.0)


def release(args: argparse.Namespace) -> Tuple[int, Dict[str, Any]]:
    with guard_of(args.path) as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)
        current, _ = read_holder(args.path)
        if current is None or current["token"] != args.token:
            return 0, {"released": False, "holder": current}
        os.unlink(args.path)
        return 0, {"released": True, "holder": current}


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="host_lock")
    parser.add_argument("action", choices=("take", "release"))
    parser.add_argument("--path", required=True)
    parser.add_argument("--holder", default="{}")
    parser.add_argument("--token", default="")
    parser.add_argument("--takeover", default="")
    parser.add_argument("--wait", type=float, default=0.0)
    parser.add_argument("--may-reboot", action="store_true")
    parser.add_argument("--boot-id-file", default="/proc/sys/kernel/random/boot_id")
    args = parser.parse_args(argv)
    try:
        code, result = take(args) if args.action == "take" else release(args)
    except OSError as exc:
        code, result = 2, {"reason": f"{exc.filename or args.path}: {exc.strerror or exc}"}
    sys.stdout.write(json.dumps({"schema": SCHEMA, **result}, sort_keys=True) + "\n")
    return code


if __name__ == "__main__":
    sys.exit(main())
