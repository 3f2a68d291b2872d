"""The prerequisites role's decisions (ascend_env/install/prerequisites.py): what a run needs,
what the host lacks (read from the real rpm and dpkg-query answers), and the refusals that
come before anything changes."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ascend_env.install.prerequisites import installed, needed, plan

KERNEL = "5.10.0-60.18.0.50.oe2203.x86_64"
PACKAGES: dict[str, Any] = {
    "key": "openeuler-22.03-x86_64", "name": "openEuler 22.03 LTS", "manager": "dnf",
    "driver_build": ["make", "dkms", "gcc", "kernel-headers-{kernel}", "kernel-devel-{kernel}"],
    "python_version": "3.11", "python_shipped": ["3.9"], "python": [],
    "cann_prerequisites": ["gcc-c++", "cmake"], "module": [],
    "repository": ["make", "dkms", "gcc", "gcc-c++", "cmake", "kernel-devel", "kernel-headers"],
    "kernels": [KERNEL], "bundle": "/x.tar", "bundle_sha256": "0" * 64,
}
BUILD = {"driver": "full", "toolkit": "install"}
NOTHING = {"driver": "none", "toolkit": "none"}


def rpm_query(tmp_path: Path, names: list[str]) -> dict[str, Any]:
    """The real answer of `rpm -q NAME...` from an empty database (every name missing)."""
    if shutil.which("rpm") is None:
        pytest.skip("rpm is not installed (apt-get install rpm)")
    done = subprocess.run(["rpm", "--dbpath", str(tmp_path / "rpmdb"), "-q", *names],
                          capture_output=True, text=True, check=False)
    return {"rc": done.returncode, "stdout": done.stdout, "stderr": done.stderr}


def test_a_run_needs_the_driver_build_tools_only_when_a_driver_is_built() -> None:
    assert needed(PACKAGES, KERNEL, NOTHING, python=False) == []
    assert needed(PACKAGES, KERNEL, {"driver": "upgrade", "toolkit": "none"}, python=False) == [
        "make", "dkms", "gcc", f"kernel-headers-{KERNEL}", f"kernel-devel-{KERNEL}"]
    assert needed(PACKAGES, KERNEL, {"driver": "none", "toolkit": "install"},
                  python=False) == ["gcc-c++", "cmake"]
    debian = {**PACKAGES, "manager": "apt", "module": ["python3-apt"],
              "python": ["python3-dev", "python3-venv"]}
    assert needed(debian, "6.1.0-50-amd64", NOTHING, python=True) == [
        "python3-apt", "python3-dev", "python3-venv"]


def test_rpm_answers_are_read_for_what_is_missing(tmp_path: Path) -> None:
    names = ["gcc", f"kernel-devel-{KERNEL}"]
    query = rpm_query(tmp_path, names)
    assert query["stdout"].splitlines() == [f"package {n} is not installed" for n in names]
    assert installed("dnf", names, query) == []
    result = plan(PACKAGES, KERNEL, names, query, python=None)
    assert result == {"install": names, "errors": []}


def test_installed_packages_are_left_alone(tmp_path: Path) -> None:
    """Installed: rpm prints the package's NEVRA (here of a package really in a database)."""
    if shutil.which("rpmbuild") is None:
        pytest.skip("rpmbuild is not installed (apt-get install rpm)")
    from tests.sim.standin_rpms import StandIn, build  # noqa: PLC0415

    build([StandIn("gcc", "10.3.1", "10.oe2203")], tmp_path / "rpms")
    db = tmp_path / "rpmdb"
    subprocess.run(["rpm", "--dbpath", str(db), "-i", "--justdb", "--nodeps",
                    str(next((tmp_path / "rpms").glob("gcc-*.rpm")))], check=True)
    done = subprocess.run(["rpm", "--dbpath", str(db), "-q", "gcc", "make"],
                          capture_output=True, text=True, check=False)
    query = {"rc": done.returncode, "stdout": done.stdout}
    assert installed("dnf", ["gcc", "make"], query) == ["gcc"]
    assert plan(PACKAGES, KERNEL, ["gcc", "make"], query, python=None)["install"] == ["make"]


def test_dpkg_query_answers_are_read() -> None:
    if shutil.which("dpkg-query") is None:
        pytest.skip("dpkg-query is not installed")
    names = ["bash", "no-such-package-here"]
    done = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${db:Status-Abbrev}\n",
                           *names], capture_output=True, text=True, check=False)
    query = {"rc": done.returncode, "stdout": done.stdout, "stderr": done.stderr}
    assert installed("apt", names, query) == ["bash"]


def test_an_answer_not_understood_is_refused_not_read_as_installed() -> None:
    for query in ({"rc": 2, "stdout": "", "msg": "[Errno 2] No such file or directory: 'rpm'"},
                  {"rc": 0, "stdout": ""}):
        result = plan(PACKAGES, KERNEL, ["gcc", "make"], query, python=None)
        assert result["install"] == []
        assert "could not read the host's package database (rpm -q)" in result["errors"][0]
    apt = {**PACKAGES, "manager": "apt"}
    assert "dpkg-query" in plan(apt, KERNEL, ["gcc"], {"rc": 2, "stdout": ""},
                                python=None)["errors"][0]


def test_a_kernel_the_repository_has_no_devel_package_for_is_refused(tmp_path: Path) -> None:
    running = "5.10.0-60.139.0.166.oe2203.x86_64"
    names = needed(PACKAGES, running, BUILD, python=False)
    result = plan(PACKAGES, running, names, rpm_query(tmp_path, names), python=None)
    assert len(result["errors"]) == 1
    error = result["errors"][0]
    assert f"the running kernel {running} has no kernel-headers-{running}, " \
        f"kernel-devel-{running} in the repository" in error
    assert f"which holds the devel packages of {KERNEL}" in error
    assert f"--kernel {running}" in error


def test_a_package_the_repository_lacks_is_refused(tmp_path: Path) -> None:
    packages = {**PACKAGES, "repository": ["make", "gcc"]}
    names = ["make", "dkms", "gcc"]
    result = plan(packages, KERNEL, names, rpm_query(tmp_path, names), python=None)
    assert result["errors"] == ["the repository lacks dkms for openEuler 22.03 LTS, which the "
                                "host does not have: fetch again with an --os-mirror that has "
                                "them"]


def test_a_python_the_os_does_not_ship_must_be_on_the_host() -> None:
    refused = plan(PACKAGES, KERNEL, [], {"rc": 0, "stdout": ""}, python=False)
    assert refused["errors"] == [
        "the spec's Python 3.11 is not on the host and openEuler 22.03 LTS does not ship it "
        "(its Python: 3.9): install python3.11 on the host (with its venv module) yourself, "
        "or choose a spec for Python 3.9"]
    # The host has it (built by the operator): nothing to say; no venv in the run: neither.
    assert plan(PACKAGES, KERNEL, [], {"rc": 0, "stdout": ""}, python=True)["errors"] == []
    assert plan(PACKAGES, KERNEL, [], {"rc": 0, "stdout": ""}, python=None)["errors"] == []
    # Shipped by the OS: its packages are what the run installs, no refusal.
    shipped = {**PACKAGES, "python_version": "3.9"}
    assert plan(shipped, KERNEL, [], {"rc": 0, "stdout": ""}, python=False)["errors"] == []


def test_an_unknown_kernel_cannot_choose_devel_packages(tmp_path: Path) -> None:
    names = needed(PACKAGES, None, BUILD, python=False)
    result = plan(PACKAGES, None, names, rpm_query(tmp_path, names), python=None)
    assert any("running kernel's release is unknown" in e for e in result["errors"])
