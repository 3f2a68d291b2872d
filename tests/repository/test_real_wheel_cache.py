"""tests/real_wheels.py: the real torch_npu wheel is fetched once, verified, or the test skips."""

from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from ascend_env.repository.repo_folder import sha256_of
from tests import real_wheels


def test_an_unreachable_index_skips_saying_why(monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Path) -> None:
    monkeypatch.setattr(real_wheels, "CACHE", tmp_path / "cache")

    def refuse(*_args: Any, **_kwargs: Any) -> None:
        raise urllib.error.URLError("Connection refused")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)
    with pytest.raises(pytest.skip.Exception) as skipped:
        real_wheels.real_torch_npu()
    assert "the package index is unreachable" in str(skipped.value)
    assert "Connection refused" in str(skipped.value)
    assert list((tmp_path / "cache").iterdir()) == []  # no partial file left


def test_a_cached_file_with_another_digest_is_fetched_again(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A damaged cache entry is not trusted; what replaces it is the verified wheel."""
    real = real_wheels.real_torch_npu()  # skips where the index is unreachable
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / real_wheels.NAME).write_bytes(b"not a wheel")
    monkeypatch.setattr(real_wheels, "CACHE", cache)
    fetched = real_wheels.real_torch_npu()
    assert fetched == cache / real_wheels.NAME
    assert sha256_of(fetched) == real_wheels.catalogued_sha256() == sha256_of(real)
