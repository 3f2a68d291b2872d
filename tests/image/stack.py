"""The image tests' stack: the fake vendor repo (tests/sim) plus stand-in framework wheels.

Real torch and torch_npu wheels are gigabytes and not available offline, so the framework
layer installs tiny wheels named `torch`, `torch_npu` and CANN's Python dependencies
(tests/wheels.py: pure Python, real wheel format, real pip). What that layer proves is
honest: pinned versions land in the venv from the verified repository, offline, and a change
of the torch_npu pin rebuilds only that layer.
"""

from __future__ import annotations

import platform
import subprocess
import tempfile
from pathlib import Path

from ascend_env.repository.fetch import Source, fetch
from ascend_env.spec.catalogue import Catalogue
from ascend_env.spec.envspec import EnvSpec, build_spec
from ascend_env.spec.plan import Plan, resolve
from tests.wheels import catalogue_with_frameworks, fill_wheels

ARCH = platform.machine()
CANN = "9.0.0"
HDK = "25.5.0"
TORCH = "2.10.0"
# 9.0.0 pairs torch 2.10.0 with two torch_npu builds (matrix): a torch_npu-only change.
TORCH_NPU = "2.10.0.post2"
TORCH_NPU_ALT = "2.10.0"
PYTHON = "3.11"  # the simulated hosts' Debian 12 python3


def spec_for(torch_npu: str | None = TORCH_NPU, *, name: str = "img") -> EnvSpec:
    frameworks = {"torch": {"version": TORCH, "torch_npu": torch_npu} if torch_npu else None,
                  "mindspore": None}
    return build_spec({"extends": "910b", "name": name,
                       "os": {"family": "debian", "version": "12"},
                       "hardware": {"arch": ARCH, "devices": 8},
                       "driver": {"version": HDK},
                       "cann": {"version": CANN, "packages": ["toolkit", "ops", "nnal"]},
                       "python": {"version": PYTHON}, "frameworks": frameworks}, "test")


def make_repo(root: Path) -> tuple[Path, Path, Catalogue]:
    """A verified repository (fetch) with both torch_npu builds; returns repo, vendor, cat."""
    from tests.sim import packages  # noqa: PLC0415  (needs makeself; only when building)

    vendor = root / "vendor"
    repo = root / "repo"
    packages.build_repo(vendor, chip="910b", cann=CANN, hdk=HDK, arch=ARCH)
    specs = [spec_for(torch_npu) for torch_npu in (TORCH_NPU, TORCH_NPU_ALT)]
    catalogue = catalogue_with_frameworks(vendor, *specs)
    for spec in specs:
        result = fetch(resolve(spec, catalogue), repo, Source(from_dir=vendor))
        assert result.complete, result.model_dump_json(indent=1)
    fill_wheels(repo)
    return repo, vendor, catalogue


def import_base(buildah: list[str], tag: str) -> str:
    """Commit the simulated hosts' cached Debian root as image TAG in BUILDAH's storage.

    BUILDAH is the builder's command line with its storage options, so the base lands in the
    store the builds read (`python -m tests.sim base-image` passes the detected one).
    """
    from tests.sim import rootfs  # noqa: PLC0415  (needs debootstrap; only when building)
    from tests.sim.layout import cache_dir  # noqa: PLC0415

    def run(*args: str) -> str:
        return subprocess.run([*buildah, *args], capture_output=True, text=True,
                              check=True).stdout.strip()

    base = rootfs.ensure_base()
    with tempfile.TemporaryDirectory(dir=cache_dir()) as tmp:
        tar = Path(tmp) / "base.tar"
        subprocess.run(["tar", "-C", str(base), "--numeric-owner", "--exclude=./.sim-base-ok",
                        "-cf", str(tar), "."], capture_output=True, check=True)
        container = run("from", "scratch")
        try:
            run("add", container, str(tar), "/")  # a local tar is unpacked by `add`
            run("config", "--cmd", "/bin/bash", "--label",
                "org.ascend-env.sim.base=debootstrap", container)
            return run("commit", "--quiet", container, tag)
        finally:
            subprocess.run([*buildah, "rm", container], capture_output=True, check=False)


def plan_for(spec: EnvSpec, catalogue: Catalogue) -> Plan:
    return resolve(spec, catalogue)
