"""The program between ascend-env and one child: it dies with ascend-env, and it stops the
child's whole tree (every process the child started, even those that left its process group)
in stages, so that nothing ascend-env started goes on after a stop.

`python -I -S tether.py --parent PID --grace S --kill-grace S [--stop-file PATH]
[--remove DIR] -- ARGV...`

- PR_SET_PDEATHSIG (prctl(2)) gives this program SIGTERM when ascend-env dies, even by
  SIGKILL; the setting is not inherited across fork, which is why a program sits here rather
  than the setting on the child itself (ansible-playbook forks its workers, which setsid).
- PR_SET_CHILD_SUBREAPER makes every orphan of the child's tree this program's child, so
  the tree can still be found (/proc) and reaped after its own parents died.
- A stop (SIGINT, SIGTERM or SIGHUP, or ascend-env's death): with --stop-file, the file is
  created and the child (ansible-playbook, through ascend-env's callback plugin) stops at its
  next task, within --grace seconds; without one, the signal goes to the child at once. Then
  the signal (SIGHUP as SIGTERM: ansible-playbook only forwards SIGINT and SIGTERM to its
  workers) goes to the whole tree, and after --kill-grace seconds SIGKILL. A second stop
  skips the wait of the current stage.
- --remove DIR: a folder of the child's own (its ssh master sockets), removed once a stop
  has ended the tree: ascend-env removes it after a normal end, but cannot once killed.

Standard library only, and no ascend_env import: it starts in a fresh interpreter (-I -S)
for every child, so its start costs little.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import NoReturn

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
PR_SET_CHILD_SUBREAPER = 36
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def prctl(option: int, value: int) -> bool:
    """prctl(2) through libc; False where it is not there (not Linux) or refused."""
    import ctypes  # noqa: PLC0415 (only here: the command line's start stays light)

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, value, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def descendants(root: int) -> list[int]:
    """Every live (not zombie) process under `root`, parents before their children, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_bytes()
        except OSError:
            continue
        # The command name (field 2) may hold spaces and parentheses: read after its last ')'.
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) < 2 or fields[0] == b"Z":
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found: list[int] = []
    todo = list(children.get(root, []))
    while todo:
        pid = todo.pop(0)
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def send(pids: list[int], signum: int) -> None:
    for pid in pids:
        with contextlib.suppress(OSError):  # gone meanwhile, or not ours to signal
            os.kill(pid, signum)


class Stopper:
    """The stop sequence, run in its own thread while the main thread reaps children."""

    def __init__(self, child: subprocess.Popen[bytes], grace: float, kill_grace: float,
                 stop_file: str | None) -> None:
        self.child = child
        self.grace = grace
        self.kill_grace = kill_grace
        self.stop_file = stop_file
        self.signum: int | None = None
        self.hurry = threading.Event()
        self.done = threading.Event()
        # Set by the main thread, which alone reaps: Popen.poll() here would race it.
        self.child_exited = threading.Event()

    def request(self, signum: int) -> None:
        """A stop signal: the first starts the sequence, a later one ends the current wait."""
        if self.signum is not None:
            self.hurry.set()
            return
        self.signum = signum
        threading.Thread(target=self._run, daemon=True).start()

    def _wait(self, seconds: float) -> None:
        """Until the tree is gone, `seconds` pass, or a second stop arrives."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not self.hurry.is_set():
            if self.child_exited.is_set() and not descendants(os.getpid()):
                return
            time.sleep(0.1)
        self.hurry.clear()

    def _run(self) -> None:
        assert self.signum is not None
        forwarded = signal.SIGTERM if self.signum == signal.SIGHUP else self.signum
        if self.stop_file:
            with contextlib.suppress(OSError), Path(self.stop_file).open(
                    "a", encoding="utf-8") as handle:
                handle.write(f"{signal.Signals(self.signum).name}\n")
        else:
            send([self.child.pid], forwarded)
        self._wait(self.grace)
        send(descendants(os.getpid()), forwarded)
        self._wait(self.kill_grace)
        while True:
            left = descendants(os.getpid())
            if not left:
                break
            send(left, signal.SIGKILL)
            time.sleep(0.05)
        self.done.set()


def _unblock() -> None:
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


def main(argv: list[str]) -> NoReturn:
    parser = argparse.ArgumentParser(prog="tether")
    parser.add_argument("--parent", type=int, required=True)
    parser.add_argument("--grace", type=float, default=20.0)
    parser.add_argument("--kill-grace", type=float, default=5.0)
    parser.add_argument("--stop-file")
    parser.add_argument("--remove")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command")
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    # ascend-env died before the line above: nothing of this run may start.
    if os.getppid() != args.parent:
        sys.stderr.write("tether: ascend-env is gone; not started\n")
        sys.exit(128 + signal.SIGTERM)
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    # ascend-env starts this program with the stop signals blocked (and exec keeps the mask):
    # a stop that comes before the stopper exists waits for it instead of ending this
    # program with the child's tree left behind. The child starts with them unblocked.
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        # Its own session and process group, apart from this program's.
        # No thread runs yet in this program, so preexec_fn is safe here.
        child = subprocess.Popen(command, start_new_session=True,
                                 preexec_fn=_unblock)  # noqa: PLW1509
    except OSError as exc:
        sys.stderr.write(f"tether: cannot run {command[0]}: {exc.strerror or exc}\n")
        sys.exit(127)
    stopper = Stopper(child, args.grace, args.kill_grace, args.stop_file)
    for signum in STOP_SIGNALS:
        signal.signal(signum, lambda number, frame: stopper.request(number))
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    code: int | None = None
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        if pid == child.pid:
            code = os.waitstatus_to_exitcode(status)
            stopper.child_exited.set()
            if stopper.signum is None:
                break
    if stopper.signum is not None:
        stopper.done.wait()
        if args.remove:
            shutil.rmtree(args.remove, ignore_errors=True)
    if code is None:
        code = 128 + signal.SIGTERM
    sys.exit(128 - code if code < 0 else code)


if __name__ == "__main__":
    main(sys.argv[1:])
