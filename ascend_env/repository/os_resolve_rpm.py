"""The OS packages of an RPM OS key, resolved and downloaded by dnf itself.

dnf runs on the controller against an empty install root and the operator's mirrors only
(`--repofrompath`, the machine's own repositories left out). What a host needs beyond its
minimal install is the closure of (baseline + wanted) less the closure of the baseline, both
as dnf resolves them (`dnf download --resolve --alldeps --url`); dnf then downloads exactly
those, checking each against the mirror's metadata. `createrepo_c` makes the folder a dnf
repository of its own.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path, PurePosixPath

from ascend_env.repository.os_tools import OsToolError, file_url, run_tool

# Debian's dnf needs its plugins (dnf-plugins-core) for `download`.
TOOLS = {"dnf": "dnf (and dnf-plugins-core for `dnf download`)", "createrepo_c": "createrepo-c"}
QF = "%{name} %{version} %{release} %{arch}"


class Dnf:
    """dnf on the controller, aimed at the operator's mirrors and an empty install root."""

    def __init__(self, work: Path, mirrors: list[str], releasever: str | None, arch: str
                 ) -> None:
        for tool, package in TOOLS.items():
            if shutil.which(tool) is None:
                raise OsToolError(f"fetching RPM packages needs {tool} on this machine: "
                                  f"install {package} (apt-get install dnf dnf-plugins-core "
                                  "createrepo-c on Debian/Ubuntu)")
        (work / "root").mkdir(parents=True, exist_ok=True)
        (work / "repos.d").mkdir(exist_ok=True)
        self.args = ["dnf", "-q", "-y", f"--installroot={work / 'root'}",
                     f"--setopt=reposdir={work / 'repos.d'}",
                     f"--setopt=cachedir={work / 'cache'}", "--setopt=install_weak_deps=0",
                     "--nogpgcheck",
                     f"--releasever={releasever or 'unknown'}"]
        if arch != os.uname().machine:
            self.args.append(f"--forcearch={arch}")
        for number, mirror in enumerate(mirrors):
            self.args.append(f"--repofrompath=ascend-os-{number},{file_url(mirror)}")
        # Only these: the machine's own repositories (and dnf-plugins-core's `local`) stay out.
        self.args += ["--disablerepo=*", "--enablerepo=ascend-os-*", "--disableplugin=local"]
        self.arch = arch

    def available(self, names: list[str]) -> set[str]:
        """Which of `names` (names or NEVRAs) the mirrors have."""
        if not names:
            return set()
        out = run_tool([*self.args, "repoquery", f"--qf={QF}", *names], "dnf repoquery")
        found: set[str] = set()
        for line in out.splitlines():
            parts = line.split()
            if len(parts) != 4:
                continue
            name, version, release, arch = parts
            found |= {name, f"{name}-{version}", f"{name}-{version}-{release}",
                      f"{name}-{version}-{release}.{arch}"}
        return {n for n in names if n in found}

    def closure(self, names: list[str]) -> dict[str, str]:
        """File name -> URL of every package `names` need from an empty root."""
        if not names:
            return {}
        out = run_tool([*self.args, "download", "--resolve", "--alldeps", "--url",
                        f"--arch={self.arch}", "--arch=noarch", *names], "dnf download --url")
        urls = [line.strip() for line in out.splitlines() if line.strip().endswith(".rpm")]
        return {PurePosixPath(url).name: url for url in urls}

    def download(self, files: list[str], dest: Path) -> None:
        """Download these package files (as `closure` named them) into `dest`, verified."""
        if files:
            run_tool([*self.args, "download", f"--destdir={dest}",
                      *[name.removesuffix(".rpm") for name in files]], "dnf download")


def index(folder: Path) -> None:
    """The folder as a dnf repository: repodata/ by createrepo_c."""
    shutil.rmtree(folder / "repodata", ignore_errors=True)
    run_tool(["createrepo_c", "--quiet", "--simple-md-filenames", str(folder)], "createrepo_c")


def package_name(filename: str) -> str:
    """The name in `name-version-release.arch.rpm`."""
    return filename.removesuffix(".rpm").rsplit(".", 1)[0].rsplit("-", 2)[0]

