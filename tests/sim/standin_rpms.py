"""Stand-in RPMs of a simulated openEuler host, built with rpmbuild, and their mirror.

Not openEuler's packages: each carries the real name, a version of the real shape and the
dependencies that make a resolver work (gcc needs cpp, binutils and glibc-devel, glibc-devel
needs the baseline's glibc at its exact version, ...), but only a marker file as content: the
host's userland stays Debian's. Two are more than markers: `openEuler-release` owns the
os-release files and provides `system-release(releasever)` (what dnf reads its $releasever
from), and `kernel-devel` owns the running kernel's build tree and `/lib/modules/<kernel>/build`
as openEuler's kernel.spec lays them out (src-openeuler/kernel, `%files devel`; it provides
`kernel-devel-uname-r = %{KernelVer}`, KernelVer being version-release.arch).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath

from tests.sim.layout import SimError, cache_dir, secure_mkdir

MIRROR_VERSION = 1
MARKERS = "/usr/share/ascend-sim/stand-in"


@dataclass(frozen=True)
class StandIn:
    """One stand-in package: name, EVR, arch, dependencies and what it lays down."""

    name: str
    version: str
    release: str
    arch: str = "noarch"
    epoch: int | None = None
    requires: tuple[str, ...] = ()
    provides: tuple[str, ...] = ()
    files: dict[str, str] = field(default_factory=dict)  # path -> content
    links: dict[str, str] = field(default_factory=dict)  # path -> target

    @property
    def nevra(self) -> str:
        return f"{self.name}-{self.version}-{self.release}.{self.arch}"


def _spec(p: StandIn) -> str:
    marker = f"{MARKERS}/{p.name}"
    files = {marker: f"stand-in for {p.name} (tests/sim; not the distribution's package)\n",
             **p.files}
    lines = [f"Name: {p.name}", f"Version: {p.version}", f"Release: {p.release}",
             "Summary: stand-in package of the simulated hosts", "License: MulanPSL-2.0",
             "AutoReqProv: no"]
    if p.epoch is not None:
        lines.append(f"Epoch: {p.epoch}")
    if p.arch == "noarch":
        lines.append("BuildArch: noarch")
    lines += [f"Requires: {r}" for r in p.requires]
    lines += [f"Provides: {r}" for r in p.provides]
    lines += ["%description", f"Stand-in for {p.name}, built by tests/sim.", "%install"]
    for path, text in files.items():
        lines.append(f"mkdir -p %{{buildroot}}{PurePosixPath(path).parent}")
        # The content travels base64-encoded: no quoting of what it says.
        encoded = base64.b64encode(text.encode()).decode()
        lines.append(f"echo {encoded} | base64 -d > %{{buildroot}}{path}")
    for path, target in p.links.items():
        lines.append(f"mkdir -p %{{buildroot}}{PurePosixPath(path).parent}")
        lines.append(f"ln -s {target} %{{buildroot}}{path}")
    lines += ["%files", *files, *p.links, ""]
    return "\n".join(lines)


def build(packages: list[StandIn], dest: Path) -> None:
    """rpmbuild every stand-in into `dest` (flat), then createrepo_c: a dnf repository."""
    for tool in ("rpmbuild", "createrepo_c"):
        if shutil.which(tool) is None:
            raise SimError(f"{tool} is not installed: apt-get install -y rpm createrepo-c")
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest.parent) as tmp:
        top = Path(tmp)
        for p in packages:
            spec = top / f"{p.name}.spec"
            spec.write_text(_spec(p))
            args = ["rpmbuild", "--quiet", "--define", f"_topdir {top}", "-bb", str(spec)]
            if p.arch != "noarch":
                args[1:1] = ["--target", p.arch]
            res = subprocess.run(args, capture_output=True, text=True, check=False)
            if res.returncode != 0:
                raise SimError(f"rpmbuild failed for {p.name}: {res.stderr.strip()[-800:]}")
        for rpm in sorted((top / "RPMS").rglob("*.rpm")):
            shutil.copy2(rpm, dest / rpm.name)
    res = subprocess.run(["createrepo_c", "--quiet", str(dest)], capture_output=True,
                         text=True, check=False)
    if res.returncode != 0:
        raise SimError(f"createrepo_c failed on {dest}: {res.stderr.strip()}")


def cached_mirror(label: str, packages: list[StandIn]) -> Path:
    """The stand-in mirror of these packages in the sim cache, built once per definition."""
    blob = json.dumps([MIRROR_VERSION, [asdict(p) for p in packages]], sort_keys=True)
    out = cache_dir() / f"standin-{label}-{hashlib.sha256(blob.encode()).hexdigest()[:16]}"
    if (out / "repodata" / "repomd.xml").is_file():
        return out
    tmp = secure_mkdir(cache_dir()) / f"tmp-standin-{label}-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        build(packages, tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return out
