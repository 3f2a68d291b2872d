"""`fetch`'s OS half: the OS packages the spec's OS key needs, as a package repository.

The packages are those ascend_env/data/os/ names for the OS key (driver build, the spec's
Python where the OS ships it, CANN's prerequisites; `{kernel}` put in for each `--kernel`),
resolved by the OS's own resolver against the packages a minimal install already has (the
data's baseline), from the mirrors the operator names (`--os-mirror`) or the copy of one in
`--from-dir DIR/os/<key>/`. They land in `DEST/os/<key>/` with the index the OS's package
manager reads (createrepo_c for dnf, a flat Packages/Release for apt), replaced as a whole,
and repo.json's `os_packages` section records every file's sha256 like every other file of
the repository: install ships them only while they still match.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ascend_env.repository import os_resolve_deb, os_resolve_rpm
from ascend_env.repository.fetch import FetchResult
from ascend_env.repository.os_result import OsPackages
from ascend_env.repository.os_tools import OsToolError
from ascend_env.repository.repo_folder import (
    MANIFEST,
    RepoFolderError,
    ensure_dest,
    kind_of,
    partial_dir,
    read_manifest,
    sha256_of,
    staging_file,
)
from ascend_env.spec.envspec import EnvSpec
from ascend_env.spec.os_keys import KERNEL, PURPOSES, OsEntry, load_os_keys

OS_DIR = "os"
SECTION = "os_packages"
# What Ansible's package module needs on the host besides the OS data's packages: the apt
# module runs on python3-apt, which a minimal Debian lacks
# (https://docs.ansible.com/ansible/latest/collections/ansible/builtin/apt_module.html,
# "Requirements"); dnf's python3-dnf is part of every dnf host.
MODULE_NEEDS: dict[str, tuple[str, ...]] = {"apt": ("python3-apt",)}


@dataclass(frozen=True)
class OsSource:
    """Where the OS packages come from, and for which running kernels."""

    mirrors: tuple[str, ...] = ()
    kernels: tuple[str, ...] = ()
    from_dir: Path | None = None


class _Resolver(Protocol):
    def available(self, names: list[str]) -> set[str]: ...

    def closure(self, names: list[str]) -> dict[str, str]: ...

    def download(self, files: list[str], dest: Path) -> None: ...


def wanted_packages(entry: OsEntry, kernels: list[str], python: str | None
                    ) -> tuple[list[str], dict[str, list[str]]]:
    """The names to fetch, and for each kernel its own ({kernel} packages); the Python
    packages only of the spec's Python, and only where the OS ships it."""
    names: list[str] = list(MODULE_NEEDS.get(entry.manager, ()))
    per_kernel: dict[str, list[str]] = {k: [] for k in kernels}
    for purpose in PURPOSES:
        for package in getattr(entry.packages, purpose):
            if purpose == "python" and package.python not in (None, python):
                continue
            if KERNEL in package.name:
                for kernel in kernels:
                    per_kernel[kernel].append(package.resolved(kernel))
            elif package.name not in names:
                names.append(package.name)
    return names, per_kernel


def source_mirrors(spec_key: str, source: OsSource) -> list[str]:
    """`--os-mirror` values, else the copy of a mirror in `--from-dir DIR/os/<key>/`."""
    if source.mirrors:
        return list(source.mirrors)
    if source.from_dir is not None and (source.from_dir / OS_DIR / spec_key).is_dir():
        return [str(source.from_dir / OS_DIR / spec_key)]
    return []


def fetch_os_packages(spec: EnvSpec, dest: Path, source: OsSource) -> OsPackages | None:
    """Gather the OS packages into DEST/os/<key>/ and record them; None when no mirror is
    named (the repository then holds no OS packages, as before)."""
    key = spec.os_key()
    mirrors = source_mirrors(key, source)
    if not mirrors:
        return None
    entry = load_os_keys()[key]
    kernels = list(dict.fromkeys(source.kernels))
    names, per_kernel = wanted_packages(entry, kernels, spec.python.version)
    ensure_dest(dest)
    with tempfile.TemporaryDirectory(dir=partial_dir(dest), prefix="os-") as tmp:
        work = Path(tmp)
        resolver, index, name_of = _tools(entry, work, mirrors)
        all_wanted = names + [n for k in kernels for n in per_kernel[k]]
        found = resolver.available(all_wanted)
        baseline = sorted(resolver.available(list(entry.baseline.packages)))
        missing = [n for n in all_wanted if n not in found]
        have = [n for n in all_wanted if n in found]
        base_files = resolver.closure(baseline)
        needed = sorted(set(resolver.closure(baseline + have)) - set(base_files))
        folder = work / "new"
        folder.mkdir()
        resolver.download(needed, folder)
        got = sorted(p.name for p in folder.iterdir() if p.is_file())
        if got != needed:
            raise OsToolError(f"the package tool downloaded {', '.join(got) or 'nothing'} but "
                              f"the closure is {', '.join(needed)}")
        index(folder)
        target = _replace(dest, key, folder, work)
    ready = [k for k in kernels if all(n in found for n in per_kernel[k])]
    result = OsPackages(
        key=key, manager=entry.manager, folder=f"{OS_DIR}/{key}", wanted=all_wanted,
        missing=missing, kernels=ready, files=needed,
        complete=not missing and (bool(kernels) or not _kernel_bound(entry)),
        message=_message(entry, missing, kernels))
    _record(dest, target, result, {name_of(f): f for f in needed})
    return result


def _tools(entry: OsEntry, work: Path, mirrors: list[str]
           ) -> tuple[_Resolver, Any, Any]:
    if entry.family == "rpm":
        return (os_resolve_rpm.Dnf(work, mirrors, entry.releasever, entry.arch),
                os_resolve_rpm.index, os_resolve_rpm.package_name)
    return (os_resolve_deb.Apt(work, mirrors, entry.releasever, entry.arch),
            os_resolve_deb.index, os_resolve_deb.package_name)


def _kernel_bound(entry: OsEntry) -> bool:
    return any(KERNEL in p.name for purpose in PURPOSES
               for p in getattr(entry.packages, purpose))


def _message(entry: OsEntry, missing: list[str], kernels: list[str]) -> str:
    lines = []
    if missing:
        lines.append(f"no mirror has {', '.join(missing)}: hosts that lack them are refused "
                     "by install")
    if not kernels and _kernel_bound(entry):
        lines.append("no --kernel named: the repository holds no kernel devel packages; name "
                     "each running kernel of the hosts (`uname -r`) with --kernel")
    return "; ".join(lines)


def _replace(dest: Path, key: str, folder: Path, work: Path) -> Path:
    """The new folder in place of DEST/os/<key> in one rename (the old one moved aside)."""
    parent = dest / OS_DIR
    for place, what in ((parent, "a directory"), (parent / key, "a directory")):
        found = kind_of(place)
        if found not in (None, what):
            raise RepoFolderError(f"{place} is {found}, not {what}; remove it and rerun fetch")
    parent.mkdir(exist_ok=True)
    target = parent / key
    if target.exists():
        target.rename(work / "old")
    folder.rename(target)
    return target


def _record(dest: Path, target: Path, result: OsPackages, names: dict[str, str]) -> None:
    files = {path.relative_to(dest).as_posix(): {"sha256": sha256_of(path),
                                                 "size": path.stat().st_size}
             for path in sorted(target.rglob("*")) if path.is_file()}
    document = read_manifest(dest)
    document[SECTION] = {"key": result.key, "manager": result.manager,
                         "folder": result.folder, "kernels": result.kernels,
                         "packages": names, "files": files}
    staging = staging_file(dest, MANIFEST)
    staging.write_text(json.dumps(document, indent=2, sort_keys=True), encoding="utf-8")
    staging.replace(dest / MANIFEST)


def recorded(dest: Path) -> dict[str, Any] | None:
    """repo.json's `os_packages` section, None when the repository holds no OS packages."""
    section = read_manifest(dest).get(SECTION)
    return section if isinstance(section, dict) else None



def fetch_os(result: FetchResult, spec: EnvSpec, source: OsSource) -> FetchResult:
    """The fetch result with the OS packages' share: incomplete when they are (a tool that is
    missing or fails says why there)."""
    try:
        found = fetch_os_packages(spec, Path(result.dest), source)
    except OsToolError as exc:
        key = spec.os_key()
        found = OsPackages(key=key, manager=load_os_keys()[key].manager,
                           folder=f"{OS_DIR}/{key}", wanted=[], missing=[], kernels=[],
                           files=[], complete=False, message=str(exc))
    if found is None:
        return result
    return result.model_copy(update={"os_packages": found,
                                     "complete": result.complete and found.complete})
