"""Bare hosts as Ascend servers arrive: `install` brings the OS prerequisites first, through
the OS's own package manager, from the verified repository.

The hosts are the harness's (tests/sim/oshosts.py): a bare openEuler 22.03 host with real rpm
and dnf and stand-in RPMs (built with rpmbuild; not openEuler's packages), and a bare Debian 12
host with real apt and Debian's real packages from the mirror this machine's apt uses. The
commands are the operator's: `python -m tests.sim repo`, `ascend-env fetch`, `ascend-env
install`, each as typed, through the real entry point.
"""

from __future__ import annotations

import json
import platform
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cli_invoke import invoke
from tests.sim import openeuler, oshosts, packages, rootfs
from tests.sim.fixtures import FleetFactory, SimFleet
from tests.sim.provision import in_root
from tests.wheels import fill_wheels

pytestmark = [pytest.mark.sim, pytest.mark.slow]

ARCH = platform.machine()
ROOT = Path(__file__).resolve().parents[2]


def need_tools(os_name: str) -> None:
    """What this machine needs for the OS's packages: rpmbuild and createrepo_c for the
    stand-in RPMs, dnf (with its download plugin) or apt-ftparchive for fetch."""
    tools = ("rpmbuild", "createrepo_c", "dnf") if os_name.startswith("openeuler") \
        else ("apt-get", "apt-ftparchive")
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed (scripts/test.sh installs rpm, "
                    "createrepo-c, dnf, dnf-plugins-core and apt-utils)")


def vendor_folder(dest: Path, os_name: str, arch: str = ARCH) -> Path:
    """`python -m tests.sim repo --profile 910b --os NAME --arch ARCH`: the fake vendor files,
    spec.yaml for hosts of that OS, stand-in framework wheels, and (openEuler) its stand-in
    mirror."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.sim", "repo", "--profile", "910b", "--os", os_name,
         "--arch", arch, "--dest", str(dest), "--wheels-for", str(dest / "spec.yaml")],
        cwd=ROOT, capture_output=True, text=True, check=False, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    kernel = oshosts.kernel_release(os_name, arch)
    assert f"fetch with --kernel {kernel}" in done.stdout
    return dest


def fetched(tmp_path: Path, os_name: str, kernel: str, *mirror: str, arch: str = ARCH
            ) -> tuple[Path, Path]:
    """`ascend-env fetch` of the vendor folder (OS packages included) into a repository;
    the frameworks' dependencies as stand-in wheels beside them."""
    need_tools(os_name)
    vendor = vendor_folder(tmp_path / "vendor", os_name, arch)
    repo = tmp_path / "repo"
    done = invoke("fetch", "--spec", str(vendor / "spec.yaml"), "--repo", str(repo),
                  "--from-dir", str(vendor), "--catalogue",
                  str(vendor / "catalogue-overlay.json"), "--kernel", kernel,
                  *[arg for url in mirror for arg in ("--os-mirror", url)], "--json")
    report = json.loads(done.out)
    assert done.code == 0, done.out[-3000:] + done.err[-2000:]
    assert report["os_packages"]["complete"] and report["os_packages"]["kernels"] == [kernel]
    fill_wheels(repo)
    return vendor / "spec.yaml", repo


def install(spec: Path, repo: Path, fleet: SimFleet, *extra: str) -> tuple[int, dict[str, Any]]:
    done = invoke("install", "--spec", str(spec), "--inventory", str(fleet.inventory),
                  "--repo", str(repo), "--catalogue", str(spec.parent / "catalogue-overlay.json"),
                  "--allow-reboot", "--json", *extra)
    return done.code, json.loads(done.out) if done.out.strip() else {"error": done.err}


def first_and_second_install(spec: Path, repo: Path, fleet: SimFleet, manager: str,
                             needed: list[str]) -> None:
    """--check lists, the first install installs the prerequisites and the stack (doctor
    green), the second changes nothing (doctor green)."""
    code, checked = install(spec, repo, fleet, "--check")
    assert code == 0, checked
    notes = " ".join(checked["notes"])
    assert "sim1: would install the OS packages " in notes and f"through {manager}" in notes
    assert all(name in notes for name in needed), notes
    code, first = install(spec, repo, fleet)
    (host,) = first["hosts"]
    assert code == 0, host
    assert host["status"] == "changed", host
    assert host["doctor"]["summary"]["fail"] == 0 and host["doctor"]["summary"]["error"] == 0
    assert any(note.startswith("sim1: installs the OS packages ") for note in first["notes"])
    code, second = install(spec, repo, fleet)
    (host,) = second["hosts"]
    assert code == 0, host
    assert host["changed"] == 0 and host["status"] == "ok", host
    assert host["doctor"]["summary"]["fail"] == 0 and host["doctor"]["summary"]["error"] == 0
    assert not any("installs the OS packages" in note for note in second["notes"])


def test_a_bare_openeuler_host_gets_its_prerequisites_through_dnf(
        tmp_path: Path, sim_private_fleet: FleetFactory) -> None:
    kernel = oshosts.kernel_release("openeuler-22.03", ARCH)
    spec, repo = fetched(tmp_path, "openeuler-22.03", kernel)
    fleet = sim_private_fleet(os_name="openeuler-22.03")
    bare = fleet.ssh("sim1", "rpm -q gcc make dkms")
    assert bare.returncode == 3, bare.stdout  # none of the three
    first_and_second_install(spec, repo, fleet, "dnf",
                             ["make", "dkms", "gcc", f"kernel-devel-{kernel}"])
    has = fleet.ssh("sim1", f"rpm -q gcc make dkms kernel-devel-{kernel} && uname -r && "
                    "ls /etc/yum.repos.d && ls /var/cache/ascend-env/packages")
    assert has.returncode == 0, has.stdout + has.stderr
    lines = has.stdout.split()
    assert kernel in lines and "openEuler.repo" in lines
    # The repository was the package manager's for the run only.
    assert not any("ascend-env-prerequisites" in line or "os-packages" in line
                   for line in lines), has.stdout


def test_a_bare_debian_host_gets_its_prerequisites_through_apt(
        tmp_path: Path, sim_private_fleet: FleetFactory) -> None:
    kernel = oshosts.kernel_release("debian-12", ARCH)
    spec, repo = fetched(tmp_path, "debian-12", kernel, rootfs.default_recipe().mirror)
    fleet = sim_private_fleet(os_name="debian-12")
    first_and_second_install(spec, repo, fleet, "apt",
                             ["dkms", "gcc", f"linux-headers-{kernel}", "python3-apt"])
    has = fleet.ssh("sim1", "dpkg-query -W -f '${Package} ${db:Status-Abbrev}\\n' dkms gcc "
                    f"make linux-headers-{kernel} && ls /etc/apt/sources.list.d "
                    f"/lib/modules/{kernel}/build/Makefile")
    assert has.returncode == 0, has.stdout + has.stderr
    assert has.stdout.count(" ii") == 4, has.stdout
    assert "ascend-env-prerequisites" not in has.stdout


def test_a_kernel_without_its_devel_package_in_the_repository_is_refused_before_the_driver(
        tmp_path: Path, sim_private_fleet: FleetFactory) -> None:
    running = oshosts.kernel_release("openeuler-22.03", ARCH)
    other = openeuler.kernel_release(ARCH, 1)
    spec, repo = fetched(tmp_path, "openeuler-22.03", other)
    fleet = sim_private_fleet(os_name="openeuler-22.03")
    code, refused = install(spec, repo, fleet)
    assert code == 1, refused
    (host,) = refused["hosts"]
    assert host["status"] == "failed"
    assert (f"the running kernel {running} has no kernel-headers-{running}, "
            f"kernel-devel-{running} in the repository, which holds the devel packages of "
            f"{other}") in host["message"], host["message"]
    # Nothing changed: no package, no repository file, no driver, no user.
    after = fleet.ssh("sim1", "rpm -q gcc make dkms; ls /etc/yum.repos.d; "
                      "ls /usr/local/Ascend; id HwHiAiUser")
    assert after.stdout.count("is not installed") == 3, after.stdout
    assert "ascend-env-prerequisites" not in after.stdout
    assert "No such file" in after.stderr and "no such user" in after.stderr

    # Why: the driver's installer (the harness's fake, as the real one) cannot build its
    # modules without the running kernel's build tree, and asks for one.
    root = fleet.root("sim1")
    names = packages.names("910b", "8.5.0", "25.5.0", ARCH)
    (root / "root/p").mkdir()
    (root / "root/p" / names["driver"]).write_bytes(
        (spec.parent / names["driver"]).read_bytes())
    run_driver = ("getent group HwHiAiUser >/dev/null || groupadd HwHiAiUser; id HwHiAiUser "
                  ">/dev/null 2>&1 || useradd -g HwHiAiUser -m HwHiAiUser; cd /root/p && "
                  f"sh ./{names['driver']} --nox11 --full --quiet --install-for-all </dev/null")
    stopped = in_root(root, run_driver)
    assert stopped.returncode != 0
    assert "Do you want to try build driver after input kernel absolute path" in stopped.stdout
    mirror = spec.parent / "os" / oshosts.os_key("openeuler-22.03", ARCH)
    rpms = [p for p in mirror.glob("*.rpm")
            if p.name.startswith((f"kernel-devel-{running}", "perl-"))]
    for rpm in rpms:
        (root / "root/p" / rpm.name).write_bytes(rpm.read_bytes())
    added = in_root(root, "rpm -i " + " ".join(f"/root/p/{p.name}" for p in rpms))
    assert added.returncode == 0, added.stdout + added.stderr
    built = in_root(root, run_driver)
    assert built.returncode == 0, built.stdout + built.stderr
