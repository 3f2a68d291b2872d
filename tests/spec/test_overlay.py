"""Site overlays of the matrix (spec/overlay.py): a release the vendor shipped after this
ascend-env is added by a file, validated like the shipped data, and `spec validate`, `plan` and
`matrix` use it at once; a bad overlay is refused naming its file (exit 2), never half-read."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from ascend_env.core.errors import UsageError
from ascend_env.core.versions import parse
from ascend_env.spec.matrix import load_matrix
from ascend_env.spec.overlay import DEFAULT_DIR, ENV_VAR, overlay_paths
from tests.cli_invoke import invoke

# What a site writes when its vendor ships CANN 9.3.0 on HDK 26.3.RC1 (whose files carry
# 26.3.rc1.1) with torch_npu 2.15.0: none of these exist in ascend-env's data.
SITE = {
    "schema": "ascend-env/matrix-overlay/v1",
    "sources": {"SITE-RN930": {"title": "CANN 9.3.0 release notes as our vendor sent them",
                               "url": "https://example.org/cann-9.3.0-release-notes"}},
    "cann": [{"cann": "9.3.0", "hdk": "26.3.RC1", "hdk_compatible": ["26.1", "26.3"],
              "python": "3.9-3.13", "sources": ["SITE-RN930"]}],
    "hdk_releases": [{"release": "26.3.RC1", "inner": "V100R001C31", "sources": ["SITE-RN930"]}],
    "hdk_files": [{"release": "26.3.RC1", "files": ["26.3.rc1.1"], "sources": ["SITE-RN930"]}],
    "torch": [{"cann": "9.3.0", "torch_npu": "2.15.0", "torch": "2.15.0", "python": "3.10-3.13",
               "sources": ["SITE-RN930"]}],
    "torch_python": [{"torch": ["2.15.0"], "python": "3.10-3.13", "sources": ["SITE-RN930"]}],
}
SPEC = {"extends": "910b", "name": "site-9.3", "cann": {"version": "9.3.0"},
        "driver": {"version": "26.3.RC1"}, "python": {"version": "3.11"},
        "frameworks": {"torch": {"version": "2.15.0", "torch_npu": "2.15.0"},
                       "mindspore": None}}


@pytest.fixture
def overlay_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "matrix.d"
    folder.mkdir()
    monkeypatch.setenv(ENV_VAR, str(folder))
    return folder


def write(folder: Path, name: str, document: Any) -> Path:
    path = folder / name
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


def validate(tmp_path: Path, spec: dict[str, Any] = SPEC) -> tuple[int, list[dict[str, Any]]]:
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    result = invoke("spec", "validate", str(path), "--json")
    assert result.code in (0, 1), result.out + result.err
    return result.code, json.loads(result.out)["problems"]


def unknown_warnings(problems: list[dict[str, Any]]) -> list[str]:
    return [p["path"] for p in problems if "knows" in p["message"]]


def test_without_the_overlay_the_release_warns_and_with_it_is_known(
        tmp_path: Path, overlay_dir: Path) -> None:
    code, problems = validate(tmp_path)
    assert code == 0  # unknown is not wrong
    assert set(unknown_warnings(problems)) >= {"cann.version", "driver.version",
                                               "frameworks.torch.torch_npu"}
    write(overlay_dir, "10-cann-9.3.yaml", SITE)
    code, problems = validate(tmp_path)
    assert code == 0 and not unknown_warnings(problems), problems
    assert not problems, problems  # every pairing is now sourced


def test_overlay_rows_are_cited_as_the_sites(overlay_dir: Path) -> None:
    path = write(overlay_dir, "site.yaml", SITE)
    matrix = load_matrix()
    row = matrix.cann_row(parse("9.3.0"))
    assert row is not None and row.sources == ["SITE-RN930"]
    assert matrix.sources["SITE-RN930"].origin == str(path)
    assert f"site overlay {path}" in matrix.cite(row.sources)
    assert matrix.hdk().file_version(parse("26.3.RC1")) == "26.3.rc1.1"


def test_plan_installs_the_overlays_file_version(tmp_path: Path, overlay_dir: Path) -> None:
    write(overlay_dir, "site.yaml", SITE)
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(SPEC))
    result = invoke("plan", "--spec", str(spec), "--arch", "aarch64", "--json")
    assert result.code == 0, result.out + result.err
    driver = next(i for i in json.loads(result.out)["items"] if i["component"] == "driver")
    assert driver["file"] == "Ascend-hdk-910b-npu-driver_26.3.rc1.1_linux-aarch64.run", driver


def test_an_overlay_row_replaces_the_shipped_one(tmp_path: Path, overlay_dir: Path) -> None:
    # A site that has the vendor's word on 8.3.RC2's HDK (unpublished in ascend-env's sources).
    write(overlay_dir, "83rc2.yaml", {
        "schema": "ascend-env/matrix-overlay/v1",
        "sources": {"SITE-83RC2": {"title": "vendor mail", "url": "https://example.org/m"}},
        "cann": [{"cann": "8.3.RC2", "hdk": "25.3.RC1", "sources": ["SITE-83RC2"]}]})
    rows = [r for r in load_matrix().cann if r.cann.raw == "8.3.RC2"]
    assert len(rows) == 1 and rows[0].hdk is not None and rows[0].hdk.raw == "25.3.RC1"


def test_files_apply_in_name_order_and_the_env_var_may_list_several(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = tmp_path / "a", tmp_path / "b.yaml"
    first.mkdir()
    write(first, "20-x.yaml", SITE)
    write(first, "10-y.yaml", {"schema": "ascend-env/matrix-overlay/v1"})
    (first / ".hidden.yaml").write_text("not: [yaml")
    second.write_text(yaml.safe_dump({"schema": "ascend-env/matrix-overlay/v1"}))
    monkeypatch.setenv(ENV_VAR, f"{first}:{second}")
    assert overlay_paths() == [first / "10-y.yaml", first / "20-x.yaml", second]
    monkeypatch.setenv(ENV_VAR, "")
    assert overlay_paths() == []


def test_the_default_folder_is_etc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert Path("/etc/ascend-env/matrix.d") == DEFAULT_DIR
    if not DEFAULT_DIR.exists():
        assert overlay_paths() == []


BAD: list[tuple[str, Any, str]] = [
    ("no schema", {"cann": []}, "schema must be"),
    ("not a mapping", ["a"], "expected a mapping"),
    ("unknown key", {"schema": "ascend-env/matrix-overlay/v1", "pairings": {}}, "unknown key"),
    ("row without a source",
     {"schema": "ascend-env/matrix-overlay/v1", "cann": [{"cann": "9.3.0", "hdk": None,
                                                         "sources": []}]}, "names no source"),
    ("undefined label",
     {"schema": "ascend-env/matrix-overlay/v1", "cann": [{"cann": "9.3.0", "hdk": None,
                                                         "sources": ["NOPE"]}]}, "NOPE"),
    ("no vendor form",
     {"schema": "ascend-env/matrix-overlay/v1", "sources": SITE["sources"],
      "cann": [{"cann": "nine", "hdk": None, "sources": ["SITE-RN930"]}]}, "cann"),
    ("a shipped label redefined",
     {"schema": "ascend-env/matrix-overlay/v1",
      "sources": {"PT-COMPAT": {"title": "mine", "url": "https://example.org"}}}, "PT-COMPAT"),
    ("unknown row field",
     {"schema": "ascend-env/matrix-overlay/v1", "sources": SITE["sources"],
      "cann": [{"cann": "9.3.0", "hdk": None, "sources": ["SITE-RN930"], "hdkk": "1"}]},
     "hdkk"),
    ("rows not a list",
     {"schema": "ascend-env/matrix-overlay/v1", "cann": {"cann": "9.3.0"}}, "list of rows"),
]


@pytest.mark.parametrize(("name", "document", "said"), BAD, ids=[b[0] for b in BAD])
def test_a_bad_overlay_is_refused_naming_its_file(name: str, document: Any, said: str,
                                                  tmp_path: Path, overlay_dir: Path) -> None:
    path = write(overlay_dir, "bad.yaml", document)
    with pytest.raises(UsageError) as raised:
        load_matrix()
    assert str(path) in str(raised.value) and said in str(raised.value), str(raised.value)
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(SPEC))
    result = invoke("spec", "validate", str(spec))
    assert result.code == 2, result.out + result.err
    assert str(path) in result.err + result.out and "Traceback" not in result.err


def test_an_overlay_that_is_not_a_regular_file_is_refused_at_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    monkeypatch.setenv(ENV_VAR, str(fifo))
    with pytest.raises(UsageError, match="FIFO"):
        load_matrix()


def test_a_missing_file_named_in_the_env_var_is_an_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "gone.yaml"))
    with pytest.raises(UsageError, match=r"gone\.yaml"):
        load_matrix()


def test_an_alias_bomb_overlay_is_refused_before_anything_walks_it(overlay_dir: Path) -> None:
    lines = ['a0: &a0 ["x","x","x","x","x","x","x","x","x","x"]']
    lines += [f"a{i}: &a{i} [{', '.join(['*a' + str(i - 1)] * 10)}]" for i in range(1, 9)]
    (overlay_dir / "bomb.yaml").write_text("\n".join(lines) + "\n")
    with pytest.raises(UsageError) as raised:
        load_matrix()
    assert "bomb.yaml" in str(raised.value)


def test_a_folder_of_too_many_overlays_is_refused(overlay_dir: Path) -> None:
    for index in range(257):
        (overlay_dir / f"{index:03}.yaml").write_text("schema: ascend-env/matrix-overlay/v1\n")
    with pytest.raises(UsageError, match="at most 256"):
        load_matrix()


def test_broken_yaml_in_an_overlay_names_the_file_and_line(overlay_dir: Path,
                                                           tmp_path: Path) -> None:
    path = overlay_dir / "broken.yaml"
    path.write_text("schema: ascend-env/matrix-overlay/v1\ncann: [\n")
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(SPEC))
    result = invoke("spec", "validate", str(spec))
    assert result.code == 2 and str(path) in result.err + result.out, result.err
    assert "Traceback" not in result.err
