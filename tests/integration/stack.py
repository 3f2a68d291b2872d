"""The framework half of the install tests' repository: stand-in wheels, fetched and verified.

tests/sim builds the fake vendor packages; this adds what `fetch` and the python role need for
the frameworks: stand-in torch / torch_npu / MindSpore wheels in a catalogue overlay (so fetch
verifies their sha256 like any vendor file), and `wheels/` filled with stand-ins of CANN's
Python dependencies and of what the frameworks declare, so the repository holds the whole
closure and the install runs offline (tests/wheels.py says what stand-ins prove).
"""

from __future__ import annotations

import json
import platform
from pathlib import Path
from typing import Any

from ascend_env.catalogue import Catalogue, load_catalogue, load_overlay
from ascend_env.fetch import sha256_of
from ascend_env.spec import EnvSpec
from ascend_env.wheelhouse import CANN_PYTHON_DEPS, WHEELS_DIR
from tests.wheels import build_wheel

ARCH = platform.machine()
FRAMEWORKS = ("torch", "torch_npu", "mindspore")
# Declared dependencies, shaped like the real ones: the closure must follow them (mpmath only
# through sympy, filelock only through torch), and markers for other machines are skipped.
REQUIRES = {
    "torch": ["filelock", "sympy>=1.13", "nvidia-nccl-cu12; platform_machine == 'none'"],
    "torch_npu": ["pyyaml"],
    "mindspore": ["numpy<2.0.0,>=1.20.0", "protobuf>=3.13.0", "astunparse>=1.6.3"],
    "sympy": ["mpmath<1.4,>=1.1.0"],
}
VERSIONS = {"sympy": "1.13.3", "mpmath": "1.3.0", "numpy": "1.26.4", "protobuf": "5.28.3",
            "astunparse": "1.6.3"}  # the rest: 1.0
EXTRA_WHEELS = (*CANN_PYTHON_DEPS, "filelock", "mpmath", "astunparse")


def pins(spec: EnvSpec) -> dict[str, str]:
    """The spec's framework distributions and versions."""
    found = {}
    if spec.frameworks.torch is not None:
        found["torch"] = spec.frameworks.torch.version
        found["torch_npu"] = spec.frameworks.torch.torch_npu
    if spec.frameworks.mindspore is not None:
        found["mindspore"] = spec.frameworks.mindspore.version
    return found


def framework_overlay(dest: Path, spec: EnvSpec) -> Path:
    """Stand-in framework wheels in `dest` and the catalogue overlay that names them."""
    versions = pins(spec)
    tag = "cp" + spec.python.version.replace(".", "")
    components: dict[str, Any] = {}
    for name, version in versions.items():
        requires = list(REQUIRES.get(name, ()))
        if name == "torch_npu":
            requires.append(f"torch=={versions['torch']}")
        wheel = build_wheel(dest, name, version, requires=requires)
        components[name] = {version: {"files": [{
            "filename": wheel.name, "kind": "wheel", "arch": spec.hardware.arch,
            "python_tag": tag, "distribution": name, "file_version": version,
            "sha256": sha256_of(wheel)}]}}
    overlay = dest / "wheels-overlay.json"
    overlay.write_text(json.dumps({"schema": "test", "source": "ascend-env test stand-ins",
                                   "components": components}))
    return overlay


def catalogue_with_frameworks(vendor: Path, spec: EnvSpec) -> Catalogue:
    """The shipped catalogue, the fake vendor packages in `vendor`, and stand-in wheels."""
    shipped = load_catalogue()
    # The shipped catalogue's real framework wheels would be chosen before the stand-ins.
    without_real = Catalogue(source=shipped.source, files={
        name: entry for name, entry in shipped.files.items()
        if entry.distribution not in FRAMEWORKS})
    return without_real.merged(load_overlay(vendor / "catalogue-overlay.json")).merged(
        load_overlay(framework_overlay(vendor, spec)))


def fill_wheels(repo: Path) -> None:
    """Stand-ins for everything beside the frameworks, in the repository's wheels/."""
    for name in EXTRA_WHEELS:
        build_wheel(repo / WHEELS_DIR, name, VERSIONS.get(name, "1.0"),
                    requires=REQUIRES.get(name, ()))
