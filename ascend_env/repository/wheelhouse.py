"""Which framework wheels a repository can install offline, decided before a host is touched.

A host without internet installs its Python stack with `pip install --no-index --find-links`.
pip only discovers a missing wheel half-way through, on the host. This module walks the same
dependency graph on the controller, from the wheels' own METADATA (Requires-Dist, with markers
evaluated for the target's Python and arch), so that `install` can name every missing
distribution up front and ship exactly the wheels that are needed.

It is deliberately a small resolver: the highest compatible version that satisfies the first
requirement seen wins, with no backtracking. pip on the host stays the final judge; this is
the check that makes "the repository has everything" a statement made before anything runs.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import subprocess
import sys
import urllib.parse
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from email.parser import HeaderParser
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.tags import Tag
from packaging.utils import (
    InvalidWheelFilename,
    NormalizedName,
    canonicalize_name,
    parse_wheel_filename,
)
from packaging.version import Version

from ascend_env.repository import wheel_digests
from ascend_env.repository.tar_bundle import cached_tar
from ascend_env.spec.envspec import EnvSpec
from ascend_env.spec.wheels import TORCH_CPU_INDEX, pip_platforms, torch_pin

# What CANN's Python parts (te/tbe, op compilation) import: the official 9.0.0 image installs
# exactly these before CANN (cann-container-image), and their absence is the
# "EH9999 ... [Init][Env]init env failed!" of https://github.com/Ascend/pytorch/issues/7.
CANN_PYTHON_DEPS = ("attrs", "cython", "numpy", "decorator", "sympy", "cffi", "pyyaml",
                    "pathlib2", "psutil", "protobuf", "scipy", "requests", "absl-py")

# Extra wheels (CANN's dependencies and everything the frameworks pull in) live here, inside
# the repository; the framework wheels themselves sit where fetch put them.
WHEELS_DIR = "wheels"
# How many closure archives `bundle` keeps in its cache (one per spec a site installs).
KEEP_BUNDLES = 4


def requirements_for(spec: EnvSpec) -> list[str]:
    """What the framework venv needs: the pins plus CANN's dependencies (none without a
    framework: then there is no venv to put them in)."""
    pins = [f"{name}=={version}" for name, version in spec.framework_pins()]
    return pins + list(CANN_PYTHON_DEPS) if pins else []


@dataclass(frozen=True)
class Target:
    """The interpreter the wheels are for: CPython `python` ("3.11") on Linux `arch`, with
    the platform tags pip downloads for and the torch build torch_npu pins (`2.9.0+cpu`,
    from `torch_index`: the package index's own torch of that version is the CUDA one)."""

    python: str
    arch: str
    platforms: tuple[str, ...] = ()
    torch: str | None = None
    torch_index: str = TORCH_CPU_INDEX

    @classmethod
    def of(cls, spec: EnvSpec, *, mirror: str | None = None) -> Target:
        index = TORCH_CPU_INDEX
        if mirror:  # a site mirror keeps the path (https://mirror/whl/cpu)
            index = mirror.rstrip("/") + urllib.parse.urlsplit(TORCH_CPU_INDEX).path
        return cls(python=spec.python.version, arch=spec.hardware.arch,
                   platforms=tuple(pip_platforms(spec)), torch=torch_pin(spec),
                   torch_index=index)

    def pip_platforms(self) -> list[str]:
        """`--platform` values: the framework wheels' tags, then manylinux2014 (which pip
        widens to manylinux2010 and manylinux1); pip takes the option repeated."""
        return list(self.platforms) or [f"manylinux_2_28_{self.arch}",
                                         f"manylinux2014_{self.arch}"]

    def pinned(self, requirement: str) -> str:
        """`torch==2.9.0` as the build torch_npu pins (`torch==2.9.0+cpu`), so that no index
        can hand out the CUDA torch of the same version; other requirements unchanged."""
        try:
            parsed = Requirement(requirement)
        except InvalidRequirement:
            return requirement
        if self.torch is None or canonicalize_name(parsed.name) != "torch":
            return requirement
        base = self.torch.split("+", maxsplit=1)[0]
        if str(parsed.specifier) != f"=={base}":
            return requirement
        return f"torch=={self.torch}"

    def environment(self) -> dict[str, str]:
        """PEP 508 marker variables of the target (not of this controller)."""
        return {"python_version": self.python, "python_full_version": f"{self.python}.0",
                "platform_machine": self.arch, "sys_platform": "linux",
                "platform_system": "Linux", "os_name": "posix",
                "implementation_name": "cpython", "platform_python_implementation": "CPython",
                "platform_release": "", "platform_version": "", "extra": ""}

    def supports(self, tags: Iterable[Tag]) -> bool:
        """Whether pip on the target could install a wheel with one of these tags.

        The target's glibc is not known here, so every manylinux level is accepted; pip on
        the host has the last word (CentOS 7's glibc 2.17 refuses a manylinux_2_28 wheel,
        which then shows as pip's error in the install log).
        """
        major, minor = self.python.split(".")[:2]
        cp = f"cp{major}{minor}"
        pythons = {cp, f"py{major}", f"py{major}{minor}"}
        abis = {cp, "abi3", "none"}
        return any(_python_ok(tag.interpreter, pythons, int(minor))
                   and (tag.abi in abis or tag.abi.startswith(cp))
                   and _platform_ok(tag.platform, self.arch) for tag in tags)


def _python_ok(interpreter: str, pythons: set[str], minor: int) -> bool:
    # cp38-abi3 runs on every later CPython 3.x: the stable ABI's promise.
    if interpreter in pythons:
        return True
    return (interpreter.startswith("cp3") and interpreter[3:].isdigit()
            and int(interpreter[3:]) <= minor)


def _platform_ok(platform: str, arch: str) -> bool:
    if platform == "any":
        return True
    return platform.endswith(f"_{arch}") and platform.startswith(("manylinux", "linux"))


@dataclass(frozen=True)
class Wheel:
    path: Path
    name: NormalizedName
    version: Version
    tags: frozenset[Tag]

    def requires(self) -> list[str]:
        """The Requires-Dist lines of the wheel's METADATA."""
        with zipfile.ZipFile(self.path) as archive:
            metadata = next((n for n in archive.namelist()
                             if n.count("/") == 1 and n.endswith(".dist-info/METADATA")), None)
            if metadata is None:
                return []
            text = archive.read(metadata).decode("utf-8", errors="replace")
        return HeaderParser().parsestr(text).get_all("Requires-Dist") or []


@dataclass(frozen=True)
class Missing:
    requirement: str
    needed_by: str  # "the spec" or the distribution that requires it
    reason: str

    def __str__(self) -> str:
        return f"{self.requirement} (needed by {self.needed_by}: {self.reason})"


@dataclass
class Resolution:
    chosen: dict[NormalizedName, Wheel] = field(default_factory=dict)
    missing: list[Missing] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.missing

    @property
    def wheels(self) -> list[Path]:
        return sorted(wheel.path for wheel in self.chosen.values())


def scan(folders: Iterable[Path]) -> list[Wheel]:
    """Every well-named wheel directly inside `folders` (others are not pip's business)."""
    found = []
    for folder in folders:
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.whl")):
            try:
                name, version, _build, tags = parse_wheel_filename(path.name)
            except InvalidWheelFilename:
                continue
            found.append(Wheel(path=path, name=name, version=version, tags=tags))
    return found


def resolve(requirements: Iterable[str], wheels: Iterable[Wheel], target: Target
            ) -> Resolution:
    """The wheels that satisfy `requirements` and all they depend on, for `target`."""
    by_name: dict[NormalizedName, list[Wheel]] = {}
    for wheel in wheels:
        if target.supports(wheel.tags):
            by_name.setdefault(wheel.name, []).append(wheel)
    result = Resolution()
    queue: list[tuple[str, str]] = [(r, "the spec") for r in requirements]
    seen: set[tuple[str, str]] = set()
    while queue:
        text, parent = queue.pop(0)
        if (text, parent) in seen:
            continue
        seen.add((text, parent))
        try:
            requirement = Requirement(text)
        except InvalidRequirement as exc:
            result.missing.append(Missing(text, parent, f"not a valid requirement: {exc}"))
            continue
        if not _applies(requirement.marker, target, parent_extras=()):
            continue
        name = canonicalize_name(requirement.name)
        chosen = result.chosen.get(name)
        if chosen is not None:
            if not requirement.specifier.contains(chosen.version, prereleases=True):
                result.missing.append(Missing(text, parent, f"the repository's {chosen.name} "
                                              f"{chosen.version} was already chosen"))
            continue
        fitting = [w for w in by_name.get(name, [])
                   if requirement.specifier.contains(w.version, prereleases=True)]
        if not fitting:
            have = sorted({str(w.version) for w in by_name.get(name, [])})
            result.missing.append(Missing(text, parent, "no wheel in the repository" if not have
                                          else f"the repository has only {', '.join(have)}"))
            continue
        best = max(fitting, key=lambda w: w.version)
        result.chosen[name] = best
        for line in best.requires():
            try:
                dependency = Requirement(line)
            except InvalidRequirement:
                continue  # a broken line in someone else's metadata is pip's call on the host
            if _applies(dependency.marker, target, parent_extras=tuple(requirement.extras)):
                dependency.marker = None
                queue.append((str(dependency), f"{best.name} {best.version}"))
    return result


def _applies(marker: Marker | None, target: Target, *, parent_extras: tuple[str, ...]) -> bool:
    if marker is None:
        return True
    environment = target.environment()
    return any(marker.evaluate({**environment, "extra": extra})
               for extra in ("", *parent_extras))


def download_hint(missing: list[Missing], target: Target, dest: Path) -> str:
    """The command that fills the gap, run on a machine that can reach an index; every word
    shell-quoted (a requirement like `numpy<2.0` or a path with a space stays one word)."""
    wanted = sorted({target.pinned(m.requirement) for m in missing})
    words = ["pip", "download", "--only-binary=:all:", "--implementation", "cp",
             "--python-version", target.python]
    for platform in target.pip_platforms():
        words += ["--platform", platform]
    if any(w.startswith("torch==") and "+" in w for w in wanted):
        words += ["--extra-index-url", target.torch_index]
    words += ["--dest", str(dest), *wanted]
    return shlex.join(words)


@dataclass
class PythonStack:
    """What the python role installs, and how much of it the repository holds."""

    requirements: list[str]
    wheels: list[Path]
    missing: list[Missing]
    hint: str
    closure: dict[str, str] = field(default_factory=dict)  # distribution -> version
    digests: dict[str, str] = field(default_factory=dict)  # wheel file name -> sha256

    @property
    def offline(self) -> bool:
        return not self.missing

    def hashed_requirements(self) -> list[str]:
        """`name==version --hash=sha256:...` for every wheel of the closure: what
        `pip install --require-hashes -r` takes (each pinned, each with its digest)."""
        lines = []
        for wheel in self.wheels:
            name, version, _build, _tags = parse_wheel_filename(wheel.name)
            lines.append(f"{name}=={version} --hash=sha256:{self.digests[wheel.name]}")
        return lines


def python_stack(spec: EnvSpec, repo: Path, *, mirror: str | None = None,
                 verify: bool = True) -> PythonStack | None:
    """The frameworks' pins plus CANN's Python dependencies, resolved against the repository's
    wheels (its root, where fetch puts framework wheels, and `wheels/`); None without
    frameworks. With `verify`, each chosen wheel must still have the sha256 repo.json records
    (repository/wheel_digests.py): WheelDigestError names every one that does not."""

    requirements = requirements_for(spec)
    if not requirements:
        return None
    target = Target.of(spec, mirror=mirror)
    resolution = resolve(requirements, scan([repo, repo / WHEELS_DIR]), target)
    digests = wheel_digests.verify(repo, resolution.wheels) if verify else {}
    return PythonStack(requirements=requirements, wheels=resolution.wheels,
                       missing=resolution.missing,
                       hint=download_hint(resolution.missing, target, repo / WHEELS_DIR),
                       closure={name: str(wheel.version)
                                for name, wheel in sorted(resolution.chosen.items())},
                       digests={path.name: digest for path, digest in digests.items()})


def drift(closure: dict[str, str], installed: dict[str, str]) -> list[str]:
    """Distributions of `closure` that `installed` (name -> version, as a venv reports them)
    lacks or holds at another version: what pip would have to change."""
    have = {canonicalize_name(name): version for name, version in installed.items()}
    found = []
    for name, version in closure.items():
        current = have.get(canonicalize_name(name))
        if current is None:
            found.append(f"{name} {version} (not installed)")
        elif Version(current) != Version(version):
            found.append(f"{name} {version} (installed: {current})")
    return found


def bundle(wheels: list[Path], cache: Path) -> Path:
    """One tar of `wheels`, named for what is in it, made once in `cache`.

    Hosts get the closure as one file: Ansible copies one file in one round trip, where a
    loop over wheels pays a remote checksum per wheel on every run. The tar is reproducible
    (fixed times and owners), so an unchanged closure is the same file and copies as "ok".
    """
    stats = [(w.name, w.stat().st_size, w.stat().st_mtime_ns) for w in sorted(wheels)]
    key = hashlib.sha256(json.dumps(stats).encode()).hexdigest()[:16]
    # Real closures weigh gigabytes: keep the few most recently used, drop the rest.
    return cached_tar(cache / f"wheels-{key}.tar", [(w.name, w) for w in sorted(wheels)],
                      keep=KEEP_BUNDLES)


class DownloadError(Exception):
    """pip could not download the wheels (its own message is kept)."""


def download(requirements: list[str], target: Target, repo: Path, *,
             index_url: str | None = None) -> None:
    """`pip download` the requirements and their closure for `target` into `repo`/wheels.

    Runs on a machine with an index (PyPI or a mirror); the framework wheels fetch already
    verified in `repo` are offered to pip first and not copied again.
    """
    dest = repo / WHEELS_DIR
    dest.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "--disable-pip-version-check",
               "--no-input", "--only-binary=:all:", "--implementation", "cp",
               "--python-version", target.python, "--dest", str(dest), "--find-links", str(repo)]
    for platform in target.pip_platforms():
        command += ["--platform", platform]
    if index_url:
        command += ["--index-url", index_url]
    # A torch wheel fetch already verified is asked for by its own version; otherwise the
    # build torch_npu pins, from torch's CPU index (never the index's CUDA torch).
    held = {str(w.version) for w in scan([repo]) if w.name == "torch"}
    wanted = []
    for requirement in requirements:
        pinned = target.pinned(requirement)
        if pinned == requirement:
            wanted.append(requirement)
            continue
        fits = sorted(v for v in held
                      if Requirement(requirement).specifier.contains(v, prereleases=True))
        if fits:
            wanted.append(f"torch=={fits[-1]}")
        else:
            wanted.append(pinned)
            command += ["--extra-index-url", target.torch_index]
    done = subprocess.run([*command, *wanted], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        lines = [line for line in (done.stderr or done.stdout).splitlines() if line.strip()]
        raise DownloadError("pip download failed: " + "\n".join(lines[-8:]))
    for copy in dest.glob("*.whl"):
        if (repo / copy.name).is_file():
            copy.unlink()  # pip copied a wheel fetch had already verified in the repository
