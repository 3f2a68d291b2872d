"""`pip install .` (not editable) into a fresh venv gives a working `ascend-env` anywhere."""

from __future__ import annotations

import json
import subprocess
import sys
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with ascend-env installed from a wheel built from this tree."""
    root = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w",
                    str(root / "dist"), str(REPO)], check=True)
    wheel = next((root / "dist").glob("ascend_env-*.whl"))
    venv.EnvBuilder(with_pip=True).create(root / "venv")
    python = root / "venv" / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", str(wheel)], check=True)
    return root / "venv" / "bin"


def run(bin_dir: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(bin_dir / "ascend-env"), *args], capture_output=True, text=True,
                          cwd=cwd, check=False)


@pytest.mark.slow
def test_installed_wheel_works_from_another_directory(installed: Path, tmp_path: Path) -> None:
    assert run(installed, "--version", cwd=tmp_path).returncode == 0
    profiles = json.loads(run(installed, "profiles", "list", "--json", cwd=tmp_path).stdout)
    assert {p["name"] for p in profiles["profiles"]} >= {"910b", "a3", "310p", "910"}
    plan = run(installed, "plan", "--profile", "910b", "--json", cwd=tmp_path)
    assert plan.returncode == 0, plan.stderr
    assert json.loads(plan.stdout)["items"]
    bad = tmp_path / "bad.yaml"
    bad.write_text("extends: 910b\ncann: {version: 8.5.0, packges: []}\n")
    result = run(installed, "spec", "validate", str(bad), cwd=tmp_path)
    assert result.returncode == 1
    assert "cann.packges" in result.stdout


@pytest.mark.slow
def test_installed_wheel_ships_playbooks_checks_and_containers(installed: Path,
                                                                tmp_path: Path) -> None:
    probe = ("from ascend_env.core.resources import shipped_dir\n"
             "print('\\n'.join(str(shipped_dir(n)) for n in "
             "('playbooks', 'checks', 'containers')))")
    done = subprocess.run([str(installed / "python"), "-c", probe], capture_output=True,
                          text=True, cwd=tmp_path, check=True)
    for line in done.stdout.split():
        assert "site-packages/ascend_env/_shipped/" in line
        assert Path(line).is_dir()
