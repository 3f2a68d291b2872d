"""Tiny real wheels (PEP 427) for tests: stand-ins for distributions not available offline.

The pinned torch / torch_npu / MindSpore wheels are gigabytes and cannot be downloaded here,
and CANN's Python dependencies would need an index. What the tests that use these prove is
honest: the named, pinned versions and their declared dependencies land where they should,
through real pip, from a verified repository. A stand-in torch cannot train anything.
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from collections.abc import Iterable
from pathlib import Path


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
