"""`repo --os NAME`: the OS side of a simulated vendor folder.

For openeuler-22.03 the folder gets `os/<key>/`, a copy of the stand-in mirror (tests/sim/
openeuler.py): what an operator copies from an OS mirror or DVD, which `ascend-env fetch
--from-dir DEST` resolves the OS packages from. Debian 12's packages are Debian's own: fetch
takes them from the Debian mirror this machine's apt uses (`--os-mirror`).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.sim import oshosts, rootfs


def write(dest: Path, os_name: str, arch: str) -> str:
    """Lay the OS part into `dest`; returns what to add to `repo`'s summary line."""
    oshosts.check(os_name)
    kernel = oshosts.kernel_release(os_name, arch)
    hint = f"; its hosts run kernel {kernel}: fetch with --kernel {kernel}"
    if os_name != "openeuler-22.03":
        mirror = rootfs.default_recipe().mirror
        return f"{hint} --os-mirror {mirror}"
    target = dest / "os" / oshosts.os_key(os_name, arch)
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(oshosts.standin_mirror(arch), target)
    return f", the stand-in {os_name} mirror in {target}{hint}"
