"""What `install` hands the python role, and what it says when the repository falls short."""

from __future__ import annotations

import re
import tarfile
from pathlib import Path

import pytest

from ascend_env.install.provision import InstallOptions, check_python_stack, python_vars
from ascend_env.repository.installers import RepoError
from ascend_env.repository.repo_folder import sha256_of
from ascend_env.repository.wheel_digests import WheelDigestError
from ascend_env.repository.wheelhouse import WHEELS_DIR, python_stack
from ascend_env.spec.envspec import EnvSpec, build_spec
from tests.wheels import build_wheel, catalogue_with_frameworks, fill_wheels, framework_overlay


def spec(**frameworks: object) -> EnvSpec:
    return build_spec({"extends": "910b", "name": "vars", "hardware": {"arch": "aarch64"},
                       "python": {"version": "3.11"}, **({"frameworks": frameworks}
                                                         if frameworks else {})}, "test")


def repo_with_frameworks(tmp_path: Path, the_spec: EnvSpec) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    framework_overlay(repo, the_spec)
    fill_wheels(repo)
    return repo


def test_no_frameworks_no_python_stack(tmp_path: Path) -> None:
    assert python_stack(spec(torch=None, mindspore=None), tmp_path) is None


def test_a_whole_closure_goes_offline_as_one_archive(tmp_path: Path) -> None:
    the_spec = spec()
    repo = repo_with_frameworks(tmp_path, the_spec)
    stack = python_stack(the_spec, repo)
    assert stack is not None and stack.offline
    assert check_python_stack(stack, InstallOptions(repo=repo, offline=True)) == []
    variables = python_vars(the_spec, stack, InstallOptions(repo=repo, log_dir=tmp_path / "l"))
    assert variables["offline"] is True
    assert variables["requirements"][:3] == ["torch==2.9.0", "torch_npu==2.9.0",
                                             "mindspore==2.7.2"]
    assert variables["closure"]["mpmath"] == "1.3.0"
    with tarfile.open(variables["bundle"]) as archive:
        names = archive.getnames()
    assert len(names) == len(variables["closure"]) and "torch-2.9.0-py3-none-any.whl" in names
    assert variables["bundle_id"] == Path(variables["bundle"]).stem


def test_a_gap_is_a_note_or_with_offline_an_error(tmp_path: Path) -> None:
    the_spec = spec()
    repo = repo_with_frameworks(tmp_path, the_spec)
    (repo / WHEELS_DIR / "absl_py-1.0-py3-none-any.whl").unlink()
    stack = python_stack(the_spec, repo)
    assert stack is not None and not stack.offline
    notes = check_python_stack(stack, InstallOptions(repo=repo))
    assert len(notes) == 1
    assert "absl-py (needed by the spec: no wheel in the repository)" in notes[0]
    assert "pip on each host will take them from its configured index" in notes[0]
    assert f"--dest {repo / WHEELS_DIR} absl-py" in notes[0]
    # Online, pip on the host decides: no closure to compare the venv with.
    assert python_vars(the_spec, stack, InstallOptions(repo=repo, log_dir=tmp_path))[
        "closure"] is None
    with pytest.raises(RepoError, match="nothing was changed on any host"):
        check_python_stack(stack, InstallOptions(repo=repo, offline=True))


def test_the_catalogue_of_the_stand_ins_is_what_fetch_would_verify(tmp_path: Path) -> None:
    """The overlay names each stand-in with its sha256: fetch treats them as vendor files."""
    the_spec = spec()
    vendor = tmp_path / "vendor"
    vendor.mkdir()
    (vendor / "catalogue-overlay.json").write_text('{"components": {}}')
    catalogue = catalogue_with_frameworks(vendor, the_spec)
    torch = [e for e in catalogue.find(distribution="torch") if e.file_version == "2.9.0"]
    assert torch and torch[0].filename == "torch-2.9.0-py3-none-any.whl"
    assert torch[0].sha256 is not None


def test_offline_the_role_gets_every_wheel_with_its_digest(tmp_path: Path) -> None:
    the_spec = spec()
    repo = repo_with_frameworks(tmp_path, the_spec)
    stack = python_stack(the_spec, repo)
    assert stack is not None
    variables = python_vars(the_spec, stack, InstallOptions(repo=repo, log_dir=tmp_path / "l"))
    lines = variables["hashes"]
    assert len(lines) == len(variables["closure"])
    wheel = repo / WHEELS_DIR / "mpmath-1.3.0-py3-none-any.whl"
    assert f"mpmath==1.3.0 --hash=sha256:{sha256_of(wheel)}" in lines


def test_a_wheel_altered_after_it_was_recorded_is_refused_naming_both_digests(
        tmp_path: Path) -> None:
    the_spec = spec()
    repo = repo_with_frameworks(tmp_path, the_spec)
    wheel = repo / WHEELS_DIR / "mpmath-1.3.0-py3-none-any.whl"
    recorded = sha256_of(wheel)
    with wheel.open("ab") as handle:
        handle.write(b"\0")
    with pytest.raises(WheelDigestError) as raised:
        python_stack(the_spec, repo)
    message = str(raised.value)
    assert f"{wheel}: sha256 {sha256_of(wheel)}, but repo.json records {recorded}" in message
    assert "nothing was changed on any host" in message
    # A wheel dropped in later is named too, until fetch records it.
    build_wheel(repo / WHEELS_DIR, "mpmath", "1.3.1")
    wheel.unlink()
    with pytest.raises(WheelDigestError, match=re.escape("mpmath-1.3.1-py3-none-any.whl is not")):
        python_stack(the_spec, repo)
