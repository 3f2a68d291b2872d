"""EnvSpec loading: YAML, `extends`, shape errors with key paths, profiles."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ascend_env.core.errors import SpecError, UsageError
from ascend_env.spec.envspec import EnvSpec, build_spec, load_spec, profile_names, read_document


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    return path


def problems_of(text: str, tmp_path: Path) -> dict[str, str]:
    path = write(tmp_path, text)
    with pytest.raises(SpecError) as caught:
        build_spec(read_document(path), str(path))
    return {p.path: p.message for p in caught.value.problems}


def test_every_profile_loads_and_names_itself() -> None:
    assert set(profile_names()) >= {"910b", "a3", "310p", "910"}
    for name in profile_names():
        spec = load_spec(profile=name)
        assert spec.name == name


def test_extends_overrides_one_key_and_keeps_the_rest(tmp_path: Path) -> None:
    path = write(tmp_path, "extends: 910b\nname: lab\npython: {version: '3.10'}\n")
    spec = load_spec(path=path)
    base = load_spec(profile="910b")
    assert spec.name == "lab"
    assert spec.python.version == "3.10"
    assert spec.cann.version == base.cann.version
    assert spec.frameworks == base.frameworks


def test_arch_option_overrides_the_profile() -> None:
    assert load_spec(profile="910b", arch="x86_64").hardware.arch == "x86_64"
    assert load_spec(profile="910b").hardware.arch == "aarch64"


def test_unknown_keys_are_errors_with_their_path(tmp_path: Path) -> None:
    found = problems_of("extends: 910b\ncann: {versoin: '8.5.0'}\nhardwre: {}\n", tmp_path)
    assert "cann.versoin" in found
    assert "unknown key" in found["cann.versoin"]
    assert "hardwre" in found


def test_all_shape_errors_are_reported_at_once(tmp_path: Path) -> None:
    found = problems_of(
        "name: x\nhardware: {chip: 920, devices: zero, arch: riscv}\ndriver: {version: 'abc'}\n",
        tmp_path)
    assert {"hardware.chip", "hardware.devices", "hardware.arch", "driver.version",
            "cann"} <= set(found)
    assert "required key is missing" in found["cann"]
    assert "abc" in found["driver.version"]


@pytest.mark.parametrize(("text", "fragment"), [
    ("name: [unclosed\n", "not valid YAML at line"),
    ("- a\n- b\n", "must be a YAML mapping"),
    ("", "this file is empty"),
])
def test_malformed_files_say_what_is_wrong(tmp_path: Path, text: str, fragment: str) -> None:
    with pytest.raises(SpecError) as caught:
        read_document(write(tmp_path, text))
    assert fragment in str(caught.value)


def test_unknown_profile_in_extends_lists_the_profiles(tmp_path: Path) -> None:
    path = write(tmp_path, "extends: 999x\n")
    with pytest.raises(SpecError) as caught:
        load_spec(path=path)
    problem = caught.value.problems[0]
    assert problem.path == "extends"
    assert "910b" in problem.alternatives


def test_unreadable_file_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        read_document(tmp_path / "missing.yaml")


def test_profile_and_spec_are_exclusive(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        load_spec()
    with pytest.raises(UsageError):
        load_spec(profile="910b", path=tmp_path / "x.yaml")
    with pytest.raises(UsageError, match="available profiles"):
        load_spec(profile="nope")


def test_version_spelling_survives_a_round_trip() -> None:
    spec = load_spec(profile="910b")
    dumped = spec.model_dump(mode="json")
    assert dumped["cann"]["version"] == "8.5.0"
    assert EnvSpec.model_validate(dumped).digest() == spec.digest()


def test_digest_depends_on_content_only(tmp_path: Path) -> None:
    a = load_spec(profile="910b")
    reordered = yaml.safe_dump(a.model_dump(mode="json"), sort_keys=True)
    b = load_spec(path=write(tmp_path, reordered))
    assert a.digest() == b.digest()
    c = load_spec(path=write(tmp_path, "extends: 910b\npython: {version: '3.10'}\n"))
    assert c.digest() != a.digest()


def test_schema_names_every_top_level_key() -> None:
    schema = EnvSpec.model_json_schema()
    assert {"name", "hardware", "driver", "firmware", "cann", "python", "frameworks", "install",
            "threads", "selinux", "smoke", "os"} <= set(schema["properties"])
    assert schema["additionalProperties"] is False
