"""CPU torch inside simulated hosts: one cached layer, bind-mounted read-only into each root.

Torch (the 2.13.0 CPU build, some hundreds of MB with its dependencies) is installed once
with pip --target into the sim cache and shared by every host of every fleet, never copied
per host. A host runs it through /usr/local/bin/python3-torch, which is the host's own
Debian python3 (3.11, as the layer's wheels) with the layer on PYTHONPATH. The mount lies
under the host's root, so the fleet's `down` unmounts it with the rest.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.sim.layout import SimError, cache_dir, secure_mkdir

TORCH = "torch==2.13.0"
INSIDE = Path("opt/ascend-sim/torch")
WRAPPER = Path("usr/local/bin/python3-torch")


def ensure_layer() -> Path:
    """The cached layer's folder, built on first use (atomically: a half-built layer is
    never taken for a whole one)."""
    python = f"py{sys.version_info[0]}{sys.version_info[1]}"
    layer = cache_dir() / f"torch-{TORCH.split('==')[1]}-{python}"
    if (layer / ".complete").exists():
        return layer
    tmp = secure_mkdir(cache_dir()) / f".{layer.name}.{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--target", str(tmp),
                           TORCH], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        raise SimError(f"pip could not install {TORCH} for the hosts: {done.stderr[-500:]}")
    (tmp / ".complete").write_text(TORCH + "\n")
    if layer.exists():
        shutil.rmtree(layer)
    tmp.replace(layer)
    return layer


def attach(root: Path, layer: Path) -> None:
    """Mount the layer read-only into one host root and give it python3-torch."""
    inside = root / INSIDE
    if os.path.ismount(inside):
        return
    inside.mkdir(parents=True, exist_ok=True)
    for argv in (["mount", "--bind", str(layer), str(inside)],
                 ["mount", "-o", "remount,bind,ro", str(inside)]):
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SimError(f"{' '.join(argv)} failed: {done.stderr.strip()}")
    wrapper = root / WRAPPER
    wrapper.parent.mkdir(parents=True, exist_ok=True)
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH=/{INSIDE}${{PYTHONPATH:+:$PYTHONPATH}} '
                       'exec /usr/bin/python3 "$@"\n')
    wrapper.chmod(0o755)
