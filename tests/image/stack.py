"""The image tests' stack: the fake vendor repo (tests/sim) plus small local framework wheels.

Real torch and torch_npu wheels are gigabytes and not available offline, so the framework
layer installs two tiny wheels named `torch` and `torch_npu` built here (pure Python, real
wheel format, real pip). What that layer proves is honest: pinned versions land in the venv
from the verified repository, and a change of the torch_npu pin rebuilds only that layer.
"""

from __future__ import annotations

import base64
import hashlib
import json
import platform
import zipfile
from pathlib import Path

from ascend_env.catalogue import Catalogue, load_catalogue, load_overlay
from ascend_env.fetch import Source, fetch
from ascend_env.plan import Plan, resolve
from ascend_env.spec import EnvSpec, build_spec

ARCH = platform.machine()
CANN = "9.0.0"
HDK = "25.5.0"
TORCH = "2.10.0"
# 9.0.0 pairs torch 2.10.0 with two torch_npu builds (matrix): a torch_npu-only change.
TORCH_NPU = "2.10.0.post2"
TORCH_NPU_ALT = "2.10.0"
PYTHON = "3.11"  # the simulated hosts' Debian 12 python3


def spec_for(torch_npu: str | None = TORCH_NPU, *, name: str = "img") -> EnvSpec:
    frameworks = {"torch": {"version": TORCH, "torch_npu": torch_npu} if torch_npu else None,
                  "mindspore": None}
    return build_spec({"extends": "910b", "name": name,
                       "os": {"family": "debian", "version": "12"},
                       "hardware": {"arch": ARCH, "devices": 8},
                       "driver": {"version": HDK},
                       "cann": {"version": CANN, "packages": ["toolkit", "ops", "nnal"]},
                       "python": {"version": PYTHON}, "frameworks": frameworks}, "test")


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build_wheel(dest: Path, distribution: str, version: str, module: str, body: str) -> Path:
    """A minimal pure-Python wheel (PEP 427) with one package."""
    dist_info = f"{distribution}-{version}.dist-info"
    files = {
        f"{module}/__init__.py": body.encode(),
        f"{dist_info}/METADATA": (f"Metadata-Version: 2.1\nName: {distribution}\n"
                                  f"Version: {version}\nSummary: ascend-env test stand-in\n"
                                  ).encode(),
        f"{dist_info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: ascend-env-tests\n"
                              b"Root-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = [_record_line(name, data) for name, data in files.items()]
    record.append(f"{dist_info}/RECORD,,")
    files[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()
    path = dest / f"{distribution}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            # A fixed date: the same wheel twice is the same bytes (and the same digest).
            archive.writestr(zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0)), data)
    return path


def framework_wheels(dest: Path) -> dict[str, object]:
    """Stand-in torch/torch_npu wheels and their catalogue overlay entries."""
    dest.mkdir(parents=True, exist_ok=True)
    made = [build_wheel(dest, "torch", TORCH, "torch", f'__version__ = "{TORCH}"\n')]
    for version in (TORCH_NPU, TORCH_NPU_ALT):
        made.append(build_wheel(dest, "torch_npu", version, "torch_npu",
                                f'__version__ = "{version}"\n'))
    tag = "cp" + PYTHON.replace(".", "")
    components: dict[str, object] = {}
    for wheel in made:
        distribution, version = wheel.name.split("-")[:2]
        entry = {"filename": wheel.name, "kind": "wheel", "arch": ARCH, "python_tag": tag,
                 "distribution": distribution, "file_version": version,
                 "sha256": hashlib.sha256(wheel.read_bytes()).hexdigest()}
        component = components.setdefault(distribution, {})
        assert isinstance(component, dict)
        component.setdefault(version, {"files": []})["files"].append(entry)
    return {"schema": "test", "source": "ascend-env image tests", "components": components}


def catalogue_for(vendor: Path) -> Catalogue:
    """The shipped catalogue plus the fake vendor files and the stand-in wheels."""
    overlay = vendor / "wheels-overlay.json"
    overlay.write_text(json.dumps(framework_wheels(vendor)))
    # The real torch/torch_npu wheels of the shipped catalogue would be found first.
    shipped = load_catalogue()
    without_real = Catalogue(source=shipped.source, files={
        name: entry for name, entry in shipped.files.items()
        if entry.distribution not in ("torch", "torch_npu")})
    return without_real.merged(load_overlay(vendor / "catalogue-overlay.json")).merged(
        load_overlay(overlay))


def make_repo(root: Path) -> tuple[Path, Path, Catalogue]:
    """A verified repository (fetch) with both torch_npu builds; returns repo, vendor, cat."""
    from tests.sim import packages  # noqa: PLC0415  (needs makeself; only when building)

    vendor = root / "vendor"
    repo = root / "repo"
    packages.build_repo(vendor, chip="910b", cann=CANN, hdk=HDK, arch=ARCH)
    catalogue = catalogue_for(vendor)
    for torch_npu in (TORCH_NPU, TORCH_NPU_ALT):
        plan = resolve(spec_for(torch_npu), catalogue)
        result = fetch(plan, repo, Source(from_dir=vendor))
        assert result.complete, result.model_dump_json(indent=1)
    return repo, vendor, catalogue


def plan_for(spec: EnvSpec, catalogue: Catalogue) -> Plan:
    return resolve(spec, catalogue)
