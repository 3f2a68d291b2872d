"""The simulated hosts' stub shared libraries, compiled with gcc on the controller once and
cached under a key of their sources, flags and compiler."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from tests.sim.layout import SimError, cache_dir, secure_mkdir


def version() -> str:
    if shutil.which("gcc") is None:
        raise SimError("gcc is not installed: apt-get install -y gcc")
    return subprocess.run(["gcc", "-dumpfullversion"], capture_output=True, text=True,
                          check=False).stdout.strip()


def run(args: list[str], what: str) -> None:
    """gcc with `args`; a failure names `what` and carries gcc's message."""
    res = subprocess.run(["gcc", *args], capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise SimError(f"gcc failed on {what}: {res.stderr.strip()}")


def cached(label: str, recipe: str, build: Callable[[Path], None]) -> Path:
    """Folder `label-KEY` in the sim cache, filled by `build(folder)` on first use.

    `recipe` is everything the result depends on besides gcc and the machine (sources,
    flags); the key covers all three, so an edit or another compiler builds afresh.
    """
    blob = f"{version()}|{os.uname().machine}|{recipe}"
    out = cache_dir() / f"{label}-{hashlib.sha256(blob.encode()).hexdigest()[:16]}"
    if (out / ".ok").exists():
        return out
    tmp = secure_mkdir(cache_dir() / f"tmp-{label}-{os.getpid()}")
    try:
        build(tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    (tmp / ".ok").write_text("")
    if out.exists():
        shutil.rmtree(out)
    tmp.rename(out)
    return out
