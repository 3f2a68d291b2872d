"""The command line end to end: outputs, JSON schemas, exit codes, no tracebacks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ascend_env import __version__
from tests.cli_invoke import invoke


def test_version() -> None:
    result = invoke("--version")
    assert result.code == 0
    assert result.out.strip() == f"ascend-env {__version__}"


def test_version_and_help_import_no_heavy_module() -> None:
    probe = (
        "import sys\n"
        "from ascend_env.cli.app import main\n"
        "for argv in (['ascend-env', '--version'], ['ascend-env', '--help']):\n"
        "    sys.argv = argv\n"
        "    try:\n        main()\n    except SystemExit:\n        pass\n"
        "heavy = {'ansible', 'pytest', 'torch', 'testinfra', 'mindspore'}\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & heavy))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_the_console_script_flushes_and_keeps_exit_codes(tmp_path: Path) -> None:
    """Through `run` into a pipe, not a terminal: what was printed arrives and each exit code
    is the command's."""
    buffered = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}

    def script(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "ascend_env", *args], capture_output=True,
                              text=True, check=False, cwd=tmp_path, env=buffered)

    shown = script("profiles", "show", "910b", "--json")
    assert shown.returncode == 0
    assert json.loads(shown.stdout)["spec"]["name"] == "910b"
    capture = tmp_path / "here.json"
    assert script("collect", "-o", str(capture)).returncode == 0
    judged = script("doctor", "--from", str(capture), "--json")  # print(), not click.echo
    assert judged.returncode in (0, 1)
    assert json.loads(judged.stdout)["schema"] == "ascend-env/report/v1"
    missing = script("doctor", "--from", str(tmp_path / "nope.json"))
    assert missing.returncode == 2 and "nope.json" in missing.stderr
    assert "Traceback" not in missing.stderr
    assert script("no-such-command").returncode == 2


def test_a_reader_gone_early_is_no_traceback_and_keeps_the_exit_code() -> None:
    """`ascend-env ... | head -c0`: stdout's last flush meets a closed pipe and says nothing."""
    buffered = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([sys.executable, "-m", "ascend_env", "profiles", "list", "--json"],
                              stdout=write, stderr=subprocess.PIPE, text=True, check=False,
                              env=buffered)
    finally:
        os.close(write)
    assert done.stderr == ""
    assert done.returncode == 0


def test_profiles_list_json() -> None:
    result = invoke("profiles", "list", "--json")
    assert result.code == 0
    document = json.loads(result.out)
    assert document["schema"] == "ascend-env/profiles/v1"
    assert {p["name"] for p in document["profiles"]} >= {"910b", "a3", "310p", "910"}


def test_profiles_show_json_yaml_and_arch() -> None:
    shown = json.loads(invoke("profiles", "show", "910b", "--json", "--arch", "x86_64").out)
    assert shown["schema"] == "ascend-env/spec/v1"
    assert shown["spec"]["hardware"]["arch"] == "x86_64"
    as_yaml = invoke("profiles", "show", "910b", "--yaml")
    assert "torch_npu: 2.9.0" in as_yaml.out
    assert invoke("profiles", "show", "910b").code == 0


def test_unknown_profile_is_a_message_and_exit_2() -> None:
    result = invoke("profiles", "show", "nope")
    assert result.code == 2
    assert "unknown profile 'nope'" in result.err
    assert "Traceback" not in result.err


def test_bad_arch_is_usage_error() -> None:
    result = invoke("profiles", "show", "910b", "--arch", "riscv64")
    assert result.code == 2


def test_spec_validate_valid_file(tmp_path: Path) -> None:
    path = tmp_path / "ok.yaml"
    path.write_text("extends: 910b\nname: lab-a\n")
    result = invoke("spec", "validate", str(path), "--json")
    assert result.code == 0, result.out
    document = json.loads(result.out)
    assert document["schema"] == "ascend-env/validation/v1"
    assert document["valid"] is True
    assert document["spec"] == "lab-a"


def test_spec_validate_lists_every_problem(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("extends: 910b\ndriver: {version: '24.1.0'}\n"
                    "frameworks: {torch: {version: '2.1.0', torch_npu: '2.1.0.post10'}}\n"
                    "python: {version: '3.9'}\n")
    result = invoke("spec", "validate", str(path))
    assert result.code == 1
    for fragment in ("driver.version", "frameworks.torch.torch_npu", "24.1.0", "2.1.0.post10"):
        assert fragment in result.out
    # The matrix row in brackets is text, not terminal markup: it must be printed.
    assert "[torch_npu 2.1.0.post10 <-> CANN 8.0.0 (PT-COMPAT)]" in result.out


def test_spec_validate_unreadable_file_exit_2(tmp_path: Path) -> None:
    result = invoke("spec", "validate", str(tmp_path / "absent.yaml"))
    assert result.code == 2
    assert "cannot read spec file" in result.err


def test_spec_schema_is_json_schema() -> None:
    result = invoke("spec", "schema")
    schema = json.loads(result.out)
    assert schema["title"] == "EnvSpec"
    assert "hardware" in schema["required"]


def test_matrix_filters() -> None:
    document = json.loads(invoke("matrix", "--cann", "8.5.0", "--json").out)
    assert document["schema"] == "ascend-env/matrix/v1"
    assert {row["torch_npu"] for row in document["torch"]} >= {"2.9.0", "2.6.0.post5"}
    assert {row["cann"] for row in document["torch"]} == {"8.5.0"}
    only_ms = json.loads(invoke("matrix", "--framework", "mindspore", "--json").out)
    assert only_ms["torch"] == []
    assert only_ms["mindspore"]
    assert invoke("matrix").code == 0


@pytest.mark.parametrize("value", ["8.4.0", "eight"])
def test_matrix_bad_cann_is_usage_error(value: str) -> None:
    result = invoke("matrix", "--cann", value)
    assert result.code == 2
    assert "--cann" in result.err


def test_plan_json_and_text() -> None:
    document = json.loads(invoke("plan", "--profile", "910b", "--json").out)
    assert document["schema"] == "ascend-env/plan/v1"
    assert document["items"][0]["component"] == "driver"
    text = invoke("plan", "--profile", "910b")
    assert text.code == 0
    assert "Ascend-cann-910b-ops_8.5.0_linux-aarch64.run" in text.out


def test_plan_needs_exactly_one_source(tmp_path: Path) -> None:
    assert invoke("plan").code == 2
    bad = tmp_path / "bad.yaml"
    bad.write_text("extends: 910b\ndriver: {version: '23.0.3'}\n")
    result = invoke("plan", "--spec", str(bad))
    assert result.code == 1
    assert "driver.version" in result.err
