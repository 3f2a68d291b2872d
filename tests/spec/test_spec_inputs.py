"""Hostile spec files and values through the real command line: exit 2 for what cannot be
read, 1 with the key path for a spec that was read and is wrong; never a traceback or a hang."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ascend_env.spec.catalogue import CatalogueError, load_overlay
from tests.cli_invoke import invoke
from tests.core.test_inputs import BILLION_LAUGHS


def spec_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    return path


def test_dev_zero_a_fifo_and_a_directory_exit_2_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path, kind in (("/dev/zero", "character device"), (str(fifo), "FIFO"),
                       (str(tmp_path), "directory")):
        for args in (["spec", "validate", path], ["plan", "--spec", path]):
            result = invoke(*args)
            assert result.code == 2, (args, result)
            assert kind in result.err and "Traceback" not in result.err


def test_a_100_mb_spec_is_refused_by_its_size(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    with path.open("wb") as out:  # sparse: the size is what is judged, not the content
        out.truncate(100 * 1024 * 1024)
    result = invoke("spec", "validate", str(path))
    assert result.code == 2 and "104857600 bytes, more than" in result.err


def test_a_yaml_bomb_and_deep_nesting_exit_2(tmp_path: Path) -> None:
    for text, words in ((BILLION_LAUGHS, "alias bomb"),
                        ("name: " + "[" * 5000 + "]" * 5000, "nested deeper than")):
        result = invoke("spec", "validate", str(spec_file(tmp_path, text)))
        assert result.code == 2 and words in result.err, result


def test_duplicate_keys_are_a_spec_error(tmp_path: Path) -> None:
    result = invoke("spec", "validate", str(spec_file(
        tmp_path, "extends: 910b\nname: a\nname: b\n")))
    assert result.code == 1
    assert "duplicate key 'name'" in result.out and "line 3" in result.out


@pytest.mark.parametrize(("body", "key", "words"), [
    ("python: {venv: $(reboot)}", "python.venv", "absolute path"),
    ("python: {venv: '/opt/$(reboot)'}", "python.venv", "which a shell would read"),
    ('install: {path: "/usr/local/Ascend\\nreboot"}', "install.path", "control character"),
    ("install: {path: '/opt/a;reboot'}", "install.path", "which a shell would read"),
    ("install: {path: '/opt/a b'}", "install.path", "which a shell would read"),
    ("install: {path: '/usr/../etc'}", "install.path", "'..'"),
    ("install: {path: relative/path}", "install.path", "absolute path"),
    ("install: {user: '-oProxyCommand=x'}", "install.user", "pattern"),
    ("install: {user: 'a$(id)'}", "install.user", "pattern"),
    ("install: {user: " + "a" * 33 + "}", "install.user", "at most 32"),
    ("selinux: {container_paths: ['/data', '`reboot`']}", "selinux.container_paths",
     "absolute path"),
    ("hardware: {chip: 910b, devices: true}", "hardware.devices", "valid integer"),
    ("threads: {aicpu_per_core: true}", "threads.aicpu_per_core", "valid integer"),
    ("threads: {omp_num_threads: 99999999999}", "threads.omp_num_threads", "less than"),
    ("threads: {omp_num_threads: 0}", "threads.omp_num_threads", "greater than"),
    ("smoke: {min_busbw_gbps: .inf}", "smoke.min_busbw_gbps", "finite"),
    ("smoke: {min_tflops_fraction: .nan}", "smoke.min_tflops_fraction", "finite"),
])
def test_values_that_reach_a_host_are_checked(tmp_path: Path, body: str, key: str,
                                              words: str) -> None:
    result = invoke("spec", "validate", "--json", str(spec_file(
        tmp_path, f"extends: 910b\nname: hostile\n{body}\n")))
    assert result.code == 1, result
    problems = {p["path"]: p["message"] for p in json.loads(result.out)["problems"]}
    assert key in problems, problems
    assert words in problems[key]


def test_ordinary_host_values_stay_valid(tmp_path: Path) -> None:
    result = invoke("spec", "validate", str(spec_file(tmp_path, (
        "extends: 910b\nname: fine\ninstall: {path: /opt/Ascend-8.5.0_x, user: hw_ai.user}\n"
        "python: {venv: /opt/envs/torch+2.9}\nselinux: {container_paths: [/data/models]}\n"))))
    assert result.code == 0, result


def test_catalogue_overlays_are_bounded_and_their_shape_named(tmp_path: Path) -> None:
    with pytest.raises(CatalogueError, match="character device"):
        load_overlay(Path("/dev/zero"))
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(CatalogueError, match="nested too deeply"):
        load_overlay(deep)
    for document, words in (({"components": {"A": [1]}}, "components.A: a mapping"),
                            ({"components": {"A": {"1": {"files": "x"}}}}, "files: a list"),
                            ({"components": {"A": {"1": {"files": [3]}}}}, "an object")):
        path = tmp_path / "overlay.json"
        path.write_text(json.dumps(document))
        with pytest.raises(CatalogueError, match=words):
            load_overlay(path)
