"""Install the fake vendor stack into a host root, the way an operator's host ends up."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from tests.sim import packages
from tests.sim.layout import SimError, cache_dir

if TYPE_CHECKING:
    from tests.sim.fleet import Versions

HOST_PKG_DIR = "/root/ascend-packages"
CLEAN_ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
             "HOME": "/root", "LANG": "C.UTF-8"}


def cached_repo(chip: str, versions: Versions, arch: str | None = None) -> Path:
    """The fake packages for this stack, built once and kept in the cache."""
    import os  # noqa: PLC0415

    arch = arch or os.uname().machine
    dest = cache_dir() / f"provision-{chip}-{versions.cann}-{versions.hdk}-{arch}"
    packages.build_repo(dest, chip=chip, cann=versions.cann, hdk=versions.hdk, arch=arch,
                        firmware=versions.firmware)
    return dest


def in_root(root: Path, script: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """Run a shell script inside a host root (chroot), with a clean environment."""
    return subprocess.run(["chroot", str(root), "/bin/sh", "-c", script], input=stdin,
                          capture_output=True, text=True, env=CLEAN_ENV, check=False)


def install_sequence(names: dict[str, str], nnal: bool = True) -> str:
    """Commands in the vendor's first-install order: driver, firmware, toolkit, ops/kernels,
    then nnal after sourcing the toolkit environment (CANN install guide,
    https://www.hiascend.com/document/detail/en/CANNCommunityEdition/900/softwareinst/instg/instg_0005.html)."""
    steps = [
        "getent group HwHiAiUser >/dev/null || groupadd HwHiAiUser",
        "id HwHiAiUser >/dev/null 2>&1 || useradd -g HwHiAiUser -d /home/HwHiAiUser -m "
        "HwHiAiUser -s /bin/bash",
        f"cd {HOST_PKG_DIR}",
        f"./{names['driver']} --nox11 --full --quiet --install-for-all",
        f"./{names['firmware']} --nox11 --full --quiet",
        f"./{names['toolkit']} --nox11 --install --quiet --install-for-all",
        f"./{names['ops']} --nox11 --install --quiet --install-for-all",
    ]
    if nnal:
        steps += [". /usr/local/Ascend/ascend-toolkit/set_env.sh",
                  f"./{names['nnal']} --nox11 --install --quiet --install-for-all"]
    return "\n".join(["set -e", *steps])


def provision_host(root: Path, repo: Path, chip: str, versions: Versions) -> None:
    import os  # noqa: PLC0415

    arch = os.uname().machine
    n = packages.names(chip, versions.cann, versions.hdk, arch, versions.firmware)
    pkg_dir = root / HOST_PKG_DIR.lstrip("/")
    pkg_dir.mkdir(parents=True, exist_ok=True)
    for kind in ("driver", "firmware", "toolkit", "ops", "nnal"):
        shutil.copy2(repo / n[kind], pkg_dir / n[kind])
    res = in_root(root, install_sequence(n, nnal=versions.nnal))
    shutil.rmtree(pkg_dir, ignore_errors=True)
    if res.returncode != 0:
        raise SimError(f"provisioning {root} failed (exit {res.returncode}):\n"
                       f"{res.stdout[-2000:]}{res.stderr[-2000:]}")
