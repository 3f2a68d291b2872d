"""The cached Debian base root and the per-host roots made from it."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.sim.layout import HostPaths, SimError, cache_dir, secure_mkdir

# Bump when the recipe below changes in a way that shapes the base (part of the cache key).
BASE_RECIPE_VERSION = 2
# python3: Ansible modules and the fake npu-smi/installers; procps: ps for testinfra's
# process module; pciutils: the real lspci reading the fake sysfs; kmod: modprobe & co.
# (lsmod is replaced per host); net-tools: the driver installer's ifconfig prerequisite;
# iproute2: `ip -o addr show`, the host interfaces the probe records;
# python3-venv: `install`'s python role makes the framework venv (hosts without it are made
# by removing ensurepip, tests/install/test_install_python.py).
BASE_INCLUDE = ("python3", "python3-venv", "procps", "pciutils", "kmod", "net-tools",
                "iproute2")


@dataclass(frozen=True)
class BaseRecipe:
    suite: str
    mirror: str
    include: tuple[str, ...] = BASE_INCLUDE
    variant: str = "minbase"

    @property
    def key(self) -> str:
        blob = json.dumps(
            {
                "suite": self.suite,
                "mirror": self.mirror,
                "include": sorted(self.include),
                "variant": self.variant,
                "arch": os.uname().machine,
                "recipe": BASE_RECIPE_VERSION,
            },
            sort_keys=True,
        )
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    @property
    def path(self) -> Path:
        return cache_dir() / f"base-{self.key}"


def _apt_sources() -> list[tuple[str, str]]:
    """(uri, suite) pairs from this machine's apt configuration, both formats."""
    found: list[tuple[str, str]] = []
    files = [Path("/etc/apt/sources.list")]
    d = Path("/etc/apt/sources.list.d")
    if d.is_dir():
        files += sorted(d.iterdir())
    for f in files:
        if not f.is_file():
            continue
        text = f.read_text(errors="replace")
        if f.suffix == ".sources":
            for stanza in re.split(r"\n\s*\n", text):
                fields = dict(
                    (m.group(1).lower(), m.group(2).strip())
                    for m in re.finditer(r"^(\w[\w-]*):\s*(.*)$", stanza, re.M)
                )
                if "deb" in fields.get("types", "").split():
                    for uri in fields.get("uris", "").split():
                        for suite in fields.get("suites", "").split():
                            found.append((uri, suite))
        else:
            for line in text.splitlines():
                m = re.match(r"^\s*deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)", line)
                if m:
                    found.append((m.group(1), m.group(2)))
    return found


def default_recipe() -> BaseRecipe:
    """The suite this machine runs and the Debian mirror its apt already uses.

    The machine has no general internet, so the mirror apt is configured with is the one
    known to be reachable; ASCEND_ENV_SIM_MIRROR / ASCEND_ENV_SIM_SUITE override.
    """
    suite = os.environ.get("ASCEND_ENV_SIM_SUITE", "")
    if not suite:
        osrel = Path("/etc/os-release")
        m = re.search(r"^VERSION_CODENAME=(\S+)", osrel.read_text() if osrel.exists() else "", re.M)
        suite = m.group(1) if m else "bookworm"
    mirror = os.environ.get("ASCEND_ENV_SIM_MIRROR", "")
    if not mirror:
        for uri, s in _apt_sources():
            if s == suite and "security" not in uri:
                mirror = uri
                break
    if not mirror:
        mirror = "http://deb.debian.org/debian"
    return BaseRecipe(suite=suite, mirror=mirror)


@contextmanager
def _locked(lockfile: Path) -> Iterator[None]:
    secure_mkdir(lockfile.parent)
    with lockfile.open("w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def ensure_base(recipe: BaseRecipe | None = None) -> Path:
    """Return the cached base root, building it with debootstrap on first use."""
    recipe = recipe or default_recipe()
    target = recipe.path
    if (target / ".sim-base-ok").exists():
        return target
    if shutil.which("debootstrap") is None:
        raise SimError("debootstrap is not installed: apt-get install -y debootstrap")
    with _locked(cache_dir() / "base.lock"):
        if (target / ".sim-base-ok").exists():
            return target
        tmp = cache_dir() / f"tmp-base-{recipe.key}-{os.getpid()}"
        if tmp.exists():
            shutil.rmtree(tmp)
        secure_mkdir(tmp)
        cmd = [
            "debootstrap",
            f"--variant={recipe.variant}",
            f"--include={','.join(recipe.include)}",
            recipe.suite,
            str(tmp),
            recipe.mirror,
        ]
        log = cache_dir() / f"base-{recipe.key}.log"
        with log.open("w") as fh:
            res = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, check=False)
        if res.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            raise SimError(f"debootstrap failed (exit {res.returncode}); see {log}")
        # Downloaded .debs are 40 MB that every per-host copy would carry for nothing.
        shutil.rmtree(tmp / "var/cache/apt/archives", ignore_errors=True)
        (tmp / "var/cache/apt/archives/partial").mkdir(parents=True, exist_ok=True)
        (tmp / ".sim-base-ok").write_text(
            json.dumps({"recipe": recipe.__dict__, "built": time.time()}, default=list)
        )
        Path(tmp).chmod(0o755)
        if target.exists():
            shutil.rmtree(target)
        tmp.rename(target)
    return target


# ---- per-host roots ---------------------------------------------------------------------


def _mounts_under(prefix: Path) -> list[Path]:
    """Mount points at or below `prefix`, deepest first (so they unmount in order)."""
    out: list[Path] = []
    pfx = str(prefix.resolve()) if prefix.exists() else str(prefix)
    with Path("/proc/self/mountinfo").open() as fh:
        for line in fh:
            mp = line.split()[4].encode().decode("unicode_escape")
            if mp == pfx or mp.startswith(pfx.rstrip("/") + "/"):
                out.append(Path(mp))
    return sorted(out, key=lambda p: len(p.parts), reverse=True)


def unmount_all(prefix: Path) -> None:
    for mp in _mounts_under(prefix):
        res = subprocess.run(["umount", str(mp)], capture_output=True, text=True, check=False)
        if res.returncode != 0:
            # A process still has a cwd inside (a test's shell): detach rather than leak.
            subprocess.run(["umount", "-l", str(mp)], capture_output=True, check=False)
    left = _mounts_under(prefix)
    if left:
        raise SimError(f"could not unmount {', '.join(map(str, left))}")


def create_host_root(base: Path, hp: HostPaths, mode: str = "overlay") -> None:
    """Give one host its own root: an overlay over the read-only base, or a full copy.

    Never hard links: a write through a link would land in the base and every other host.
    """
    secure_mkdir(hp.base)
    if mode == "overlay":
        for d in (hp.upper, hp.work, hp.root):
            secure_mkdir(d)
        opts = f"lowerdir={base},upperdir={hp.upper},workdir={hp.work}"
        res = subprocess.run(
            ["mount", "-t", "overlay", "overlay", "-o", opts, str(hp.root)],
            capture_output=True,
            text=True,
            check=False,
        )
        if res.returncode != 0:
            raise SimError(f"overlay mount failed for {hp.root}: {res.stderr.strip()}")
    elif mode == "copy":
        res = subprocess.run(
            ["cp", "-a", "--reflink=auto", f"{base}/.", str(secure_mkdir(hp.root))],
            capture_output=True,
            text=True,
            check=False,
        )
        if res.returncode != 0:
            raise SimError(f"copying the base root failed: {res.stderr.strip()}")
    else:
        raise SimError(f"unknown root mode {mode!r} (overlay or copy)")
    Path(hp.root).chmod(0o755)
    _populate_dev(hp.root)
    # /proc: ps (testinfra), Ansible facts and Python's own introspection want a real one.
    res = subprocess.run(
        ["mount", "-t", "proc", "proc", str(hp.root / "proc")],
        capture_output=True,
        text=True,
        check=False,
    )
    if res.returncode != 0:
        raise SimError(f"mounting /proc in {hp.root} failed: {res.stderr.strip()}")
    resolv = Path("/etc/resolv.conf")
    if resolv.is_file():
        # A copy lets apt inside a host resolve the mirror, without touching the machine's.
        target = hp.root / "etc/resolv.conf"
        if target.is_symlink() or target.exists():
            target.unlink()
        shutil.copyfile(resolv, target)


_DEV_NODES = {
    # name: (major, minor, mode)
    "null": (1, 3, 0o666),
    "zero": (1, 5, 0o666),
    "full": (1, 7, 0o666),
    "random": (1, 8, 0o666),
    "urandom": (1, 9, 0o666),
    "tty": (5, 0, 0o666),
}


def _populate_dev(root: Path) -> None:
    dev = root / "dev"
    dev.mkdir(exist_ok=True)
    for name, (major, minor, mode) in _DEV_NODES.items():
        node = dev / name
        if node.exists() or node.is_symlink():
            node.unlink()
        os.mknod(node, mode | 0o020000, os.makedev(major, minor))
        Path(node).chmod(mode)
    for link, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                         ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
        p = dev / link
        if not (p.exists() or p.is_symlink()):
            p.symlink_to(target)
    (dev / "shm").mkdir(mode=0o1777, exist_ok=True)
    Path(dev / "shm").chmod(0o1777)


def destroy_host_root(hp: HostPaths) -> None:
    unmount_all(hp.base)
    if hp.base.exists():
        shutil.rmtree(hp.base)
