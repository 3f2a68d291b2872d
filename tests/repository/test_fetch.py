"""`fetch` against a loopback HTTP server: verify, resume, refuse, unpack safely."""

from __future__ import annotations

import hashlib
import io
import json
import os
import stat
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from packaging.utils import canonicalize_name

from ascend_env.repository.fetch import Source, fetch, locate
from ascend_env.repository.wheelhouse import CANN_PYTHON_DEPS
from ascend_env.spec.catalogue import CatalogueError, load_catalogue, load_overlay
from ascend_env.spec.envspec import build_spec, load_spec
from ascend_env.spec.plan import Plan, resolve
from tests.cli_invoke import invoke
from tests.vendor_server import Fault, ServerState, index_server, vendor_server
from tests.wheels import build_wheel

# The 310p profile on x86_64: one HDK bundle (driver + firmware), toolkit zip, ops zip.
HDK = "Ascend-hdk-310p-npu_25.5.0_linux-x86-64.zip"
TOOLKIT = "Ascend-cann-toolkit_8.5.0_linux-x86_64.zip"
OPS = "Ascend-cann-310p-ops_8.5.0_linux-x86_64.zip"
MEMBERS = {
    HDK: ["Ascend-hdk-310p-npu-driver_25.5.0_linux-x86-64.run",
          "Ascend-hdk-310p-npu-firmware_7.8.0.6.201.run"],
    TOOLKIT: ["Ascend-cann-toolkit_8.5.0_linux-x86_64.run"],
    OPS: ["Ascend-cann-310p-ops_8.5.0_linux-x86_64.run"],
}


def make_zip(members: list[str],
             extra: tuple[tuple[zipfile.ZipInfo, bytes], ...] = ()) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in members:
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFREG | 0o755) << 16
            archive.writestr(info, f"#!/bin/sh\necho {name}\n" + "x" * 300_000)
        for info, data in extra:
            archive.writestr(info, data)
    return buffer.getvalue()


def overlay_for(files: dict[str, bytes], base_url: str, *, wrong: str | None = None
                ) -> dict[str, Any]:
    """A catalogue overlay giving the fake files the real names and their digests."""
    entries = []
    for name, data in files.items():
        digest = hashlib.sha256(data).hexdigest()
        if name == wrong:
            digest = hashlib.sha256(b"something else").hexdigest()
        entries.append({"filename": name, "sha256": digest, "kind": "fake", "arch": "x86_64",
                        "url": f"{base_url}/Ascend%20HDK/{name}"})
    return {"components": {"Test": {"1": {"files": entries}}}}


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, ServerState, dict[str, bytes]]]:
    root = tmp_path / "server"
    root.mkdir()
    files = {name: make_zip(members) for name, members in MEMBERS.items()}
    for name, data in files.items():
        (root / name).write_bytes(data)
    with vendor_server(root) as (url, state):
        yield url, state, files


def plan_with(overlay: dict[str, Any], tmp_path: Path) -> Plan:
    path = tmp_path / "overlay.json"
    path.write_text(json.dumps(overlay))
    catalogue = load_catalogue().merged(load_overlay(path))
    return resolve(load_spec(profile="310p"), catalogue)


def repo_files(dest: Path) -> set[str]:
    return {p.name for p in dest.iterdir() if p.is_file()}


def test_fresh_fetch_verifies_unpacks_and_a_rerun_downloads_nothing(
        served: tuple[str, ServerState, dict[str, bytes]], tmp_path: Path) -> None:
    url, state, files = served
    plan = plan_with(overlay_for(files, url), tmp_path)
    dest = tmp_path / "repo"
    result = fetch(plan, dest, Source())
    assert result.complete, result
    assert {f.file: f.status for f in result.files} == {name: "downloaded" for name in files}
    assert repo_files(dest) == {*files, "repo.json"}
    manifest = json.loads((dest / "repo.json").read_text())
    assert set(manifest["files"]) == set(files)
    for item in plan.items:
        found = locate(dest, item)
        assert found is not None and os.access(found, os.X_OK), item.file
    seen = len(state.requests)
    again = fetch(plan, dest, Source())
    assert {f.status for f in again.files} == {"present"}
    assert len(state.requests) == seen


def test_wrong_digest_names_both_and_leaves_nothing(
        served: tuple[str, ServerState, dict[str, bytes]], tmp_path: Path) -> None:
    url, _, files = served
    plan = plan_with(overlay_for(files, url, wrong=TOOLKIT), tmp_path)
    dest = tmp_path / "repo"
    result = fetch(plan, dest, Source())
    failed = next(f for f in result.files if f.file == TOOLKIT)
    assert not result.complete
    assert failed.status == "failed"
    assert hashlib.sha256(files[TOOLKIT]).hexdigest() in failed.message
    assert "expected" in failed.message
    assert TOOLKIT not in repo_files(dest)
    assert not list((dest / ".partial").glob(TOOLKIT + "*"))


def test_dropped_connection_resumes_with_a_range_request(
        served: tuple[str, ServerState, dict[str, bytes]], tmp_path: Path) -> None:
    url, state, files = served
    state.faults[OPS] = Fault(drop_after=100_000)
    result = fetch(plan_with(overlay_for(files, url), tmp_path), tmp_path / "repo", Source())
    assert result.complete, result
    assert (OPS, "bytes=100000-") in state.requests


def test_server_that_always_drops_fails_after_retries(
        served: tuple[str, ServerState, dict[str, bytes]], tmp_path: Path) -> None:
    url, state, files = served
    state.faults[OPS] = Fault(drop_after=10, times=99)
    dest = tmp_path / "repo"
    result = fetch(plan_with(overlay_for(files, url), tmp_path), dest, Source())
    failed = next(f for f in result.files if f.file == OPS)
    assert failed.status == "failed"
    assert "failed 3 times" in failed.message
    assert OPS not in repo_files(dest)


def test_404_is_named(served: tuple[str, ServerState, dict[str, bytes]],
                      tmp_path: Path) -> None:
    url, state, files = served
    state.faults[HDK] = Fault(status=404, times=99)
    result = fetch(plan_with(overlay_for(files, url), tmp_path), tmp_path / "repo", Source())
    failed = next(f for f in result.files if f.file == HDK)
    assert "HTTP 404" in failed.message


@pytest.mark.parametrize("evil", ["../escape.run", "/abs.run", "link.run"])
def test_zip_that_escapes_is_refused(served: tuple[str, ServerState, dict[str, bytes]],
                                     tmp_path: Path, evil: str) -> None:
    url, state, files = served
    info = zipfile.ZipInfo(evil)
    info.external_attr = ((stat.S_IFLNK if evil == "link.run" else stat.S_IFREG) | 0o777) << 16
    files[OPS] = make_zip(MEMBERS[OPS], ((info, b"/etc/passwd"),))
    (state.root / OPS).write_bytes(files[OPS])
    dest = tmp_path / "repo"
    result = fetch(plan_with(overlay_for(files, url), tmp_path), dest, Source())
    failed = next(f for f in result.files if f.file == OPS)
    assert failed.status == "failed"
    assert repr(evil) in failed.message
    assert not (dest / OPS.removesuffix(".zip")).exists()
    assert not (tmp_path / "escape.run").exists()


def test_from_dir_imports_and_verifies(served: tuple[str, ServerState, dict[str, bytes]],
                                       tmp_path: Path) -> None:
    url, state, files = served
    resources = tmp_path / "resources"
    resources.mkdir()
    (resources / TOOLKIT).write_bytes(files[TOOLKIT])
    (resources / OPS).write_bytes(b"tampered")
    result = fetch(plan_with(overlay_for(files, url), tmp_path), tmp_path / "repo",
                   Source(from_dir=resources))
    status = {f.file: f for f in result.files}
    assert status[TOOLKIT].status == "imported"
    assert status[OPS].status == "failed"
    assert "sha256 mismatch" in status[OPS].message
    assert TOOLKIT not in {name for name, _ in state.requests}


def test_mirror_rewrites_the_host(served: tuple[str, ServerState, dict[str, bytes]],
                                  tmp_path: Path) -> None:
    url, _, files = served
    overlay = overlay_for(files, "https://ascend-repo.invalid")
    result = fetch(plan_with(overlay, tmp_path), tmp_path / "repo", Source(mirror=url))
    assert result.complete, result


def test_file_the_catalogue_lacks_is_missing_and_named(tmp_path: Path) -> None:
    spec = build_spec({"extends": "310p", "cann": {"packages": ["toolkit", "ops", "nnal"]}}, "t")
    plan = resolve(spec)
    nnal = [item for item in plan.items if item.component == "nnal"]
    result = fetch(plan.model_copy(update={"items": nnal}), tmp_path / "repo", Source())
    assert not result.complete
    assert result.files[0].status == "missing"
    assert "Ascend-cann-nnal_8.5.0_linux-x86_64.run" in result.files[0].message


def test_overlay_without_digest_is_refused_unless_named(tmp_path: Path) -> None:
    path = tmp_path / "overlay.json"
    path.write_text(json.dumps({"components": {"X": {"1": {"files": [
        {"filename": "a.run", "kind": "toolkit", "url": "http://x/a.run"}]}}}}))
    with pytest.raises(CatalogueError, match=r"a\.run"):
        load_overlay(path)
    assert load_overlay(path, allow_unverified=frozenset({"a.run"})).get("a.run") is not None
    result = invoke("fetch", "--profile", "310p", "--repo", str(tmp_path / "r"),
                    "--catalogue", str(path))
    assert result.code == 2
    assert "--allow-unverified" in result.err


def test_cli_fetch_json_and_exit_codes(served: tuple[str, ServerState, dict[str, bytes]],
                                       tmp_path: Path) -> None:
    url, state, files = served
    overlay = tmp_path / "overlay.json"
    overlay.write_text(json.dumps(overlay_for(files, url)))
    dest = tmp_path / "repo"
    ok = invoke("fetch", "--profile", "310p", "--repo", str(dest), "--catalogue", str(overlay),
                "--json")
    assert ok.code == 0, ok.err
    assert json.loads(ok.out)["schema"] == "ascend-env/repo/v1"
    state.faults[TOOLKIT] = Fault(status=404, times=99)
    (dest / TOOLKIT).unlink()
    bad = invoke("fetch", "--profile", "310p", "--repo", str(dest), "--catalogue", str(overlay))
    assert bad.code == 1
    assert "HTTP 404" in bad.out


# -- the framework venv's wheels: --python-wheels through pip download from an index ----------

@pytest.fixture
def isolated_pip(monkeypatch: pytest.MonkeyPatch) -> None:
    """pip sees only the test's index: no configuration file (this machine's names local
    mirrors and a find-links folder of real wheels) and no PIP_* settings."""
    for name in [n for n in os.environ if n.startswith("PIP_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)


def torch_spec(tmp_path: Path) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(json.dumps({"extends": "310p", "name": "with-torch",
                                "python": {"version": "3.11"},
                                "frameworks": {"torch": {"version": "2.9.0",
                                                         "torch_npu": "2.9.0"}}}))
    return path


def stand_in_index(root: Path, *, without: tuple[str, ...] = ()) -> None:
    """CANN's dependencies and sympy's mpmath as project folders of a simple index."""
    for name in (*CANN_PYTHON_DEPS, "mpmath"):
        if name not in without:
            requires = ["mpmath>=1.1.0"] if name == "sympy" else []
            build_wheel(root / canonicalize_name(name), name, "1.3.0", requires=requires)


def wheel_overlay(files: dict[str, bytes], url: str, server_root: Path) -> dict[str, Any]:
    """The vendor files plus stand-in torch/torch_npu wheels served beside them."""
    overlay = overlay_for(files, url)
    entries = overlay["components"]["Test"]["1"]["files"]
    for name, requires in (("torch", ["sympy"]), ("torch_npu", ["torch==2.9.0"])):
        wheel = build_wheel(server_root, name, "2.9.0", requires=requires)
        entries.append({"filename": wheel.name, "kind": "wheel", "arch": "x86_64",
                        "python_tag": "cp311", "distribution": name, "file_version": "2.9.0",
                        "sha256": hashlib.sha256(wheel.read_bytes()).hexdigest(),
                        "url": f"{url}/{wheel.name}"})
    return overlay


@pytest.mark.usefixtures("isolated_pip")
def test_python_wheels_fill_the_repository_from_an_index(
        served: tuple[str, ServerState, dict[str, bytes]], tmp_path: Path) -> None:
    url, state, files = served
    overlay = tmp_path / "overlay.json"
    # The overlay's torch wheels win over the shipped catalogue's real ones.
    overlay.write_text(json.dumps(wheel_overlay(files, url, state.root)))
    stand_in_index(tmp_path / "index")
    dest = tmp_path / "repo"
    args = ["fetch", "--spec", str(torch_spec(tmp_path)), "--repo", str(dest), "--catalogue",
            str(overlay), "--json"]
    before = invoke(*args)
    assert before.code == 0, before.err  # a gap is reported, not an error, unless asked
    gap = json.loads(before.out)["python"]
    assert not gap["complete"] and "absl-py" in gap["message"].split()
    assert "sympy (needed by torch 2.9.0: no wheel in the repository)" in gap["missing"]
    with index_server(tmp_path / "index") as index:
        done = invoke(*args, "--python-wheels", "--index-url", index)
    assert done.code == 0, done.err + done.out
    python = json.loads(done.out)["python"]
    assert python["complete"] and python["missing"] == [] and python["message"] == ""
    assert "torch-2.9.0-py3-none-any.whl" in python["wheels"]  # the verified one, at the root
    assert "wheels/mpmath-1.3.0-py3-none-any.whl" in python["wheels"]
    assert "wheels/numpy-1.3.0-py3-none-any.whl" in python["wheels"]  # the index's stand-in
    assert not list((dest / "wheels").glob("torch*"))  # not copied a second time


@pytest.mark.usefixtures("isolated_pip")
def test_python_wheels_the_index_lacks_make_the_fetch_incomplete(
        served: tuple[str, ServerState, dict[str, bytes]], tmp_path: Path) -> None:
    url, state, files = served
    overlay = tmp_path / "overlay.json"
    overlay.write_text(json.dumps(wheel_overlay(files, url, state.root)))
    stand_in_index(tmp_path / "index", without=("mpmath",))
    with index_server(tmp_path / "index") as index:
        done = invoke("fetch", "--spec", str(torch_spec(tmp_path)), "--repo",
                      str(tmp_path / "repo"), "--catalogue", str(overlay), "--python-wheels",
                      "--index-url", index)
    assert done.code == 1
    assert "PARTIAL" in done.out and "pip download failed" in done.out
    assert "mpmath" in done.out
