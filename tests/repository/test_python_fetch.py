"""`fetch --python-wheels` through real pip against a loopback index shaped like the real one.

The index holds what pypi.org holds for torch_npu 2.9.0 (a `manylinux_2_28_x86_64` cp311
wheel pinning `torch==2.9.0+cpu`) and a torch 2.9.0 that stands for the index's CUDA build;
torch's CPU builds live under the mirror's `/whl/cpu` as on download.pytorch.org. The wheels
are stand-ins (tests/wheels.py) with the real names and tags.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from packaging.utils import canonicalize_name

from ascend_env.repository.fetch import FetchResult, fetch_python
from ascend_env.repository.repo_folder import sha256_of
from ascend_env.repository.wheelhouse import CANN_PYTHON_DEPS, WHEELS_DIR
from ascend_env.spec.envspec import EnvSpec, build_spec
from tests.vendor_server import index_server
from tests.wheels import build_wheel


@pytest.fixture
def isolated_pip(monkeypatch: pytest.MonkeyPatch) -> None:
    """pip sees only the test's index (this machine's pip.conf names local mirrors)."""
    for name in [n for n in os.environ if n.startswith("PIP_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)


def spec() -> EnvSpec:
    return build_spec({"extends": "910b", "name": "pyfetch", "hardware": {"arch": "x86_64"},
                       "python": {"version": "3.11"},
                       "frameworks": {"torch": {"version": "2.9.0", "torch_npu": "2.9.0"},
                                      "mindspore": None}}, "test")


def site(root: Path) -> None:
    pypi = root / "pypi"
    build_wheel(pypi / "torch", "torch", "2.9.0", requires=["nvidia-nccl-cu12"])  # "CUDA"
    build_wheel(pypi / "torch-npu", "torch_npu", "2.9.0", requires=["torch==2.9.0+cpu"],
                tag="cp311-cp311-manylinux_2_28_x86_64")
    for name in CANN_PYTHON_DEPS:
        # numpy as real numpy 1.26 is tagged: manylinux2014 only (pip's manylinux_2_28 alone
        # would refuse it).
        tag = ("cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64" if name == "numpy"
               else "py3-none-any")
        build_wheel(pypi / canonicalize_name(name), name, "1.0", tag=tag)
    build_wheel(root / "whl" / "cpu" / "torch", "torch", "2.9.0+cpu")


def fetch_from_site(tmp_path: Path) -> tuple[Path, FetchResult]:
    """fetch_python with --python-wheels into an empty repository, from the site served at
    tmp_path/site (its pypi/ as the index, the site as the mirror)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    the_spec = spec()
    empty = FetchResult(dest=str(repo), spec=the_spec.name, digest=the_spec.digest(),
                        complete=True, files=[])
    with index_server(tmp_path / "site") as base:
        return repo, fetch_python(empty, the_spec, download=True, index_url=f"{base}pypi/",
                                  mirror=base.rstrip("/"))


@pytest.mark.usefixtures("isolated_pip")
def test_python_wheels_take_the_cpu_torch_from_the_mirror_and_the_real_tags(
        tmp_path: Path) -> None:
    site(tmp_path / "site")
    repo, done = fetch_from_site(tmp_path)
    assert done.python is not None, done
    assert done.python.message == "" and done.python.complete, done.python
    got = sorted(p.name for p in (repo / WHEELS_DIR).glob("*.whl"))
    assert "torch-2.9.0+cpu-py3-none-any.whl" in got
    assert "torch-2.9.0-py3-none-any.whl" not in got  # never the index's CUDA torch
    assert "torch_npu-2.9.0-cp311-cp311-manylinux_2_28_x86_64.whl" in got
    assert "numpy-1.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl" in got
    # Each downloaded wheel is recorded in repo.json with its digest.
    recorded = json.loads((repo / "repo.json").read_text())["wheels"]
    assert sorted(Path(name).name for name in recorded) == got
    assert all(len(entry["sha256"]) == 64 for entry in recorded.values())


@pytest.mark.usefixtures("isolated_pip")
def test_without_the_cpu_index_the_gap_is_named_not_filled_with_cuda(tmp_path: Path) -> None:
    site(tmp_path / "site")
    for wheel in (tmp_path / "site" / "whl" / "cpu" / "torch").glob("*.whl"):
        wheel.unlink()
    repo, done = fetch_from_site(tmp_path)
    assert done.python is not None and not done.complete
    assert "pip download failed" in done.python.message
    assert "torch==2.9.0+cpu" in done.python.message
    assert not list((repo / WHEELS_DIR).glob("torch-*"))


def test_fetch_records_dropped_wheels_once_and_reports_one_altered_later(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    dropped = build_wheel(repo / WHEELS_DIR, "absl-py", "1.0")  # an operator's own wheel
    the_spec = spec()
    empty = FetchResult(dest=str(repo), spec=the_spec.name, digest=the_spec.digest(),
                        complete=True, files=[])
    first = fetch_python(empty, the_spec)
    recorded = json.loads((repo / "repo.json").read_text())["wheels"]
    assert recorded == {f"wheels/{dropped.name}": {"sha256": sha256_of(dropped),
                                                   "size": dropped.stat().st_size}}
    assert first.complete  # a gap is only reported without --python-wheels
    before = sha256_of(dropped)
    with dropped.open("ab") as handle:
        handle.write(b"\0")
    again = fetch_python(empty, the_spec)
    assert again.python is not None and not again.complete and not again.python.complete
    assert f"{dropped}: sha256 {sha256_of(dropped)}, but repo.json records {before}" in \
        again.python.message
    # The record is not overwritten with the altered file's digest.
    assert json.loads((repo / "repo.json").read_text())["wheels"][
        f"wheels/{dropped.name}"]["sha256"] == before
