"""fetch's OS half (ascend_env/repository/os_packages.py) against a real dnf and createrepo_c:
the stand-in openEuler 22.03 mirror of the simulated hosts (tests/sim/openeuler.py, RPMs
built with rpmbuild) plays the operator's mirror; install's check of what fetch recorded
(ascend_env/install/prerequisites.py) reads the same repository."""

from __future__ import annotations

import json
import shutil
import tarfile
from pathlib import Path

import pytest
import yaml

from ascend_env.install.prerequisites import bundle, os_vars, verified_files
from ascend_env.repository.installers import RepoError
from ascend_env.repository.os_packages import OsSource, fetch_os_packages, recorded
from ascend_env.spec.envspec import EnvSpec, load_spec
from ascend_env.spec.os_keys import load_os_keys
from tests.cli_invoke import invoke
from tests.sim import openeuler, profiles
from tests.sim.standin_rpms import build

ARCH = "x86_64"
KEY = f"openeuler-22.03-{ARCH}"
RUNNING = openeuler.kernel_release(ARCH)
OTHER = openeuler.kernel_release(ARCH, 1)


@pytest.fixture(scope="module")
def mirror(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The stand-in openEuler 22.03 mirror: every package the OS data names, their
    dependencies, the baseline, two kernels; a dnf repository (createrepo_c)."""
    for tool in ("rpmbuild", "createrepo_c", "dnf"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed (apt-get install rpm createrepo-c dnf "
                        "dnf-plugins-core)")
    out = tmp_path_factory.mktemp("mirror") / KEY
    build(openeuler.mirror_packages(load_os_keys()[KEY], ARCH), out)
    return out


@pytest.fixture
def spec(tmp_path: Path) -> EnvSpec:
    doc = profiles.sim_spec(profiles.load("910b"), ARCH, "openeuler-22.03")
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(doc))
    return load_spec(path=tmp_path / "spec.yaml")


def test_the_closure_beyond_the_baseline_lands_as_a_dnf_repository(
        mirror: Path, spec: EnvSpec, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    found = fetch_os_packages(spec, repo, OsSource(mirrors=(str(mirror),), kernels=(RUNNING,)))
    assert found is not None and found.complete, found
    assert found.key == KEY and found.manager == "dnf" and found.kernels == [RUNNING]
    names = {f.rsplit("-", 2)[0] for f in found.files}
    # What the OS data names, and what dnf resolved them to need...
    assert {"gcc", "make", "dkms", "kernel-devel", "kernel-headers", "cpp", "binutils",
            "glibc-devel", "perl"} <= names
    # ...but nothing a minimal install has (glibc, which glibc-devel needs exactly), and
    # only the running kernel's devel package.
    assert not names & {"glibc", "bash", "kernel", "openEuler-release", "findutils"}
    assert f"kernel-devel-{RUNNING}.rpm" in found.files
    assert f"kernel-devel-{OTHER}.rpm" not in found.files
    folder = repo / "os" / KEY
    assert (folder / "repodata" / "repomd.xml").is_file()
    section = recorded(repo)
    assert section is not None and section["key"] == KEY and section["kernels"] == [RUNNING]
    files = section["files"]
    assert f"os/{KEY}/repodata/repomd.xml" in files
    assert {Path(p).name for p in files if p.endswith(".rpm")} == set(found.files)
    # Install reads it back: every file checked, one archive of the folder.
    assert len(verified_files(repo, section)) == len(files)


def test_a_copied_mirror_in_from_dir_is_taken_as_usual(mirror: Path, spec: EnvSpec,
                                                       tmp_path: Path) -> None:
    copied = tmp_path / "vendor" / "os" / KEY
    shutil.copytree(mirror, copied)
    found = fetch_os_packages(spec, tmp_path / "repo",
                              OsSource(kernels=(RUNNING,), from_dir=tmp_path / "vendor"))
    assert found is not None and found.complete
    assert fetch_os_packages(spec, tmp_path / "repo2",
                             OsSource(from_dir=tmp_path / "nothing-here")) is None


def test_without_kernel_or_with_one_the_mirror_lacks_it_is_incomplete(
        mirror: Path, spec: EnvSpec, tmp_path: Path) -> None:
    unnamed = fetch_os_packages(spec, tmp_path / "a", OsSource(mirrors=(str(mirror),)))
    assert unnamed is not None and not unnamed.complete and unnamed.kernels == []
    assert "no --kernel named" in unnamed.message
    absent = "5.10.0-1.0.0.1.oe2203.x86_64"
    lacking = fetch_os_packages(spec, tmp_path / "b",
                                OsSource(mirrors=(str(mirror),), kernels=(absent,)))
    assert lacking is not None and not lacking.complete and lacking.kernels == []
    assert f"kernel-devel-{absent}" in lacking.missing
    assert f"no mirror has kernel-headers-{absent}, kernel-devel-{absent}" in lacking.message


def test_the_fetch_command_reports_the_os_packages(mirror: Path, tmp_path: Path) -> None:
    vendor = tmp_path / "vendor"
    shutil.copytree(mirror, vendor / "os" / KEY)
    doc = profiles.sim_spec(profiles.load("910b"), ARCH, "openeuler-22.03")
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(doc))
    done = invoke("fetch", "--spec", str(tmp_path / "spec.yaml"), "--repo",
                  str(tmp_path / "repo"), "--from-dir", str(vendor), "--kernel", OTHER,
                  "--json")
    report = json.loads(done.out)
    # The vendor files are not there (exit 1), the OS packages are.
    assert done.code == 1
    assert report["os_packages"]["complete"] is True
    assert report["os_packages"]["kernels"] == [OTHER]


def test_install_refuses_os_packages_changed_since_fetch(mirror: Path, spec: EnvSpec,
                                                         tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    fetch_os_packages(spec, repo, OsSource(mirrors=(str(mirror),), kernels=(RUNNING,)))
    made = os_vars(spec, repo, tmp_path / "cache", venv=True)
    assert made is not None and made.kernels == [RUNNING] and "gcc" in made.repository
    assert made.python == []  # the spec's 3.11 is no package of openEuler 22.03
    with tarfile.open(made.bundle) as archive:
        assert "repodata/repomd.xml" in archive.getnames()
    # The same folder makes the same archive (one copy per host, "ok" on a re-run).
    section = recorded(repo)
    assert section is not None
    assert bundle(repo / section["folder"], verified_files(repo, section),
                  tmp_path / "cache") == Path(made.bundle)
    gcc = next((repo / "os" / KEY).glob("gcc-1*.rpm"))
    gcc.write_bytes(gcc.read_bytes() + b"\0")
    (repo / "os" / KEY / "extra.rpm").write_bytes(b"not fetched")
    with pytest.raises(RepoError) as refused:
        os_vars(spec, repo, tmp_path / "cache", venv=True)
    message = str(refused.value)
    assert "nothing was changed on any host" in message
    assert f"{gcc} does not match its sha256" in message and "extra.rpm is not recorded" in message


def test_install_refuses_os_packages_of_another_os(mirror: Path, spec: EnvSpec,
                                                   tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    fetch_os_packages(spec, repo, OsSource(mirrors=(str(mirror),), kernels=(RUNNING,)))
    other = load_spec(path=None, profile="910b")  # ubuntu 22.04 on aarch64
    with pytest.raises(RepoError, match=f"the repository's OS packages are for {KEY}"):
        os_vars(other, repo, tmp_path / "cache", venv=True)
