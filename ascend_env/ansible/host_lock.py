"""The controller's half of the host lock (the host's half: ascend_env/remote/host_lock.py,
run by playbooks/roles/host_lock): who this run is, whether a holder's run is gone, and how
a holder is named to the operator.

A holder from this controller is gone when its run is: nothing holds the run's own lock file
on the controller any more (flock(2), held by ascend-env and by the tether of its
ansible-playbook until that has stopped, so a killed ascend-env's playbook still counts until
it is gone), or, for a holder without one, when its pid no longer runs with the start time
recorded; or when this controller has rebooted since. A holder from another
controller cannot be judged from here: it stays until its run releases it, the host reboots,
or the operator removes the lock file after making sure that run is over.
"""

from __future__ import annotations

import fcntl
import os
import shlex
import socket
import stat
import sys
import time
import uuid
from pathlib import Path
from typing import Any

HOLDER_SCHEMA = "ascend-env/host-lock/v1"
_BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


def boot_id() -> str:
    """This machine's boot id ("" where there is none)."""
    try:
        return _BOOT_ID.read_text(encoding="ascii").strip()
    except OSError:
        return ""


def start_time(pid: int) -> int | None:
    """A process's start time in clock ticks since boot (proc(5) stat field 22), or None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2:].split()
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return None


def command_line(argv: list[str] | None = None) -> str:
    """The command as the operator typed it (the console script or `python -m ascend_env`
    both read `ascend-env ...`)."""
    args = list(sys.argv if argv is None else argv)
    first = args[0] if args else "ascend-env"
    if Path(first).name in ("ascend-env", "__main__.py", "-m") or first.endswith("ascend_env"):
        first = "ascend-env"
    return shlex.join([first, *args[1:]])


def holder(command: str | None = None, run_lock: Path | None = None) -> dict[str, Any]:
    """This run, as the lock on each host names it; `run_lock` is the file this run holds
    locked on the controller while it runs."""
    return {"schema": HOLDER_SCHEMA, "controller": socket.gethostname(),
            "run_lock": str(run_lock) if run_lock else None,
            "controller_boot_id": boot_id(), "pid": os.getpid(),
            "pid_start": start_time(os.getpid()), "command": command or command_line(),
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "token": uuid.uuid4().hex}


def holder_gone(found: Any) -> bool:
    """Whether the run that holds a lock is surely gone, judged on this controller."""
    if not isinstance(found, dict) or found.get("controller") != socket.gethostname():
        return False
    if found.get("controller_boot_id") != boot_id():
        return True  # this controller rebooted since: nothing of that run is left
    run_lock = found.get("run_lock")
    held = run_lock_held(Path(run_lock)) if isinstance(run_lock, str) and run_lock else None
    if held is not None:
        return not held
    pid = found.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return False
    started = start_time(pid)
    return started is None or started != found.get("pid_start")


def hold_run_lock(path: Path) -> int:
    """Create and lock `path` for this run: a file descriptor to keep open while it runs."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def run_lock_held(path: Path) -> bool | None:
    """Whether some process still holds a run's lock file (its run goes on); None where this
    process cannot tell (another user's file it may not open, say): the holder's pid judges."""
    try:
        # The path comes from the host's lock file: no link followed, no FIFO waited on.
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return False  # its run ended and its logs were removed since
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return None
    finally:
        os.close(fd)
    return False


def judged_here(found: Any) -> bool:
    """Whether the holder's run is one this controller can see end (it started here)."""
    return isinstance(found, dict) and found.get("controller") == socket.gethostname()


def wait_gone(found: Any, seconds: float) -> bool:
    """holder_gone, asked again every half second for up to `seconds` while the holder is
    this controller's: a run that ends without releasing the host's lock (killed, stopped
    mid-task) is seen to end here, never on the host, so the wait for it happens here."""
    deadline = time.monotonic() + seconds
    while True:
        if holder_gone(found):
            return True
        if not judged_here(found) or time.monotonic() >= deadline:
            return False
        time.sleep(0.5)


def describe(found: Any) -> str:
    """`ascend-env pid 4242 on ctrl1 (ascend-env install ...), since 2026-12-05T08:00:00Z`."""
    if not isinstance(found, dict):
        return "an unknown holder"
    return (f"ascend-env pid {found.get('pid', '?')} on {found.get('controller', '?')} "
            f"({found.get('command', '?')}), since {found.get('since', '?')}")


def takeovers(events: list[dict[str, Any]]) -> list[str]:
    """The host_lock role's word on each lock it took over (`host: took over ...`)."""
    return [f"{event['host']}: {event['message']}" for event in events
            if event.get("event") == "result" and event.get("role") == "host_lock"
            and str(event.get("message", "")).startswith("host lock: took over")]
