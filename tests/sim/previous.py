"""`repo --with-previous`: the vendor files of a profile's release and of the release before it,
with spec.yaml and spec-previous.yaml, so that an upgrade and its rollback can be played out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from ascend_env.core.versions import AscendVersion
from ascend_env.spec.matrix import load_matrix
from tests.sim import packages, profiles
from tests.sim.layout import SimError


def previous_release(cann: str, hdk: str) -> tuple[str, str]:
    """The newest CANN release before `cann` whose HDK pairing the matrix states and whose HDK
    is older than `hdk`: what a fleet on the profile's release was most likely upgraded from."""
    matrix = load_matrix()
    identity = matrix.hdk()
    now_cann, now_hdk = AscendVersion.parse(cann), AscendVersion.parse(hdk)
    older = [row for row in matrix.cann if row.hdk is not None and row.cann < now_cann
             and identity.release_of(row.hdk) < identity.release_of(now_hdk)]
    if not older:
        raise SimError(f"the matrix knows no paired release older than CANN {cann} / HDK {hdk}")
    row = max(older, key=lambda r: r.cann)
    assert row.hdk is not None
    return row.cann.raw, row.hdk.raw


def previous_torch(cann: str, python: str) -> dict[str, str] | None:
    """The newest torch_npu the matrix pairs with `cann` that has wheels for `python`."""
    rows = [row for row in load_matrix().torch_rows(AscendVersion.parse(cann))
            if python in (row.wheels or row.python)]
    if not rows:
        return None
    row = max(rows, key=lambda r: tuple(int(p) for p in r.torch.split(".")[:3]))
    return {"version": row.torch, "torch_npu": row.torch_npu}


def previous_spec(profile: profiles.SimProfile, cann: str, hdk: str,
                  arch: str | None) -> dict[str, Any]:
    """The profile on the simulated hosts, at the older release: its driver and CANN, no
    firmware pin (the HDK's own), the torch_npu paired with that CANN and no MindSpore (the
    profile's pins need its own CANN)."""
    doc = profiles.sim_spec(profile, arch)
    doc["name"] = f"{doc['name']}-previous"
    doc["description"] = f"the release before the {profile.chip} profile's: CANN {cann}, HDK {hdk}"
    doc["driver"] = {"version": hdk}
    doc.pop("firmware", None)
    doc["cann"] = dict(doc["cann"], version=cann)
    doc["frameworks"] = {"torch": previous_torch(cann, str(doc["python"]["version"])),
                         "mindspore": None}
    return doc


def _merge(into: dict[str, Any], more: dict[str, Any]) -> dict[str, Any]:
    for component, versions in more["components"].items():
        into["components"].setdefault(component, {}).update(versions)
    return into


def write_with_previous(name: str, dest: Path, arch: str) -> list[packages.FakeFile]:
    """Both releases' fake vendor files in `dest`, one catalogue-overlay.json naming them all,
    spec.yaml (the profile) and spec-previous.yaml (the release before it)."""
    profile = profiles.load(name)
    cann, hdk = previous_release(profile.cann, profile.hdk)
    overlay_file = dest / "catalogue-overlay.json"
    files = packages.build_repo(dest, chip=profile.chip, cann=cann, hdk=hdk, arch=arch)
    older = json.loads(overlay_file.read_text())
    files += packages.build_repo(dest, chip=profile.chip, cann=profile.cann, hdk=profile.hdk,
                                 arch=arch, firmware=profile.firmware)
    merged = _merge(json.loads(overlay_file.read_text()), older)
    overlay_file.write_text(json.dumps(merged, indent=1))
    profiles.write_spec(profile, dest, arch)
    (dest / "spec-previous.yaml").write_text(
        f"# The release before the profile's (CANN {cann}, HDK {hdk}), on the simulated "
        "hosts (python -m tests.sim repo --with-previous).\n"
        + yaml.safe_dump(previous_spec(profile, cann, hdk, arch), sort_keys=False))
    return files
