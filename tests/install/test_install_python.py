"""`install`'s python role on simulated hosts: the frameworks' venv, offline from the repository.

Real Ansible, real ssh, real `python3 -m venv` and real pip on the host's Debian Python. The
wheels are stand-ins (tests/wheels.py): torch 2.9.0, torch_npu 2.9.0 and CANN's
Python dependencies, with declared dependencies of their own so that the controller's closure
check (ascend_env/repository/wheelhouse.py) and pip's `--no-index` install are both exercised. They
carry the pinned names and versions, not the real code: nothing here trains.
"""

from __future__ import annotations

import json
import platform
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ascend_env.install.provision import InstallOptions, InstallSummary
from ascend_env.repository.fetch import Source, fetch
from ascend_env.repository.installers import RepoError
from ascend_env.repository.wheelhouse import CANN_PYTHON_DEPS, WHEELS_DIR
from ascend_env.spec.envspec import EnvSpec, build_spec
from ascend_env.spec.plan import Plan, resolve
from ascend_env.workflows.install_checked import install_checked
from tests.cli_invoke import invoke
from tests.sim import provision
from tests.sim.fixtures import FleetFactory, SimFleet
from tests.sim.fleet import Versions
from tests.wheels import catalogue_with_frameworks, fill_wheels

pytestmark = [pytest.mark.sim, pytest.mark.slow]

ARCH = platform.machine()
TORCH = "2.9.0"
VENV = "/opt/ascend-env/venv"


def spec() -> EnvSpec:
    return build_spec({"extends": "910b", "name": "sim-python", "os": {"family": "debian",
                       "version": "12"}, "hardware": {"arch": ARCH, "devices": 8},
                       "python": {"version": "3.11", "venv": VENV},
                       "frameworks": {"torch": {"version": TORCH, "torch_npu": TORCH},
                                      "mindspore": None}}, "test")


@pytest.fixture(scope="module")
def python_repo(tmp_path_factory: pytest.TempPathFactory, sim_fleet_factory: FleetFactory
                ) -> tuple[Path, Plan]:
    """A fetched repository: the 8.5.0 stack, the framework wheels, and wheels/ holding the
    closure of CANN's dependencies and the frameworks' own."""
    del sim_fleet_factory  # only for its require_sim()
    root = tmp_path_factory.mktemp("python-repo")
    vendor = root / "vendor"
    shutil.copytree(provision.cached_repo("910b", Versions(cann="8.5.0",
                                                          hdk="25.5.0"), ARCH), vendor)
    plan = resolve(spec(), catalogue_with_frameworks(vendor, spec()))
    repo = root / "repo"
    result = fetch(plan, repo, Source(from_dir=vendor))
    assert result.complete, result
    fill_wheels(repo)
    return repo, plan


@pytest.fixture
def host(sim_private_fleet: FleetFactory) -> Iterator[SimFleet]:
    yield sim_private_fleet(hosts=1, state="provisioned")


def run(fleet: SimFleet, repo: Path, plan: Plan, tmp_path: Path, **options: Any
        ) -> InstallSummary:
    return install_checked(spec(), plan, InstallOptions(
        repo=repo, inventory=fleet.inventory, components=["python", "env"],
        log_dir=tmp_path / "logs", **options))


def venv_distributions(fleet: SimFleet) -> dict[str, str]:
    done = fleet.ssh(fleet.hosts[0], f"{VENV}/bin/python -m pip list --format json "
                                     "--disable-pip-version-check")
    assert done.returncode == 0, done.stderr
    return {d["name"].lower().replace("_", "-"): d["version"] for d in json.loads(done.stdout)}


def test_frameworks_install_offline_then_nothing_changes(host: SimFleet, python_repo: tuple[
        Path, Plan], tmp_path: Path) -> None:
    repo, plan = python_repo
    first = run(host, repo, plan, tmp_path, offline=True)
    assert [(h.status, h.failed) for h in first.hosts] == [("changed", 0)], first
    assert first.notes == []
    # The post-install doctor judged the venv too: the frameworks' pairing and CANN's deps.
    assert first.hosts[0].doctor is not None and first.hosts[0].doctor["failed"] == []
    have = venv_distributions(host)
    assert have["torch"] == TORCH and have["torch-npu"] == TORCH
    for name in (*CANN_PYTHON_DEPS, "filelock", "mpmath"):
        assert name.lower().replace("_", "-") in have, name
    imported = host.ssh(host.hosts[0], f"{VENV}/bin/python -c 'import torch_npu, sympy; "
                                       "print(torch_npu.__version__, sympy.__version__)'")
    assert imported.stdout.split() == [TORCH, "1.13.3"], imported.stderr
    again = run(host, repo, plan, tmp_path, offline=True)
    assert [(h.status, h.changed) for h in again.hosts] == [("ok", 0)], again
    # A dependency removed behind our back (only sympy needs mpmath) is put back.
    removed = host.ssh(host.hosts[0], f"{VENV}/bin/python -m pip uninstall -y mpmath")
    assert removed.returncode == 0, removed.stderr
    repaired = run(host, repo, plan, tmp_path, offline=True)
    assert [(h.status, h.changed) for h in repaired.hosts] == [("changed", 1)], repaired
    assert venv_distributions(host)["mpmath"] == "1.3.0"


def test_check_mode_through_the_command_makes_no_venv(host: SimFleet, python_repo: tuple[
        Path, Plan], tmp_path: Path) -> None:
    """The command as an operator runs it, with the shipped catalogue: the real framework
    wheels it names are not in the repository, but the stand-ins satisfy the same pins."""
    repo, _plan = python_repo
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(spec().model_dump_json())
    done = invoke("install", "--spec", str(spec_file), "--inventory", str(host.inventory),
                  "--repo", str(repo), "--components", "python,env", "--check", "--offline",
                  "--log-dir", str(tmp_path / "logs"), "--json")
    assert done.code == 0, done
    summary = json.loads(done.out)
    assert summary["schema"] == "ascend-env/install/v1" and summary["check"] is True
    assert summary["notes"] == []
    assert [(h["host"], h["status"], h["failed"]) for h in summary["hosts"]] == [
        (host.hosts[0], "changed", 0)]
    assert not (host.root(host.hosts[0]) / VENV.lstrip("/")).exists()


def test_a_wheel_missing_offline_is_named_before_any_host_is_touched(
        host: SimFleet, python_repo: tuple[Path, Plan], tmp_path: Path) -> None:
    repo, plan = python_repo
    partial = tmp_path / "repo"
    shutil.copytree(repo, partial)
    (partial / WHEELS_DIR / "mpmath-1.3.0-py3-none-any.whl").unlink()
    with pytest.raises(RepoError) as raised:
        run(host, partial, plan, tmp_path, offline=True)
    message = str(raised.value)
    assert "mpmath<1.4,>=1.1.0 (needed by sympy 1.13.3: no wheel in the repository)" in message
    assert f"--dest {partial / WHEELS_DIR} 'mpmath<1.4,>=1.1.0'" in message
    assert not (tmp_path / "logs").exists()  # ansible never ran
    assert not (host.root(host.hosts[0]) / VENV.lstrip("/")).exists()


def test_a_host_without_the_venv_module_gets_the_package_to_install(
        host: SimFleet, python_repo: tuple[Path, Plan], tmp_path: Path) -> None:
    repo, plan = python_repo
    root = host.root(host.hosts[0])
    # What a Debian or Ubuntu host without python3-venv looks like: no ensurepip.
    shutil.rmtree(root / "usr/lib/python3.11/ensurepip")
    summary = run(host, repo, plan, tmp_path, offline=True)
    assert [h.status for h in summary.hosts] == ["failed"], summary
    assert "install the python3.11-venv package" in summary.hosts[0].message
    assert not (root / VENV.lstrip("/")).exists()
