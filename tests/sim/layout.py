"""Where the harness keeps its state: one root-owned tree, every component mode 755."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

DEFAULT_STATE_DIR = Path("/var/lib/ascend-env-sim")


class SimError(Exception):
    """An error a person can act on; the CLI prints it without a traceback."""


def state_dir() -> Path:
    return Path(os.environ.get("ASCEND_ENV_SIM_DIR", str(DEFAULT_STATE_DIR)))


def secure_mkdir(path: Path) -> Path:
    """Create `path` (and parents) root-owned 0755.

    sshd refuses a ChrootDirectory when any component is group- or world-writable, so the
    harness fixes the mode of every directory it creates rather than trusting the umask.
    """
    missing: list[Path] = []
    probe = path
    while not probe.exists():
        missing.append(probe)
        probe = probe.parent
    for d in reversed(missing):
        d.mkdir(mode=0o755, exist_ok=True)
        Path(d).chmod(0o755)
    return path


def check_chroot_path(path: Path) -> None:
    """Fail early, with the culprit named, where sshd would refuse the chroot later."""
    for comp in [path, *path.parents]:
        st = comp.stat()
        if st.st_uid != 0 or st.st_mode & 0o022:
            raise SimError(
                f"{comp} must be owned by root and not group/world-writable "
                f"(sshd ChrootDirectory rule); set ASCEND_ENV_SIM_DIR to another place "
                f"or run: chown root {comp} && chmod go-w {comp}"
            )


@dataclass(frozen=True)
class FleetPaths:
    """Paths of one fleet (a set of hosts brought up together)."""

    base: Path

    @classmethod
    def for_fleet(cls, name: str) -> FleetPaths:
        return cls(state_dir() / "fleets" / name)

    @property
    def registry(self) -> Path:
        return self.base / "fleet.json"

    @property
    def client_key(self) -> Path:
        return self.base / "client" / "id_ed25519"

    @property
    def authorized_keys(self) -> Path:
        return self.base / "client" / "authorized_keys"

    @property
    def control_dir(self) -> Path:
        return self.base / "cp"

    @property
    def inventory(self) -> Path:
        return self.base / "inventory.ini"

    @property
    def ssh_config(self) -> Path:
        return self.base / "ssh_config"

    def host(self, name: str) -> HostPaths:
        return HostPaths(self.base / "hosts" / name)


@dataclass(frozen=True)
class HostPaths:
    """Paths of one simulated host; `root` is what sshd chroots into."""

    base: Path

    @property
    def root(self) -> Path:
        return self.base / "root"

    @property
    def upper(self) -> Path:
        return self.base / "upper"

    @property
    def work(self) -> Path:
        return self.base / "work"

    @property
    def sshd_config(self) -> Path:
        return self.base / "sshd_config"

    @property
    def host_key(self) -> Path:
        return self.base / "ssh_host_ed25519_key"

    @property
    def pidfile(self) -> Path:
        return self.base / "sshd.pid"

    @property
    def log(self) -> Path:
        return self.base / "sshd.log"


def cache_dir() -> Path:
    return state_dir() / "cache"
