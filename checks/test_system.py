"""System: the operating system, recognised from os-release as an OS key of ascend-env's data."""

from __future__ import annotations

import pytest

from ascend_env.doctor.findings import attach_evidence, observe, warn
from ascend_env.facts.model import Facts
from ascend_env.spec.envspec import EnvSpec
from ascend_env.spec.os_keys import ADD_OS, match_os

pytestmark = [pytest.mark.category("system"), pytest.mark.level(1)]

WHY = ("install picks the package manager and the OS packages the driver build and CANN "
       "need (kernel headers, gcc, dkms, Python) by this key; Ansible's own guess is wrong "
       "for UOS and unknown for CTyunOS")


def test_os(facts: Facts, spec: EnvSpec | None) -> None:
    """system.os: the OS is one ascend-env knows: its key, package manager and packages."""
    release = facts.os.release if facts.os is not None else {}
    if not release.get("ID"):
        attach_evidence({"os_key": None, "package_manager": None, "nearest": None})
        warn(message="no os-release with an ID: the OS cannot be recognised",
             observed="no /etc/os-release or /usr/lib/os-release ID" if not release
             else f"os-release without ID: {facts.os.pretty_name if facts.os else ''}",
             expected="an os-release(5) file naming the distribution (ID, VERSION_ID)",
             why=WHY, manual="cat /etc/os-release /usr/lib/os-release")
    found = match_os(release, facts.arch)
    entry = found.entry
    attach_evidence({"os_key": found.key, "package_manager": entry.manager if entry else None,
                     "family": entry.family if entry else None, "nearest": found.nearest,
                     "origin": entry.origin if entry else None,
                     "pretty_name": release.get("PRETTY_NAME"), "arch": facts.arch})
    shown = release.get("PRETTY_NAME") or f"{release.get('ID')} {release.get('VERSION_ID', '')}"
    if entry is None:
        warn(message=f"{shown} ({facts.arch or 'unknown arch'}) is not an OS ascend-env knows"
                     + (f"; the nearest is {found.nearest}" if found.nearest else ""),
             observed=f"{shown}, {facts.arch or 'arch unknown'}",
             expected="an OS key of ascend_env/data/os/ or of the site's os.d/",
             why=f"{found.reason} Without a key, {WHY}",
             manual=ADD_OS)
    if spec is not None and spec.os_key() != found.key:
        warn(message=f"the host runs {found.key}, spec {spec.name} names {spec.os_key()}",
             observed=f"{found.key} ({entry.manager})",
             expected=f"{spec.os_key()} (os.family, os.version, hardware.arch of the spec)",
             why="install fetches and installs the OS packages of the spec's key; another "
                 "OS's packages do not fit this host",
             manual=f"set os.family: {entry.distribution} and os.version: {entry.version} "
                    "in the spec, or install the OS the spec names")
    observe(f"{found.key} ({entry.manager})", spec.os_key() if spec is not None else None)
