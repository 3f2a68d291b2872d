"""The OS prerequisites of a host: what this run needs, what the host lacks, what to refuse.

The controller side makes the prerequisites role's variables (`OsPackagesVars`): the spec's OS
key's packages per purpose (ascend_env/data/os/), and the repository's OS folder, every file
checked against repo.json and shipped as one archive. The host side is `plan`, called through
a filter by the role: of what the run needs (the driver's build tools and the running kernel's
devel package when a driver is to be built, CANN's prerequisites when CANN is, the spec's
Python where the OS ships it), what the host lacks, and the refusals that come before
anything changes: a running kernel whose devel package the repository does not hold, a
package it lacks, a Python the OS does not ship and the host does not have.
"""

from __future__ import annotations

import hashlib
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ascend_env.ansible.variables import OsPackagesVars
from ascend_env.repository.installers import RepoError
from ascend_env.repository.os_packages import MODULE_NEEDS, recorded
from ascend_env.repository.repo_folder import kind_of, sha256_of
from ascend_env.repository.tar_bundle import cached_tar
from ascend_env.spec.envspec import EnvSpec
from ascend_env.spec.os_keys import KERNEL, load_os_keys

# The custom stat (per host) naming the OS packages a run installs, or would in check mode.
STAT = "ascend_os_install"
KEEP_BUNDLES = 3


def os_vars(spec: EnvSpec, repo: Path, cache: Path, *, venv: bool) -> OsPackagesVars | None:
    """The role's variables (`venv`: the run makes the frameworks' venv), None when the
    repository holds no OS packages (then nothing is installed and preflight checks the
    kernel headers as before)."""
    section = recorded(repo)
    if section is None:
        return None
    key = spec.os_key()
    if section.get("key") != key:
        raise RepoError(f"the repository's OS packages are for {section.get('key')}, the spec "
                        f"is for {key}: fetch again with this spec (--os-mirror), nothing was "
                        "changed on any host")
    entry = load_os_keys()[key]
    files = verified_files(repo, section)
    archive = bundle(repo / str(section["folder"]), files, cache)
    python = spec.python.version
    shipped = entry.pythons()
    return OsPackagesVars(
        key=key, name=entry.name, manager=entry.manager,
        driver_build=[p.name for p in entry.packages.driver_build],
        python_version=python, python_shipped=shipped, venv=venv,
        python=entry.needs("python", KERNEL, python) if python in shipped else [],
        cann_prerequisites=[p.name for p in entry.packages.cann_prerequisites],
        module=list(MODULE_NEEDS.get(entry.manager, ())),
        repository=sorted(str(name) for name in section.get("packages", {})),
        kernels=[str(k) for k in section.get("kernels", [])],
        bundle=str(archive), bundle_sha256=sha256_of(archive))


def verified_files(repo: Path, section: Mapping[str, Any]) -> list[Path]:
    """Every file of the OS folder, each matching its recorded sha256; a file added, changed
    or missing since fetch stops install before any host is touched."""
    folder = repo / str(section.get("folder", ""))
    recorded_files = section.get("files")
    if kind_of(folder) != "a directory" or not isinstance(recorded_files, dict):
        raise RepoError(f"{folder} is missing or repo.json does not describe it; run fetch "
                        "again, nothing was changed on any host")
    problems: list[str] = []
    present = {p.relative_to(repo).as_posix(): p for p in sorted(folder.rglob("*"))
               if not p.is_dir()}
    for name, path in present.items():
        entry = recorded_files.get(name)
        if not isinstance(entry, dict):
            problems.append(f"{path} is not recorded in repo.json")
        elif kind_of(path) != "a regular file":
            problems.append(f"{path} is {kind_of(path)}, not a regular file")
        elif sha256_of(path) != entry.get("sha256"):
            problems.append(f"{path} does not match its sha256 {entry.get('sha256')}")
    problems += [f"{repo / name} is missing" for name in recorded_files if name not in present]
    if problems:
        raise RepoError("the repository's OS packages changed since fetch, nothing was "
                        "changed on any host:\n  " + "\n  ".join(problems) +
                        f"\nRun fetch again: ascend-env fetch --repo {shlex.quote(str(repo))}")
    return list(present.values())


def bundle(folder: Path, files: list[Path], cache: Path) -> Path:
    """One reproducible tar of the OS folder (its packages and index), made once in `cache`:
    one file, one copy to each host."""
    digest = hashlib.sha256()
    for path in files:
        digest.update(f"{path.relative_to(folder)}\0{sha256_of(path)}\n".encode())
    return cached_tar(cache / f"os-packages-{digest.hexdigest()[:16]}.tar",
                      [(path.relative_to(folder).as_posix(), path) for path in files],
                      keep=KEEP_BUNDLES)


# -- on the host's behalf (the role's filters) ----------------------------------------------

def needed(packages: Mapping[str, Any], kernel: str | None, actions: Mapping[str, Any],
           python: bool) -> list[str]:
    """What this run needs on the host, by purpose: the driver's build tools and the running
    kernel's devel packages when a driver is to be built, CANN's prerequisites when CANN is,
    the spec's Python packages when the frameworks' venv is to be made, and what the
    package module itself needs."""
    names: list[str] = list(packages.get("module") or [])
    if actions.get("driver", "none") != "none":
        names += [str(n).replace(KERNEL, kernel or KERNEL)
                  for n in packages.get("driver_build", [])]
    if actions.get("toolkit", "none") != "none":
        names += [str(n) for n in packages.get("cann_prerequisites", [])]
    if python:
        names += [str(n) for n in packages.get("python", [])]
    return list(dict.fromkeys(names))


def installed(manager: str, names: list[str], query: Mapping[str, Any]) -> list[str] | None:
    """Which of `names` the host's package database holds, from the registered result of
    `rpm -q NAME...` (one line per name; `package NAME is not installed` for a missing one)
    or `dpkg-query -W -f '${Package} ${db:Status-Abbrev}\\n' NAME...` (`ii`: installed; a
    missing one is named on stderr); None when the answer is not one of those."""
    rc, out = query.get("rc"), str(query.get("stdout") or "")
    if manager == "apt":
        if rc not in (0, 1):
            return None
        found = {parts[0] for line in out.splitlines()
                 if len(parts := line.split()) >= 2 and parts[1].startswith("ii")}
        return [n for n in names if n in found]
    lines = [line for line in out.splitlines() if line.strip()]
    if not isinstance(rc, int) or rc < 0 or len(lines) < len(names):
        return None
    absent = {line.removeprefix("package ").removesuffix(" is not installed").strip()
              for line in lines if line.endswith(" is not installed")}
    return [n for n in names if n not in absent]


def plan(packages: Mapping[str, Any], kernel: str | None, wanted: list[str],
         query: Mapping[str, Any], python: bool | None) -> dict[str, Any]:
    """What to install on the host, and why the run stops before anything changes if it
    must: {"install": [...], "errors": [...]}. `python`: None when the run makes no venv,
    else whether the host's python<spec version> can make one."""
    name = packages.get("name", packages.get("key", "this OS"))
    manager = str(packages.get("manager", ""))
    errors: list[str] = []
    have = installed(manager, wanted, query) if wanted else []
    if have is None:
        said = str(query.get("stderr") or query.get("msg") or query.get("stdout") or "")
        tool = "dpkg-query -W" if manager == "apt" else "rpm -q"
        return {"install": [], "errors": [
            f"could not read the host's package database ({tool}): "
            f"{said.strip()[-300:] or 'no answer'}; is this host {name}?"]}
    missing = [n for n in wanted if n not in have]
    version = packages.get("python_version")
    shipped = [str(v) for v in packages.get("python_shipped", [])]
    if python is False and version and version not in shipped:
        errors.append(
            f"the spec's Python {version} is not on the host and {name} does not ship it "
            f"(its Python: {', '.join(shipped) or 'none as a package'}): install "
            f"python{version} on the host (with its venv module) yourself, or choose a spec "
            f"for Python {' or '.join(shipped) or 'the host has'}")
    kernels = [str(k) for k in packages.get("kernels", [])]
    templates = [str(n) for n in packages.get("driver_build", []) if KERNEL in str(n)]
    for_kernel = {t.replace(KERNEL, kernel or KERNEL) for t in templates}
    lacking_kernel = [n for n in missing if n in for_kernel]
    if lacking_kernel and not kernel:
        errors.append("the running kernel's release is unknown (the probe read none), so "
                      "its devel packages cannot be chosen")
    elif lacking_kernel and kernel not in kernels:
        errors.append(
            f"the running kernel {kernel} has no {', '.join(lacking_kernel)} in the "
            f"repository, which holds the devel packages of "
            f"{', '.join(kernels) or 'no kernel'}: fetch again with --kernel {kernel} (from "
            "a mirror that has it), or boot a kernel the repository has")
    repository = set(packages.get("repository", []))
    lacking = [n for n in missing if n not in for_kernel and n not in repository]
    if lacking:
        errors.append(f"the repository lacks {', '.join(lacking)} for {name}, which the host "
                      "does not have: fetch again with an --os-mirror that has them")
    return {"install": missing, "errors": errors}


def os_package_notes(events: list[dict[str, Any]], check: bool) -> list[str]:
    """One note per host that installs OS packages (or, with --check, would), from the custom
    stat the prerequisites role sets."""
    notes = []
    for event in events:
        if event.get("event") != "stats":
            continue
        for host, counts in sorted(event.get("hosts", {}).items()):
            stat = (counts.get("custom") or {}).get(STAT)
            if isinstance(stat, dict) and stat.get("install"):
                verb = "would install" if check else "installs"
                notes.append(f"{host}: {verb} the OS packages {', '.join(stat['install'])} "
                             f"through {stat.get('manager', 'its package manager')} from the "
                             "repository")
    return notes
