"""Import the cached Debian base root as a container image (for the image tests)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from tests.sim import rootfs
from tests.sim.layout import SimError, cache_dir

# vfs storage: no overlay-on-overlay or fuse needed on CI machines (DESIGN: Images).
BUILDAH = ["buildah", "--storage-driver", "vfs"]


def _buildah(*args: str) -> str:
    res = subprocess.run([*BUILDAH, *args], capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise SimError(f"buildah {' '.join(args[:2])} failed: {res.stderr.strip()}")
    return res.stdout.strip()


def import_base(tag: str) -> str:
    """Commit the cached base root as image TAG (buildah, vfs); return the image id."""
    if shutil.which("buildah") is None:
        raise SimError("buildah is not installed: apt-get install -y buildah")
    base = rootfs.ensure_base()
    with tempfile.TemporaryDirectory(dir=cache_dir()) as tmp:
        tar = Path(tmp) / "base.tar"
        res = subprocess.run(
            ["tar", "-C", str(base), "--numeric-owner", "--exclude=./.sim-base-ok",
             "-cf", str(tar), "."], capture_output=True, text=True, check=False)
        if res.returncode != 0:
            raise SimError(f"tar of {base} failed: {res.stderr.strip()}")
        ctr = _buildah("from", "scratch")
        try:
            _buildah("add", ctr, str(tar), "/")  # a local tar is unpacked by `add`
            _buildah("config", "--cmd", "/bin/bash", "--label",
                     "org.ascend-env.sim.base=debootstrap", ctr)
            return _buildah("commit", "--quiet", ctr, tag)
        finally:
            subprocess.run([*BUILDAH, "rm", ctr], capture_output=True, check=False)
