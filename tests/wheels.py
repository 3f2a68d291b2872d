"""Tiny real wheels (PEP 427) for tests: stand-ins for distributions not available offline.

The pinned torch / torch_npu / MindSpore wheels are gigabytes and cannot be downloaded here,
and CANN's Python dependencies would need an index. What the tests that use these prove is
honest: the named, pinned versions and their declared dependencies land where they should,
through real pip, from a verified repository. A stand-in torch cannot train anything.

The install and image tests' repositories get the frameworks from here: stand-in framework
wheels in a catalogue overlay (so fetch verifies their sha256 like any vendor file), and
`wheels/` filled with stand-ins of CANN's Python dependencies and of what the frameworks
declare, so the repository holds the whole closure and installs run offline.
"""

from __future__ import annotations

import base64
import hashlib
import json
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ascend_env.repository import wheel_digests
from ascend_env.repository.repo_folder import sha256_of
from ascend_env.repository.wheelhouse import CANN_PYTHON_DEPS, WHEELS_DIR
from ascend_env.spec.catalogue import Catalogue, load_catalogue, load_overlay
from ascend_env.spec.envspec import EnvSpec


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build_wheel(dest: Path, distribution: str, version: str, *, module: str | None = None,
                requires: Iterable[str] = (), tag: str = "py3-none-any") -> Path:
    """A minimal wheel with one package (`module`, default the distribution's name) whose
    `__version__` is `version`, declaring `requires` as its Requires-Dist."""
    stem = distribution.replace("-", "_")
    module = module or stem
    dist_info = f"{stem}-{version}.dist-info"
    metadata = (f"Metadata-Version: 2.1\nName: {distribution}\nVersion: {version}\n"
                "Summary: ascend-env test stand-in\n"
                + "".join(f"Requires-Dist: {line}\n" for line in requires))
    files = {
        f"{module}/__init__.py": f'__version__ = "{version}"\n'.encode(),
        f"{dist_info}/METADATA": metadata.encode(),
        f"{dist_info}/WHEEL": (f"Wheel-Version: 1.0\nGenerator: ascend-env-tests\n"
                               f"Root-Is-Purelib: true\nTag: {tag}\n").encode(),
    }
    record = [_record_line(name, data) for name, data in files.items()]
    record.append(f"{dist_info}/RECORD,,")
    files[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()
    dest.mkdir(parents=True, exist_ok=True)
    path = dest / f"{stem}-{version}-{tag}.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            # A fixed date: the same wheel twice is the same bytes (and the same digest).
            archive.writestr(zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0)), data)
    return path


# -- the frameworks of a test repository -------------------------------------------------------

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


def framework_overlay(dest: Path, spec: EnvSpec, *, platform_tagged: bool = False) -> Path:
    """Stand-in framework wheels in `dest` and the catalogue overlay that names them (one
    overlay file per spec). `platform_tagged`: tagged as the real ones are, for the spec's
    Python and arch, so pip on the host checks the tag."""
    # The real tag: https://gitcode.com/Ascend/pytorch/releases/download/v7.2.0-pytorch2.7.1/
    # torch_npu-2.7.1-cp311-cp311-manylinux_2_28_aarch64.whl (PyTorch's own: the same).
    versions = dict(spec.framework_pins())
    tag = "cp" + spec.python.version.replace(".", "")
    wheel_tag = (f"{tag}-{tag}-manylinux_2_28_{spec.hardware.arch}" if platform_tagged
                 else "py3-none-any")
    components: dict[str, Any] = {}
    for name, version in versions.items():
        requires = list(REQUIRES.get(name, ()))
        if name == "torch_npu":
            requires.append(f"torch=={versions['torch']}")
        wheel = build_wheel(dest, name, version, requires=requires, tag=wheel_tag)
        components[name] = {version: {"files": [{
            "filename": wheel.name, "kind": "wheel", "arch": spec.hardware.arch,
            "python_tag": tag, "distribution": name, "file_version": version,
            "sha256": sha256_of(wheel)}]}}
    overlay = dest / f"wheels-overlay-{spec.digest()}.json"
    overlay.write_text(json.dumps({"schema": "test", "source": "ascend-env test stand-ins",
                                   "components": components}))
    return overlay


def catalogue_with_frameworks(vendor: Path, *specs: EnvSpec) -> Catalogue:
    """The shipped catalogue, the fake vendor packages in `vendor` (tests/sim's
    catalogue-overlay.json), and stand-in framework wheels for each spec."""
    catalogue = load_catalogue().merged(load_overlay(vendor / "catalogue-overlay.json"))
    for spec in specs:
        catalogue = catalogue.merged(load_overlay(framework_overlay(vendor, spec)))
    return catalogue


def fill_wheels(repo: Path) -> None:
    """Stand-ins for everything beside the frameworks, in the repository's wheels/, recorded
    in repo.json with their digests as `fetch` records the wheels it finds there."""
    for name in EXTRA_WHEELS:
        build_wheel(repo / WHEELS_DIR, name, VERSIONS.get(name, "1.0"),
                    requires=REQUIRES.get(name, ()))
    # Framework wheels a test put at the root without fetch are recorded the same way.
    wheel_digests.record(repo, [*repo.glob("*.whl"), *(repo / WHEELS_DIR).glob("*.whl")])
