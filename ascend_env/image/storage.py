"""buildah's storage driver: the operator's choice, else overlay where it works here, else vfs.

vfs copies a whole root file system for every layer and container, so a rebuild that reuses
the cache still pays for copies of everything below; overlay shares the layers. An explicit
choice (STORAGE_DRIVER, or `driver` in containers' storage.conf) is used as is. Otherwise
overlay is tried for real: the kernel's (buildah initialises the driver on its store, which
mounts a test overlay there), then fuse-overlayfs as mount program (a container mounted in a
throw-away store); vfs is the fallback, with the reasons the others failed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover  (Python 3.10: storage.conf is left to buildah, see choose_storage)
    tomllib = None

Source = Literal["STORAGE_DRIVER", "storage.conf", "detected"]
FUSE_PROGRAM = "fuse-overlayfs"
FUSE_DEVICE = Path("/dev/fuse")
# containers/storage reads the first of these that exists (CONTAINERS_STORAGE_CONF first).
SYSTEM_CONFS = (Path("/etc/containers/storage.conf"), Path("/usr/share/containers/storage.conf"))


@dataclass(frozen=True)
class Storage:
    """The storage driver buildah runs with, where that choice came from, and why."""

    driver: str
    source: Source
    reason: str
    mount_program: str | None = None
    pass_driver: bool = True  # False: buildah reads the choice from storage.conf itself
    tried: tuple[str, ...] = field(default=())  # why each better driver was not used

    def args(self) -> list[str]:
        """buildah's global options for this storage."""
        if not self.pass_driver:
            return []
        args = ["--storage-driver", self.driver]
        if self.mount_program:
            args += ["--storage-opt", f"overlay.mount_program={self.mount_program}"]
        return args


def user_conf(env: Mapping[str, str]) -> Path | None:
    """The storage.conf containers/storage reads for this user, if there is one."""
    named = env.get("CONTAINERS_STORAGE_CONF")
    if named:
        return Path(named)
    candidates = list(SYSTEM_CONFS)
    if os.geteuid() != 0:
        home = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
        candidates.insert(0, Path(home) / "containers" / "storage.conf")
    return next((p for p in candidates if p.is_file()), None)


def conf_driver(path: Path) -> str | None:
    """`[storage] driver` of a storage.conf, None when unset; ValueError when unreadable."""
    if tomllib is None:
        raise ValueError("reading TOML needs Python 3.11")
    try:
        document: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(str(exc)) from exc
    storage = document.get("storage")
    driver = storage.get("driver") if isinstance(storage, dict) else None
    return driver if isinstance(driver, str) and driver else None


def _buildah_default() -> str:
    """The driver buildah picks by itself (from its configuration and its store)."""
    done = _buildah(["info", "--format", "{{.store.GraphDriverName}}"])
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else "unknown"


def _tail(done: subprocess.CompletedProcess[str]) -> str:
    lines = (done.stderr or done.stdout).strip().splitlines()
    errors = [line for line in lines if line.startswith("Error")]
    text = (errors or lines or [f"exit {done.returncode}"])[-1]
    return text if len(text) <= 300 else "..." + text[-300:]


def _buildah(args: list[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(["buildah", *args], capture_output=True, text=True, timeout=60,
                              check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return subprocess.CompletedProcess(args, 127, "", str(exc))


def kernel_overlay() -> str | None:
    """None when buildah's store runs on the kernel's overlay, else why not."""
    done = _buildah(["--storage-driver", "overlay", "info", "--format",
                     "{{.store.GraphDriverName}}"])
    return None if done.returncode == 0 else f"kernel overlay: {_tail(done)}"


def fuse_overlay(program: str = FUSE_PROGRAM, device: Path = FUSE_DEVICE) -> str | None:
    """None when fuse-overlayfs mounts a container here, else why not."""
    found = shutil.which(program)
    if found is None:
        return f"fuse-overlayfs: {program} is not installed (apt-get install -y fuse-overlayfs)"
    try:
        os.close(os.open(device, os.O_RDWR))
    except OSError as exc:
        return f"fuse-overlayfs: {device} is not usable ({exc.strerror})"
    with tempfile.TemporaryDirectory(prefix="ascend-env-storage-probe-") as tmp:
        # A throw-away store: the probe leaves nothing in the operator's.
        store = ["--root", f"{tmp}/root", "--runroot", f"{tmp}/run",
                 "--storage-driver", "overlay",
                 "--storage-opt", f"overlay.mount_program={found}"]
        made = _buildah([*store, "from", "scratch"])
        if made.returncode != 0:
            return f"fuse-overlayfs: {_tail(made)}"
        container = made.stdout.strip().splitlines()[-1]
        try:
            mounted = _buildah([*store, "mount", container])
        finally:
            _buildah([*store, "rm", container])
    return None if mounted.returncode == 0 else f"fuse-overlayfs: {_tail(mounted)}"


def choose_storage(env: Mapping[str, str] | None = None, *, kernel: bool = True,
                   fuse_program: str = FUSE_PROGRAM, fuse_device: Path = FUSE_DEVICE
                   ) -> Storage:
    """The operator's explicit choice, else the best driver that works here."""
    env = os.environ if env is None else env
    named = env.get("STORAGE_DRIVER")
    if named:  # buildah 1.28 reads storage.conf but not this variable: it is passed on
        return Storage(named, "STORAGE_DRIVER", f"STORAGE_DRIVER={named}")
    conf = user_conf(env)
    if conf is not None:
        try:
            configured = conf_driver(conf)
        except ValueError as exc:
            # A configuration this cannot read is still the operator's: buildah decides.
            return Storage(_buildah_default(), "storage.conf",
                           f"{conf} could not be read here ({exc}): buildah's own choice",
                           pass_driver=False)
        if configured is not None:
            return Storage(configured, "storage.conf", f"driver = {configured!r} in {conf}",
                           pass_driver=False)
    tried: list[str] = []
    if kernel:
        why = kernel_overlay()
        if why is None:
            return Storage("overlay", "detected", "the kernel's overlay works here")
        tried.append(why)
    why = fuse_overlay(fuse_program, fuse_device)
    if why is None:
        program = shutil.which(fuse_program) or fuse_program
        unused = f" ({'; '.join(tried)})" if tried else ""
        return Storage("overlay", "detected", f"overlay through {program} works here{unused}",
                       mount_program=program, tried=tuple(tried))
    tried.append(why)
    return Storage("vfs", "detected", "overlay does not work here: " + "; ".join(tried),
                   tried=tuple(tried))
