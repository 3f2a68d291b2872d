"""The offline wheel check: dependency closure from real wheel files and their METADATA."""

from __future__ import annotations

import os
import shlex
import tarfile
from pathlib import Path

import pytest
from packaging.tags import parse_tag

from ascend_env.repository.wheelhouse import (
    KEEP_BUNDLES,
    Missing,
    Target,
    bundle,
    download_hint,
    drift,
    resolve,
    scan,
)
from ascend_env.spec.envspec import EnvSpec, build_spec
from tests.real_wheels import real_torch_npu
from tests.wheels import build_wheel

TARGET = Target(python="3.11", arch="aarch64")


def names(paths: list[Path]) -> list[str]:
    return [p.name for p in paths]


def test_closure_follows_requires_dist_and_markers(tmp_path: Path) -> None:
    build_wheel(tmp_path, "torch", "2.9.0", requires=[
        "filelock", "sympy>=1.13", "typing-extensions; python_version < '3.8'",
        "nvidia-cudnn; platform_machine == 'x86_64'", "jinja2; extra == 'docs'"])
    build_wheel(tmp_path, "torch_npu", "2.9.0", requires=["torch==2.9.0", "pyyaml"])
    build_wheel(tmp_path, "filelock", "3.13.0")
    build_wheel(tmp_path, "sympy", "1.12")
    build_wheel(tmp_path, "sympy", "1.13.3", requires=["mpmath<1.4,>=1.1.0"])
    build_wheel(tmp_path, "mpmath", "1.3.0")
    build_wheel(tmp_path, "PyYAML", "6.0.2", tag="cp311-cp311-manylinux_2_17_aarch64")
    result = resolve(["torch_npu==2.9.0", "torch==2.9.0"], scan([tmp_path]), TARGET)
    assert result.complete, result.missing
    assert names(result.wheels) == [
        "PyYAML-6.0.2-cp311-cp311-manylinux_2_17_aarch64.whl", "filelock-3.13.0-py3-none-any.whl",
        "mpmath-1.3.0-py3-none-any.whl", "sympy-1.13.3-py3-none-any.whl",
        "torch-2.9.0-py3-none-any.whl", "torch_npu-2.9.0-py3-none-any.whl"]


def test_missing_dependency_is_named_with_who_needs_it(tmp_path: Path) -> None:
    build_wheel(tmp_path, "torch_npu", "2.9.0", requires=["torch==2.9.0", "pyyaml"])
    build_wheel(tmp_path, "torch", "2.8.0")
    result = resolve(["torch_npu==2.9.0", "absl-py"], scan([tmp_path]), TARGET)
    assert [str(m) for m in result.missing] == [
        "absl-py (needed by the spec: no wheel in the repository)",
        "torch==2.9.0 (needed by torch-npu 2.9.0: the repository has only 2.8.0)",
        "pyyaml (needed by torch-npu 2.9.0: no wheel in the repository)"]
    hint = download_hint(result.missing, TARGET, Path("/repo/wheels"))
    assert hint == ("pip download --only-binary=:all: --implementation cp --python-version "
                    "3.11 --platform manylinux_2_28_aarch64 --platform manylinux2014_aarch64 "
                    "--dest /repo/wheels absl-py pyyaml torch==2.9.0")


def test_the_printed_pip_line_takes_torch_cpu_and_cannot_be_split_otherwise() -> None:
    """torch_npu 2.9.0 pins `torch==2.9.0+cpu`: the line asks for that build from torch's CPU
    index (the package index's torch 2.9.0 is the CUDA one), for the real wheels' tags."""
    target = Target(python="3.11", arch="x86_64",
                    platforms=("manylinux_2_28_x86_64", "manylinux2014_x86_64"),
                    torch="2.9.0+cpu")
    missing = [Missing("torch==2.9.0", "the spec", "no wheel in the repository"),
               Missing("numpy<2.0,>=1.20; python_version >= '3.8'", "x 1", "none"),
               Missing("$(reboot)", "y 1", "not a valid requirement")]
    dest = Path("/srv/repo with space/wheels")
    words = shlex.split(download_hint(missing, target, dest))
    assert words[:2] == ["pip", "download"]
    assert words[words.index("--dest") + 1] == str(dest)
    assert [words[i + 1] for i, w in enumerate(words) if w == "--platform"] == [
        "manylinux_2_28_x86_64", "manylinux2014_x86_64"]
    assert words[words.index("--extra-index-url") + 1] == "https://download.pytorch.org/whl/cpu"
    assert words[-3:] == ["$(reboot)", "numpy<2.0,>=1.20; python_version >= '3.8'",
                          "torch==2.9.0+cpu"]
    mirrored = Target.of(spec_x86(), mirror="https://mirror.example/pypi")
    assert mirrored.torch_index == "https://mirror.example/pypi/whl/cpu"
    assert mirrored.torch == "2.9.0+cpu"


def spec_x86() -> EnvSpec:
    return build_spec({"extends": "910b", "name": "t", "hardware": {"arch": "x86_64"},
                       "python": {"version": "3.11"}}, "test")


def test_wheels_for_another_python_or_arch_do_not_count(tmp_path: Path) -> None:
    build_wheel(tmp_path, "numpy", "2.1.0", tag="cp310-cp310-manylinux_2_17_aarch64")
    build_wheel(tmp_path, "numpy", "2.1.1", tag="cp311-cp311-manylinux_2_17_x86_64")
    result = resolve(["numpy"], scan([tmp_path]), TARGET)
    assert [str(m) for m in result.missing] == [
        "numpy (needed by the spec: no wheel in the repository)"]


def test_a_conflict_with_an_earlier_choice_is_reported(tmp_path: Path) -> None:
    build_wheel(tmp_path, "a", "1.0", requires=["c>=2"])
    build_wheel(tmp_path, "b", "1.0", requires=["c<2"])
    build_wheel(tmp_path, "c", "1.5")
    build_wheel(tmp_path, "c", "2.0")
    result = resolve(["a", "b"], scan([tmp_path]), TARGET)
    assert [str(m) for m in result.missing] == [
        "c<2 (needed by b 1.0: the repository's c 2.0 was already chosen)"]


def test_extras_pull_their_dependencies(tmp_path: Path) -> None:
    build_wheel(tmp_path, "requests", "2.32.0", requires=["idna", "pysocks; extra == 'socks'"])
    build_wheel(tmp_path, "idna", "3.7")
    plain = resolve(["requests"], scan([tmp_path]), TARGET)
    assert plain.complete
    with_socks = resolve(["requests[socks]"], scan([tmp_path]), TARGET)
    assert [m.requirement for m in with_socks.missing] == ["pysocks"]


def test_odd_files_and_bad_requirements_are_not_fatal(tmp_path: Path) -> None:
    (tmp_path / "not-a-wheel.whl").write_bytes(b"junk")
    (tmp_path / "README.txt").write_text("hello")
    build_wheel(tmp_path, "x", "1.0", requires=["y >>> 3"])
    result = resolve(["x", "!!"], scan([tmp_path, tmp_path / "absent"]), TARGET)
    assert [m.requirement for m in result.missing] == ["!!"]
    assert names(result.wheels) == ["x-1.0-py3-none-any.whl"]


@pytest.mark.parametrize(("tag", "ok"), [
    ("py3-none-any", True), ("py2.py3-none-any", True), ("cp311-cp311-linux_aarch64", True),
    ("cp38-abi3-manylinux2014_aarch64", True), ("cp312-abi3-manylinux2014_aarch64", False),
    ("cp311-cp311-manylinux_2_28_aarch64", True), ("cp311-cp311-musllinux_1_2_aarch64", False),
    ("cp311-cp311-macosx_11_0_arm64", False), ("cp311-cp311-win_arm64", False),
    ("cp311-cp311-manylinux_2_17_x86_64", False), ("pp310-pypy310_pp73-manylinux_2_17_aarch64",
                                                   False),
])
def test_target_tags(tag: str, ok: bool) -> None:
    assert TARGET.supports(parse_tag(tag)) is ok


def test_drift_names_what_the_venv_lacks() -> None:
    closure = {"torch": "2.9.0", "torch-npu": "2.9.0", "mpmath": "1.3.0", "PyYAML": "6.0.2"}
    installed = {"torch": "2.9.0", "torch_npu": "2.9.0.0", "pyyaml": "6.0.1", "pip": "23.0.1"}
    assert drift(closure, installed) == ["mpmath 1.3.0 (not installed)",
                                         "PyYAML 6.0.2 (installed: 6.0.1)"]
    assert drift(closure, {**installed, "mpmath": "1.3", "PyYAML": "6.0.2"}) == []


def test_bundle_is_reproducible_and_made_once(tmp_path: Path) -> None:
    house = tmp_path / "house"
    wheels = [build_wheel(house, "b", "1.0"), build_wheel(house, "a", "2.0")]
    first = bundle(wheels, tmp_path / "cache")
    assert first.name.startswith("wheels-") and first.suffix == ".tar"
    with tarfile.open(first) as archive:
        assert archive.getnames() == ["a-2.0-py3-none-any.whl", "b-1.0-py3-none-any.whl"]
        assert {(m.mtime, m.uid, m.mode) for m in archive.getmembers()} == {(0, 0, 0o644)}
    made = first.stat().st_ino
    assert bundle(list(reversed(wheels)), tmp_path / "cache") == first
    assert first.stat().st_ino == made  # the same closure is not tarred again
    elsewhere = bundle(wheels, tmp_path / "other")
    assert elsewhere.read_bytes() == first.read_bytes()
    build_wheel(house, "a", "2.0", requires=["c"])  # a different wheel under the same name
    assert bundle(wheels, tmp_path / "cache") != first


def test_bundle_cache_keeps_the_most_recently_used(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    made = [bundle([build_wheel(tmp_path / str(i), "w", f"{i}.0")], cache)
            for i in range(KEEP_BUNDLES)]
    os.utime(made[0], ns=(1, 1))  # the oldest...
    os.utime(made[1], ns=(2, 2))
    bundle(list((tmp_path / "0").glob("*.whl")), cache)  # ...reused
    newest = bundle([build_wheel(tmp_path / "new", "w", "9.0")], cache)
    assert sorted(cache.glob("wheels-*.tar")) == sorted([made[0], *made[2:], newest])


def test_the_real_torch_npu_metadata_admits_only_the_cpu_torch(tmp_path: Path) -> None:
    """The real wheel's METADATA (`Requires-Dist: torch==2.9.0+cpu`): beside the index's own
    torch 2.9.0 (the CUDA build, a stand-in here) the closure is incomplete; beside a stand-in
    torch 2.9.0+cpu it is complete. Its tags make it a cp311 x86_64 wheel only."""
    real = real_torch_npu()
    (tmp_path / real.name).symlink_to(real)
    build_wheel(tmp_path, "torch", "2.9.0")
    x86 = Target(python="3.11", arch="x86_64")
    wheels = scan([tmp_path])
    [npu] = [w for w in wheels if w.name == "torch-npu"]
    assert npu.requires() == ["torch==2.9.0+cpu"]
    cuda = resolve(["torch_npu==2.9.0"], wheels, x86)
    assert [str(m) for m in cuda.missing] == [
        "torch==2.9.0+cpu (needed by torch-npu 2.9.0: the repository has only 2.9.0)"]
    build_wheel(tmp_path, "torch", "2.9.0+cpu")
    cpu = resolve(["torch==2.9.0", "torch_npu==2.9.0"], scan([tmp_path]), x86)
    assert cpu.complete and names(cpu.wheels) == ["torch-2.9.0+cpu-py3-none-any.whl", real.name]
    for other in (Target(python="3.12", arch="x86_64"), Target(python="3.11", arch="aarch64")):
        assert [str(m) for m in resolve(["torch_npu==2.9.0"], scan([tmp_path]), other).missing
                ] == ["torch_npu==2.9.0 (needed by the spec: no wheel in the repository)"]
