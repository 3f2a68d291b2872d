"""The real torch_npu 2.9.0 wheel (cp311, x86_64, about 28 MB) from the package index, for tests.

Fetched once into a cache (`ASCEND_ENV_TEST_CACHE`, default /var/cache/ascend-env-tests) from
the address the shipped wheel index records, and kept only if its sha256 is the one the shipped
catalogue records (ascend-deployer 26.0.0's manifest): the index and the vendor's mirror carry
the same file. Where the index cannot be reached the tests that need it skip, saying why.
"""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from ascend_env.repository.repo_folder import sha256_of
from ascend_env.spec.catalogue import load_catalogue
from ascend_env.spec.wheels import load_wheel_index

NAME = "torch_npu-2.9.0-cp311-cp311-manylinux_2_28_x86_64.whl"
CACHE = Path(os.environ.get("ASCEND_ENV_TEST_CACHE", "/var/cache/ascend-env-tests"))


def catalogued_sha256() -> str:
    entry = load_catalogue().get(NAME)
    assert entry is not None and entry.sha256 is not None, "the shipped catalogue lists it"
    return entry.sha256


def real_torch_npu() -> Path:
    """The cached real wheel, verified; skips the test when it cannot be fetched."""
    expected = catalogued_sha256()
    path = CACHE / NAME
    if path.is_file() and sha256_of(path) == expected:
        return path
    found = load_wheel_index().file(NAME)
    assert found is not None
    url = next(u for u in found.urls if u.startswith("https://files.pythonhosted.org/"))
    CACHE.mkdir(parents=True, exist_ok=True)
    partial = CACHE / f".{NAME}.{os.getpid()}"
    try:
        with urllib.request.urlopen(url, timeout=120) as response, partial.open("wb") as out:
            for block in iter(lambda: response.read(1 << 20), b""):
                out.write(block)
    except (urllib.error.URLError, OSError) as exc:
        partial.unlink(missing_ok=True)
        pytest.skip(f"the package index is unreachable ({url}: {exc}); these tests need the "
                    "real torch_npu wheel")
    actual = sha256_of(partial)
    if actual != expected:
        partial.unlink()
        pytest.fail(f"{url}: sha256 {actual}, the shipped catalogue records {expected}")
    partial.replace(path)
    return path
