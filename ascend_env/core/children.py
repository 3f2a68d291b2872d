"""Every process ascend-env starts stops with it.

The command line runs inside `supervision()`: SIGINT, SIGTERM and SIGHUP are caught, passed on
to every process ascend-env started, which get a grace period (ASCEND_ENV_STOP_GRACE seconds,
default 20) to finish their current step, and what is left after it is killed; the command
then ends with 128 + the signal's number (130, 143, 129), as a shell reports a process ended
by that signal.

Children that ascend-env starts itself and that run long go through `spawn()`
(ansible-playbook, buildah builds, local smoke workloads, perf's job): a tether program
(core/tether.py) sits between, so the child's whole tree dies with ascend-env even when
ascend-env is killed outright. The thread that spawns must live until its wait() (the
kernel's parent-death signal follows the thread). Processes that libraries start (the ssh of
testinfra's hosts) and short commands are found under this process in /proc when a stop
comes and are signalled alike: this process is their subreaper, so none escapes to init by
losing its parent first; a SIGKILL of ascend-env leaves them to end on their own.
"""

from __future__ import annotations

import errno
import math
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import IO, Any

from ascend_env.core.errors import AscendEnvError
from ascend_env.core.tether import PR_SET_CHILD_SUBREAPER, descendants, prctl, send

GRACE_ENV = "ASCEND_ENV_STOP_GRACE"
DEFAULT_GRACE_S = 20.0
# After the grace, the signal itself; after this many more seconds, SIGKILL.
KILL_GRACE_S = 5.0
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_TETHER = Path(__file__).with_name("tether.py")


class Interrupted(AscendEnvError):
    """A stop signal ended the command: exit 128 + its number."""

    def __init__(self, signum: int, message: str | None = None) -> None:
        self.signum = signum
        self.exit_code = 128 + signum
        super().__init__(message or f"interrupted by {signal_name(signum)}; every process "
                                    "ascend-env started was stopped")


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def grace_s() -> float:
    """The grace period: ASCEND_ENV_STOP_GRACE seconds (0 to 3600), else the default."""
    text = os.environ.get(GRACE_ENV, "")
    try:
        value = float(text)
    except ValueError:
        return DEFAULT_GRACE_S
    return min(max(value, 0.0), 3600.0) if math.isfinite(value) else DEFAULT_GRACE_S


class _State:
    def __init__(self) -> None:
        # Reentrant: the signal handler takes it in the main thread, which may hold it already.
        self.lock = threading.RLock()
        self.signum: int | None = None
        self.tethers: set[int] = set()
        self.waiting = 0  # >0: the main thread waits on a tethered child; the handler returns
        self.deadline = 0.0
        self.installed = False


_state = _State()


def interruption() -> int | None:
    """The stop signal this command received, if any."""
    return _state.signum


def _others() -> list[int]:
    """Processes under this one that no tether looks after (tethers and their trees left out)."""
    with _state.lock:
        tethers = set(_state.tethers)
    skip: set[int] = set()
    for pid in tethers:
        skip.add(pid)
        skip.update(descendants(pid))
    return [pid for pid in descendants(os.getpid()) if pid not in skip]


def _watch() -> None:
    """After a stop: signal what starts later too, and kill everything at the deadline."""
    forwarded = signal.SIGTERM if _state.signum == signal.SIGHUP else (_state.signum or 15)
    told: set[int] = set()
    while time.monotonic() < _state.deadline:
        fresh = [pid for pid in _others() if pid not in told]
        send(fresh, forwarded)
        told.update(fresh)
        if not descendants(os.getpid()):
            return
        time.sleep(0.2)
    _kill_all()


def _kill_all() -> None:
    for _ in range(50):
        left = descendants(os.getpid())
        if not left:
            return
        send(left, signal.SIGKILL)
        time.sleep(0.05)


def _on_signal(signum: int, frame: FrameType | None) -> None:
    first = _state.signum is None
    with _state.lock:
        tethers = list(_state.tethers)
    if first:
        _state.signum = signum
        grace = grace_s()
        _state.deadline = time.monotonic() + grace + KILL_GRACE_S + 2.0
        if tethers or descendants(os.getpid()):
            sys.stderr.write(f"ascend-env: {signal_name(signum)}: stopping; what it started "
                             f"has {grace:.0f} s to finish its current step (signal again to "
                             "stop at once)\n")
        send(tethers, signum)
        threading.Thread(target=_watch, daemon=True).start()
    else:
        # A second stop: the tethers end their current wait, the rest is killed now.
        send(tethers, signum)
        send(_others(), signal.SIGKILL)
    if _state.waiting == 0 and first:
        raise Interrupted(signum)


@contextmanager
def supervision() -> Iterator[None]:
    """Catch the stop signals for the command's length; on the way out after a stop, nothing
    it started is left (killed at the deadline if need be). Only in the main thread."""
    if threading.current_thread() is not threading.main_thread() or _state.installed:
        yield
        return
    previous = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    _state.installed = True
    # Orphans of what this command started (a child's child whose parent was stopped first,
    # an ssh that daemonized) become this process's children instead of init's, so a stop
    # still finds them under it. They are never waited for here: the few that end before
    # the command does stay zombies until it exits.
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    for signum in STOP_SIGNALS:
        signal.signal(signum, _on_signal)
    try:
        yield
    finally:
        if _state.signum is not None:
            while descendants(os.getpid()) and time.monotonic() < _state.deadline:
                time.sleep(0.1)
            _kill_all()
        prctl(PR_SET_CHILD_SUBREAPER, 0)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        _state.installed = False
        _state.signum = None
        _state.tethers.clear()


def spawn(argv: list[str], *, stdout: IO[Any] | int | None = None,
          stderr: IO[Any] | int | None = None, stdin: IO[Any] | int | None = subprocess.DEVNULL,
          env: dict[str, str] | None = None, cwd: Path | None = None,
          stop_file: Path | None = None, pass_fds: tuple[int, ...] = (),
          remove: Path | None = None) -> subprocess.Popen[bytes]:
    """Start argv under a tether; refused once a stop has come (nothing new starts then).
    `pass_fds` are kept open in the tether (not in the child) until the child's tree is gone;
    `remove` is a folder the tether removes after a stop has ended that tree."""
    if _state.signum is not None:
        raise Interrupted(_state.signum)
    # Found here, so that a missing program fails as subprocess would (FileNotFoundError)
    # instead of as the tether's exit 127.
    if shutil.which(argv[0], path=(env if env is not None else os.environ).get("PATH")) is None:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), argv[0])
    command = [sys.executable, "-I", "-S", str(_TETHER), "--parent", str(os.getpid()),
               "--grace", str(grace_s()), "--kill-grace", str(KILL_GRACE_S)]
    if stop_file is not None:
        command += ["--stop-file", str(stop_file)]
    if remove is not None:
        command += ["--remove", str(remove)]
    # Blocked while it starts (the tether inherits the mask, and unblocks once it can stop
    # its child), so that no stop falls between its start and its handlers; a stop here
    # waits until the tether is registered.
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    # From here to the end of wait(), a stop lets the child wind down instead of raising in
    # the middle: the caller reports where it stopped.
    with _state.lock:
        _state.waiting += 1
    try:
        with _state.lock:
            # Its own session: a terminal's ^C or hang-up reaches it only through the
            # handler here, in order (grace, then the signal, then SIGKILL).
            process = subprocess.Popen([*command, "--", *argv], stdout=stdout, stderr=stderr,
                                       stdin=stdin, env=env, cwd=cwd, start_new_session=True,
                                       pass_fds=pass_fds)
            _state.tethers.add(process.pid)
    except BaseException:
        with _state.lock:
            _state.waiting -= 1
        raise
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    return process


def stop(process: subprocess.Popen[bytes]) -> None:
    """End a spawned child before its time (a timeout): its tether stops the child's tree as
    on a stop signal (the signal, the grace, then SIGKILL). wait() follows as ever."""
    send([process.pid], signal.SIGTERM)


def raise_if_interrupted() -> None:
    """After wait(): a stop that came meanwhile ends the command here."""
    if _state.signum is not None:
        raise Interrupted(_state.signum)


def wait(process: subprocess.Popen[bytes]) -> int:
    """Wait for a spawned child (every spawn() is followed by one wait()); a stop meanwhile
    lets it wind down, and the caller then asks interruption()."""
    try:
        return process.wait()
    finally:
        with _state.lock:
            _state.waiting -= 1
            _state.tethers.discard(process.pid)
