"""Per-build wheel facts (ascend_env/data/wheel_index.json) against recorded index data.

tests/data/wheel_index/ holds the package index's JSON file lists as pypi.org returned them
(SOURCE names the URLs and the date); the refresh script, fed those, must write what the
shipped data says for the same releases.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest
from packaging.tags import cpython_tags
from packaging.utils import parse_wheel_filename

from ascend_env.spec.catalogue import load_catalogue
from ascend_env.spec.compat import check_spec
from ascend_env.spec.envspec import EnvSpec, build_spec
from ascend_env.spec.wheels import check_wheels, load_wheel_index, pip_platforms, torch_pin
from tests.cli_invoke import invoke

RECORDED = Path(__file__).parent.parent / "data" / "wheel_index"
SCRIPT = Path(__file__).parents[2] / "scripts" / "refresh_wheel_index.py"


def _script() -> ModuleType:
    loaded = importlib.util.spec_from_file_location("refresh_wheel_index", SCRIPT)
    assert loaded is not None and loaded.loader is not None
    module = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(module)
    return module


refresh = _script()
build_index, main = refresh.build_index, refresh.main


def spec(python: str, arch: str = "x86_64", torch_npu: str = "2.9.0") -> EnvSpec:
    return build_spec({"extends": "910b", "name": "w", "hardware": {"arch": arch},
                       "python": {"version": python},
                       "frameworks": {"torch": {"version": "2.9.0", "torch_npu": torch_npu},
                                      "mindspore": None}}, "test")


@pytest.fixture(scope="module")
def refreshed() -> dict[str, object]:
    built: dict[str, object] = build_index({"torch-npu": RECORDED / "torch-npu.json",
                        "mindspore": RECORDED / "mindspore.json"}, "2026-12-03")
    return built


def test_torch_npu_2_9_0_wheels_are_manylinux_2_28_for_3_10_to_3_12() -> None:
    build = load_wheel_index().build("torch_npu", "2.9.0")
    assert build is not None
    for arch in ("x86_64", "aarch64"):
        assert build.pythons(arch) == ["3.10", "3.11", "3.12"]
        assert build.platforms(arch, "3.11") == [f"manylinux_2_28_{arch}"]
    # 2.9.0.post2 added cp313 (the recorded index list has it).
    post2 = load_wheel_index().build("torch_npu", "2.9.0.post2")
    assert post2 is not None and "3.13" in post2.pythons("x86_64")


def test_the_index_and_the_catalogue_agree_on_the_2_9_0_digest() -> None:
    name = "torch_npu-2.9.0-cp311-cp311-manylinux_2_28_x86_64.whl"
    recorded = json.loads((RECORDED / "torch-npu.json").read_text())
    pypi = next(u for u in recorded["releases"]["2.9.0"] if u["filename"] == name)
    catalogued = load_catalogue().get(name)
    assert catalogued is not None and catalogued.sha256 == pypi["digests"]["sha256"]
    found = load_wheel_index().file(name)
    assert found is not None and found.sha256 == catalogued.sha256
    assert found.urls[0] == pypi_url(pypi["url"], pypi["digests"]["blake2b_256"], name)
    assert any("ascend-repo.obs" in url for url in found.urls)


def pypi_url(_relative: str, blake2b: str, name: str) -> str:
    # files.pythonhosted.org paths are the blake2b digest split 2/2/rest (warehouse's layout).
    return (f"https://files.pythonhosted.org/packages/{blake2b[:2]}/{blake2b[2:4]}/"
            f"{blake2b[4:]}/{name}")


def test_refresh_from_recorded_data_reproduces_the_shipped_releases(
        refreshed: dict[str, object]) -> None:
    shipped = json.loads((Path(__file__).parents[2] / "ascend_env" / "data"
                          / "wheel_index.json").read_text())
    builds = refreshed["builds"]
    assert isinstance(builds, dict)
    for version in ("2.8.0", "2.9.0", "2.9.0.post2", "2.10.0"):
        assert builds["torch_npu"][version] == shipped["builds"]["torch_npu"][version], version
    assert builds["mindspore"]["2.7.2"] == shipped["builds"]["mindspore"]["2.7.2"]
    # torch_npu 2.9.0 ships beside torch 2.9.0+cpu (the vendor manifest's torch wheel).
    assert builds["torch_npu"]["2.9.0"]["torch"] == "2.9.0+cpu"


def test_refresh_script_writes_a_file(tmp_path: Path) -> None:
    out = tmp_path / "index.json"
    assert main(["--pypi", f"torch-npu={RECORDED / 'torch-npu.json'}", "--pypi",
                 f"mindspore={RECORDED / 'mindspore.json'}", "--out", str(out)]) == 0
    assert json.loads(out.read_text())["schema"] == "ascend-env/wheel-index/v1"


def test_refresh_script_refuses_a_bad_argument(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as raised:
        main(["--pypi", "torch-npu", "--out", str(tmp_path / "x.json")])
    assert raised.value.code == 2
    assert main(["--pypi", f"torch-npu={tmp_path / 'absent.json'}",
                 "--out", str(tmp_path / "x.json")]) == 1


def test_a_python_without_a_wheel_is_invalid_and_lists_the_alternatives() -> None:
    problems = [p for p in check_spec(spec("3.13")) if p.severity == "error"]
    assert [(p.path, p.alternatives) for p in problems] == [
        ("python.version", ["3.10", "3.11", "3.12"])]
    assert "torch_npu 2.9.0 has no wheel for Python 3.13 on x86_64" in problems[0].message
    assert check_wheels(spec("3.11")) == []
    assert check_wheels(spec("3.13", torch_npu="2.9.0.post2")) == []


def test_pip_platforms_and_the_torch_build() -> None:
    assert pip_platforms(spec("3.11")) == ["manylinux_2_28_x86_64", "manylinux2014_x86_64"]
    assert pip_platforms(spec("3.11", arch="aarch64")) == ["manylinux_2_28_aarch64",
                                                           "manylinux2014_aarch64"]
    assert torch_pin(spec("3.11")) == "2.9.0+cpu"


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
@pytest.mark.parametrize("python", ["3.10", "3.11", "3.12", "3.13"])
def test_the_pip_line_platforms_accept_exactly_the_recorded_real_wheels(arch: str,
                                                                      python: str) -> None:
    """What `pip download --python-version X --platform ...` would accept (its tags, as
    packaging computes them for CPython), against the file names pypi.org lists."""
    recorded = json.loads((RECORDED / "torch-npu.json").read_text())["releases"]["2.9.0"]
    the_spec = spec(python, arch)
    version = tuple(int(p) for p in python.split("."))
    accepted = set(cpython_tags(version, platforms=pip_platforms(the_spec)))
    fitting = [u["filename"] for u in recorded
               if accepted & parse_wheel_filename(u["filename"])[3]]
    if python == "3.13":
        assert fitting == []
        assert check_wheels(the_spec) != []
    else:
        assert fitting == [f"torch_npu-2.9.0-cp{version[0]}{version[1]}-cp{version[0]}"
                           f"{version[1]}-manylinux_2_28_{arch}.whl"]
        # Without the manylinux_2_28 tag (the old printed line) nothing fits.
        old = set(cpython_tags(version, platforms=[f"manylinux2014_{arch}"]))
        assert not [u for u in recorded if old & parse_wheel_filename(u["filename"])[3]]


def test_plan_refuses_a_python_without_a_wheel_and_names_the_real_files(tmp_path: Path) -> None:
    path = tmp_path / "spec.json"
    path.write_text(spec("3.13").model_dump_json())
    refused = invoke("plan", "--spec", str(path))
    assert refused.code == 1, refused
    assert "torch_npu 2.9.0 has no wheel for Python 3.13 on x86_64" in refused.err + refused.out
    assert "3.10, 3.11, 3.12" in refused.err + refused.out
    path.write_text(spec("3.12").model_dump_json())
    done = invoke("plan", "--spec", str(path), "--json")
    assert done.code == 0, done
    files = {item["component"]: item["file"] for item in json.loads(done.out)["items"]}
    # The real wheels, as the index and the vendor manifest name them.
    assert files["torch_npu"] == "torch_npu-2.9.0-cp312-cp312-manylinux_2_28_x86_64.whl"
    assert files["torch"] == "torch-2.9.0+cpu-cp312-cp312-manylinux_2_28_x86_64.whl"
    assert load_wheel_index().file(files["torch_npu"]) is not None
