"""Which Pythons and platforms each framework build really ships wheels for.

The facts are ascend_env/data/wheel_index.json, written by scripts/refresh_wheel_index.py from
the package index's file lists (pypi.org/pypi/<name>/json) and the vendor manifests in the
shipped catalogue. A spec whose Python has no wheel of its torch_npu or MindSpore build is
invalid here, before anything is downloaded: torch_npu 2.9.0 has cp310-cp312 wheels and no
cp313 one, though PyTorch 2.9 itself supports 3.13.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from typing import Any

from packaging.utils import canonicalize_version
from packaging.version import InvalidVersion, Version

from ascend_env.core.errors import Problem
from ascend_env.core.resources import data_text
from ascend_env.spec.envspec import EnvSpec

INDEX_FILE = "wheel_index.json"
# Where torch's CPU builds live (torch_npu pins them: `Requires-Dist: torch==2.9.0+cpu`); the
# package index's own torch of the same version is the CUDA build.
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"


@dataclass(frozen=True)
class WheelFile:
    """One real wheel of a build."""

    filename: str
    python: str | None  # "3.11"; None for a py3-none-any wheel
    platforms: tuple[str, ...]
    arch: str  # x86_64, aarch64 or any
    sha256: str
    urls: tuple[str, ...]

    @property
    def linux(self) -> bool:
        return all(p == "any" or p.startswith(("manylinux", "linux")) for p in self.platforms)


@dataclass(frozen=True)
class Build:
    """One release of a distribution: its wheels, and (torch_npu) the torch it ships beside."""

    distribution: str
    version: str
    files: tuple[WheelFile, ...]
    torch: str | None = None

    def for_arch(self, arch: str) -> list[WheelFile]:
        return [f for f in self.files if f.linux and f.arch in (arch, "any")]

    def pythons(self, arch: str) -> list[str]:
        """The Pythons (minor versions) this build has a Linux wheel for on `arch`."""
        found = {f.python for f in self.for_arch(arch) if f.python}
        return sorted(found, key=lambda v: tuple(int(p) for p in v.split(".")))

    def platforms(self, arch: str, python: str) -> list[str]:
        """The platform tags of its wheels for this Python and arch, newest glibc first."""
        tags = {p for f in self.for_arch(arch) if f.python in (python, None)
                for p in f.platforms if p != "any"}
        return sorted(tags, key=_glibc, reverse=True)


def _glibc(platform: str) -> tuple[int, int]:
    """(major, minor) of the glibc a manylinux tag needs; manylinux2014 is 2.17 (PEP 599)."""
    legacy = {"manylinux2014": (2, 17), "manylinux2010": (2, 12), "manylinux1": (2, 5)}
    head = platform.split("_", maxsplit=1)[0]
    if head in legacy:
        return legacy[head]
    parts = platform.split("_")
    if platform.startswith("manylinux_") and parts[1].isdigit() and parts[2].isdigit():
        return int(parts[1]), int(parts[2])
    return (0, 0)


@dataclass(frozen=True)
class WheelIndex:
    refreshed: str
    sources: dict[str, str]
    builds: dict[str, dict[str, Build]]  # distribution -> canonical version -> build

    def build(self, distribution: str, version: str) -> Build | None:
        return self.builds.get(distribution, {}).get(_key(version))

    def file(self, filename: str) -> WheelFile | None:
        return next((f for builds in self.builds.values() for b in builds.values()
                     for f in b.files if f.filename == filename), None)


def _key(version: str) -> str:
    try:
        return canonicalize_version(Version(version))
    except InvalidVersion:
        return version


def parse_index(document: dict[str, Any]) -> WheelIndex:
    builds: dict[str, dict[str, Build]] = {}
    for distribution, versions in document.get("builds", {}).items():
        for version, body in versions.items():
            files = tuple(WheelFile(filename=f["filename"], python=f.get("python"),
                                    platforms=tuple(f["platforms"]), arch=f["arch"],
                                    sha256=f["sha256"], urls=tuple(f["urls"]))
                          for f in body["files"])
            builds.setdefault(distribution, {})[_key(version)] = Build(
                distribution, version, files, body.get("torch"))
    return WheelIndex(refreshed=document.get("refreshed", ""),
                      sources=dict(document.get("sources", {})), builds=builds)


@cache
def load_wheel_index() -> WheelIndex:
    """The shipped per-build wheel facts."""
    return parse_index(json.loads(data_text(INDEX_FILE)))


def framework_builds(spec: EnvSpec) -> list[tuple[str, str]]:
    """(distribution, version) of the spec's frameworks whose wheels the index knows."""
    pins: list[tuple[str, str]] = []
    if spec.frameworks.torch is not None:
        pins.append(("torch_npu", spec.frameworks.torch.torch_npu))
    if spec.frameworks.mindspore is not None:
        pins.append(("mindspore", spec.frameworks.mindspore.version))
    return pins


def torch_pin(spec: EnvSpec, index: WheelIndex | None = None) -> str | None:
    """The torch build the spec's torch_npu is shipped beside (`2.9.0+cpu`), where known."""
    if spec.frameworks.torch is None:
        return None
    build = (index or load_wheel_index()).build("torch_npu", spec.frameworks.torch.torch_npu)
    return build.torch if build is not None else None


def pip_platforms(spec: EnvSpec, index: WheelIndex | None = None) -> list[str]:
    """The `pip download --platform` values for the spec's venv: the framework wheels' own
    tags (manylinux_2_28 for torch_npu 2.9.0), then manylinux2014, which pip widens to
    manylinux2010 and manylinux1, for the dependencies' older wheels."""
    index = index or load_wheel_index()
    arch, python = spec.hardware.arch, spec.python.version
    tags: list[str] = []
    for distribution, version in framework_builds(spec):
        build = index.build(distribution, version)
        for tag in build.platforms(arch, python) if build else []:
            if tag not in tags:
                tags.append(tag)
    if not any(t.startswith("manylinux_2_28") for t in tags):
        tags.insert(0, f"manylinux_2_28_{arch}")
    for tag in (f"manylinux2014_{arch}",):
        if tag not in tags:
            tags.append(tag)
    return sorted(tags, key=_glibc, reverse=True)


def check_wheels(spec: EnvSpec, index: WheelIndex | None = None) -> list[Problem]:
    """A framework build with no wheel for the spec's Python on its arch: an error naming the
    Pythons it has (builds the index does not list are left to the matrix's rules)."""
    index = index or load_wheel_index()
    problems = []
    arch, python = spec.hardware.arch, spec.python.version
    for distribution, version in framework_builds(spec):
        build = index.build(distribution, version)
        if build is None or not build.for_arch(arch):
            continue
        pythons = build.pythons(arch)
        if python in pythons or any(f.python is None for f in build.for_arch(arch)):
            continue
        problems.append(Problem(
            path="python.version", value=python,
            message=f"{distribution} {version} has no wheel for Python {python} on {arch}: "
                    f"its wheels are for Python {', '.join(pythons)}",
            row=f"wheel_index.json ({index.sources.get(distribution, 'the package index')}, "
                f"refreshed {index.refreshed})",
            alternatives=pythons))
    return problems
