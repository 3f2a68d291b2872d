"""Read the package's profiles (ascend_env/data/profiles) for `--profile` and spec.yaml."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.sim.layout import SimError

PROFILES = Path(__file__).resolve().parents[2] / "ascend_env" / "data" / "profiles"


@dataclass(frozen=True)
class SimProfile:
    chip: str
    devices: int
    cann: str
    hdk: str
    firmware: str | None
    document: dict[str, Any]


def load(name: str) -> SimProfile:
    path = PROFILES / f"{name}.yaml"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in PROFILES.glob("*.yaml"))) or "none"
        raise SimError(f"no profile {name!r} in {PROFILES} (known: {known})")
    doc: dict[str, Any] = yaml.safe_load(path.read_text())
    try:
        return SimProfile(
            chip=str(doc["hardware"]["chip"]),
            devices=int(doc["hardware"].get("devices", 8)),
            cann=str(doc["cann"]["version"]),
            hdk=str(doc["driver"]["version"]),
            firmware=(doc.get("firmware") or {}).get("version"),
            document=doc,
        )
    except (KeyError, TypeError) as exc:
        raise SimError(f"{path}: missing key {exc} (need hardware.chip, cann.version, "
                       "driver.version)") from None


def sim_spec(profile: SimProfile, arch: str | None = None, os_name: str | None = None
             ) -> dict[str, Any]:
    """The profile adjusted to the simulated hosts: their arch and their OS (the harness's
    Debian release, or `os_name` such as openeuler-22.03: `up --os`)."""
    doc = dict(profile.document)
    doc["hardware"] = dict(doc["hardware"], arch=arch or os.uname().machine)
    osrel = Path("/etc/debian_version")
    major = osrel.read_text().strip().split(".")[0] if osrel.exists() else "12"
    family, _, version = (os_name or f"debian-{major}").partition("-")
    doc["os"] = {"family": family, "version": version}
    doc["name"] = f"{doc.get('name', 'sim')}-sim"
    return doc


def write_spec(profile: SimProfile, dest: Path, arch: str | None = None,
               os_name: str | None = None) -> Path:
    out = dest / "spec.yaml"
    out.write_text("# The profile adjusted to the simulated hosts (python -m tests.sim repo).\n"
                   + yaml.safe_dump(sim_spec(profile, arch, os_name), sort_keys=False))
    return out
