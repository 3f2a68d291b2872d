"""The OS packages of a DEB OS key, resolved and downloaded by apt itself.

apt-get runs on the controller with a configuration of its own: the operator's mirrors as its
only sources, an empty dpkg status (a clean system), its own lists and cache; the machine's
apt.conf.d (proxies) and trusted keys still apply. What a host needs beyond its minimal install
is the closure of (baseline + wanted) less the closure of the baseline, both as apt resolves
them (`apt-get install --print-uris`, recommends left out as the host's install leaves them);
`apt-get download` then fetches exactly those, checking each against the signed indexes.
`apt-ftparchive` makes the folder a flat apt repository (Packages, Release).
"""

from __future__ import annotations

import re
import shutil
import urllib.parse
from pathlib import Path

from ascend_env.repository.os_tools import OsToolError, file_url, run_tool

DEB_ARCH = {"x86_64": "amd64", "aarch64": "arm64"}
_URI_LINE = re.compile(r"^'(?P<uri>[^']+)' (?P<file>\S+\.deb) \d+ \S+")


def sources_line(mirror: str, suite: str | None) -> str:
    """One sources.list line from `--os-mirror`: `URL [SUITE [COMPONENT...]]`, or a folder.

    A folder holding Packages at its top is a flat repository (`./`); a folder copied from a
    mirror is read like that mirror. Folders are the operator's own copy: trusted as such."""
    words = mirror.split()
    if not words:
        raise OsToolError("--os-mirror is empty")
    where, rest = words[0], words[1:]
    url = file_url(where)
    local = url.startswith("file://")
    folder = Path(urllib.parse.unquote(url.removeprefix("file://"))) if local else None
    options = "[trusted=yes] " if local else ""
    if folder is not None and not rest and (folder / "Packages").is_file():
        return f"deb {options}{url} ./"
    suite_here = rest[0] if rest else suite
    if not suite_here:
        raise OsToolError(f"--os-mirror {mirror!r}: name the suite after the URL (e.g. "
                          "'http://deb.debian.org/debian bookworm main')")
    components = rest[1:] or ["main"]
    return f"deb {options}{url} {suite_here} {' '.join(components)}"


class Apt:
    """apt-get on the controller, aimed at the operator's mirrors and a clean status."""

    def __init__(self, work: Path, mirrors: list[str], suite: str | None, arch: str) -> None:
        if shutil.which("apt-get") is None:
            raise OsToolError("fetching DEB packages needs apt-get on this machine (a "
                              "Debian or Ubuntu controller)")
        for sub in ("lists/partial", "archives/partial"):
            (work / sub).mkdir(parents=True, exist_ok=True)
        (work / "status").write_text("")
        (work / "sources.list").write_text(
            "".join(sources_line(m, suite) + "\n" for m in mirrors))
        deb_arch = DEB_ARCH[arch]
        self.options = [
            "-o", f"Dir::State::Lists={work / 'lists'}",
            "-o", f"Dir::State::status={work / 'status'}",
            "-o", f"Dir::Cache={work}", "-o", f"Dir::Cache::archives={work / 'archives'}",
            "-o", f"Dir::Etc::sourcelist={work / 'sources.list'}",
            "-o", "Dir::Etc::sourceparts=-", "-o", "Dir::Etc::preferencesparts=-",
            "-o", f"APT::Architecture={deb_arch}", "-o", f"APT::Architectures={deb_arch}",
            "-o", "APT::Install-Recommends=false", "-o", "APT::Install-Suggests=false"]
        run_tool(["apt-get", *self.options, "-qq", "update"], "apt-get update")

    def available(self, names: list[str]) -> set[str]:
        """Which of `names` the mirrors have a candidate of."""
        if not names:
            return set()
        out = run_tool(["apt-cache", *self.options, "policy", *names], "apt-cache policy")
        found: set[str] = set()
        current = None
        for line in out.splitlines():
            if line and not line[0].isspace() and line.endswith(":"):
                current = line[:-1]
            elif (current and line.strip().startswith("Candidate:")
                  and line.split(":", 1)[1].strip() != "(none)"):
                found.add(current)
        return {n for n in names if n in found}

    def closure(self, names: list[str]) -> dict[str, str]:
        """File name -> URI of every package `names` need on a clean system."""
        if not names:
            return {}
        out = run_tool(["apt-get", *self.options, "-qq", "-y", "--print-uris", "install",
                        *names], "apt-get install --print-uris")
        found: dict[str, str] = {}
        for line in out.splitlines():
            match = _URI_LINE.match(line.strip())
            if match:
                found[match["file"]] = match["uri"]
        return found

    def download(self, files: list[str], dest: Path) -> None:
        """Download these package files (as `closure` named them) into `dest`, verified."""
        wanted = [_name_version(f) for f in files]
        if wanted:
            run_tool(["apt-get", *self.options, "-qq", "download", *wanted], "apt-get download",
                     cwd=dest)


def _name_version(filename: str) -> str:
    """`name=version` from `name_version_arch.deb` (an epoch is written %3a there)."""
    name, version, _arch = filename.removesuffix(".deb").split("_")
    return f"{name}={urllib.parse.unquote(version)}"


def index(folder: Path) -> None:
    """The folder as a flat apt repository: Packages and Release by apt-ftparchive."""
    if shutil.which("apt-ftparchive") is None:
        raise OsToolError("making the apt repository needs apt-ftparchive: apt-get install "
                          "apt-utils")
    for stale in ("Packages", "Release"):
        (folder / stale).unlink(missing_ok=True)
    packages = run_tool(["apt-ftparchive", "packages", "."], "apt-ftparchive packages",
                        cwd=folder)
    (folder / "Packages").write_text(packages)
    release = run_tool(["apt-ftparchive", "release", "."], "apt-ftparchive release", cwd=folder)
    (folder / "Release").write_text(release)


def package_name(filename: str) -> str:
    """The name in `name_version_arch.deb`."""
    return filename.split("_", 1)[0]
