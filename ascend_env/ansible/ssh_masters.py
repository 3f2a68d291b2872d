"""Each playbook run's own ssh master connections.

Ansible keeps one ssh master per host (ControlPersist) in a folder that, by default, every
run of every tool on this controller shares (`~/.ansible/cp`). A stopped run stops all it
started, its masters too (core/tether.py), and a master that another run was using takes
that run's connections with it: a second install waiting for the host lock, or the
operator's own playbook, would find its hosts unreachable. So each run gets a folder of its
own (it overrides an inventory's `ansible_control_path_dir`; ssh arguments naming a
ControlPath still win, as Ansible has them) and closes its masters when it ends. The cost is
one ssh handshake per host and run.
"""

from __future__ import annotations

import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

# sun_path holds 108 bytes with its NUL; Ansible names a socket with 10 hex digits, and ssh
# first listens on the path plus "." and 16 random characters before renaming it into place.
_MAX_FOLDER = 107 - 1 - 10 - 17


def _base() -> str:
    base = tempfile.gettempdir()
    return base if len(base) + len("/ae-ssh-XXXXXXXX") <= _MAX_FOLDER else "/tmp"


@contextmanager
def own_masters() -> Iterator[Path]:
    """A fresh folder (mode 0700) for one run's master sockets; on the way out, each master
    in it is told to exit and the folder is removed."""
    folder = Path(tempfile.mkdtemp(prefix="ae-ssh-", dir=_base()))
    try:
        yield folder
    finally:
        close_masters(folder)
        shutil.rmtree(folder, ignore_errors=True)


def close_masters(folder: Path) -> None:
    """`ssh -O exit` for every socket in `folder` (a master with no session left exits at
    once instead of lingering for ControlPersist)."""
    try:
        entries = list(folder.iterdir())
    except OSError:  # removed already (by the tether, after a stop)
        return
    for path in entries:
        try:
            if not stat.S_ISSOCK(path.lstat().st_mode):
                continue
        except OSError:
            continue
        with suppress(OSError, subprocess.SubprocessError):
            # The destination is only a name: -O talks to the socket, not to a host.
            subprocess.run(["ssh", "-o", f"ControlPath={path}", "-O", "exit", "master"],
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=10,
                           check=False)
