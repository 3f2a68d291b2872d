"""`pip install .` (not editable) into a fresh venv gives a working `ascend-env` anywhere."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def quick_start_commands() -> list[str]:
    """The shell lines of the README's Quick start block, comments left out."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## Quick start", 1)[1]
    block = section.split("```sh", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip() and not line.startswith("#")]


def test_quick_start_is_two_commands() -> None:
    commands = quick_start_commands()
    assert len(commands) == 2
    # The main job on a simulated host (tests/sim_tests/test_first_run.py runs it).
    assert commands[0] == "bash scripts/first_run.sh"
    assert commands[1] == "bash scripts/test.sh"  # what .ci/run runs
    assert "bash scripts/test.sh" in (REPO / ".ci" / "run").read_text(encoding="utf-8")


def copy_of_tree(root: Path) -> Path:
    """This checkout's files (tracked, and new ones git does not ignore) copied to `root`."""
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           cwd=REPO, capture_output=True, check=True).stdout.split(b"\0")
    for name in filter(None, files):
        source = REPO / name.decode()
        if source.is_file():
            (root / name.decode()).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, root / name.decode())
    return root


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`pip install .` into a fresh venv in a copy of this tree (what first_run.sh does first,
    and what the README says to run where the simulated host cannot)."""
    root = copy_of_tree(tmp_path_factory.mktemp("quickstart"))
    done = subprocess.run(["bash", "-c", "python3 -m venv .venv && .venv/bin/pip install . && "
                           ".venv/bin/ascend-env plan --profile 910b"], cwd=root,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    assert "toolkit" in done.stdout  # the plan names the CANN toolkit it would install
    return root / ".venv" / "bin"


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
