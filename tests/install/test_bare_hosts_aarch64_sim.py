"""A bare aarch64 openEuler 22.03 host, as Atlas 800T A2 servers arrive: `install` takes the
aarch64 vendor files and the aarch64 builds of the OS packages, and refuses a host of another
architecture than the spec's (an x86_64 host with an aarch64 spec, and the other way round).

The host is the harness's (tests/sim/oshosts.py, `up --arch aarch64`): the controller's CPU and
binaries, only the reported architecture simulated (uname(2) through the preloaded shim, so
`uname -m`, Python, Ansible, rpm and dnf say aarch64). The frameworks' stand-in wheels are
tagged as the real ones are (cp311-cp311-manylinux_2_28_aarch64), so the host's pip checks
their tag; their content is pure Python, so that they also import on the controller's CPU.
No real framework wheel goes there: PyTorch's CPU wheel here is x86_64, and its aarch64 build
would not run on this CPU.
"""

from __future__ import annotations

import platform
from pathlib import Path

import pytest

from ascend_env.spec.envspec import load_spec
from tests.install.test_bare_hosts_sim import fetched, first_and_second_install, install
from tests.sim import openeuler, oshosts, packages
from tests.sim.fixtures import FleetFactory
from tests.wheels import build_wheel

pytestmark = [pytest.mark.sim, pytest.mark.slow]

OS = "openeuler-22.03"
ARM = "aarch64"
HERE = platform.machine()  # the controller's architecture, and a plain simulated host's
KERNEL = openeuler.kernel_release(ARM)
NAMES = packages.names("910b", "8.5.0", "25.5.0", ARM)


@pytest.fixture(scope="module")
def arm_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The operator's `tests.sim repo --arch aarch64` and `ascend-env fetch`, once."""
    return fetched(tmp_path_factory.mktemp("arm"), OS, KERNEL, arch=ARM)


def test_the_aarch64_repository_holds_the_aarch64_vendor_files_and_rpms(
        arm_repo: tuple[Path, Path]) -> None:
    spec, repo = arm_repo
    assert "arch: aarch64" in spec.read_text()
    runs = {p.name for p in repo.rglob("*.run")}
    assert {NAMES["driver"], NAMES["toolkit"], NAMES["ops"]} <= runs, runs
    assert NAMES["driver"].endswith("_linux-aarch64.run")
    assert not any("x86" in name for name in runs), runs
    rpms = {p.name for p in repo.rglob("*.rpm")}
    assert f"kernel-devel-{KERNEL}.rpm" in rpms and "dkms-3.0.3-1.oe2203.noarch.rpm" in rpms
    assert "gcc-10.3.1-10.oe2203.aarch64.rpm" in rpms, rpms
    assert not any(name.endswith(".x86_64.rpm") for name in rpms), rpms
    tag = "cp" + load_spec(path=spec).python.version.replace(".", "")
    frameworks = sorted(p.name for p in repo.glob("*.whl"))
    assert frameworks == [f"{name}-{tag}-{tag}-manylinux_2_28_aarch64.whl" for name in
                          ("mindspore-2.7.2", "torch-2.9.0", "torch_npu-2.9.0")], frameworks


def test_a_bare_aarch64_openeuler_host_gets_the_aarch64_stack(
        arm_repo: tuple[Path, Path], sim_private_fleet: FleetFactory) -> None:
    spec, repo = arm_repo
    fleet = sim_private_fleet(os_name=OS, arch=ARM)
    seen = fleet.ssh("sim1", "uname -m; uname -r; rpm --eval %_arch; python3 -c 'import "
                     "platform, sysconfig; print(platform.machine(), sysconfig.get_platform())'")
    assert seen.stdout.split() == [ARM, KERNEL, ARM, ARM, "linux-aarch64"], seen.stdout
    first_and_second_install(spec, repo, fleet, "dnf",
                             ["make", "dkms", "gcc", f"kernel-devel-{KERNEL}"])
    has = fleet.ssh("sim1", "rpm -q --qf '%{name} %{arch}\\n' gcc make dkms glibc-devel "
                    f"kernel-devel-{KERNEL}; cat /usr/local/Ascend/ascend-toolkit/latest/"
                    "aarch64-linux/ascend_toolkit_install.info; ls /usr/local/Ascend/"
                    "ascend-toolkit/latest/")
    assert has.returncode == 0, has.stdout + has.stderr
    lines = has.stdout.splitlines()
    assert lines[:5] == ["gcc aarch64", "make aarch64", "dkms noarch", "glibc-devel aarch64",
                         "kernel-devel aarch64"], has.stdout
    assert "arch=aarch64" in lines and "x86_64-linux" not in has.stdout, has.stdout
    # The host's rpm takes its own arch's builds only, as a real aarch64 one does.
    x86 = next(oshosts.standin_mirror("x86_64").glob("zlib-devel-*.x86_64.rpm"))
    (fleet.root("sim1") / "root" / x86.name).write_bytes(x86.read_bytes())
    refused = fleet.ssh("sim1", f"rpm -i --test --nodeps /root/{x86.name}")
    assert refused.returncode != 0
    assert "is intended for a different architecture" in refused.stdout + refused.stderr
    # So does its pip: the frameworks it installed are the aarch64 wheels, and an x86_64
    # one (as PyTorch's CPU wheel of this machine) is not for it.
    python = load_spec(path=spec).python
    tag = "cp" + python.version.replace(".", "")
    wheel = fleet.ssh("sim1", f"cat {python.venv}/lib/python{python.version}/site-packages/"
                      "torch_npu-2.9.0.dist-info/WHEEL")
    assert f"Tag: {tag}-{tag}-manylinux_2_28_aarch64" in wheel.stdout, wheel.stdout + wheel.stderr
    x86_wheel = build_wheel(fleet.root("sim1") / "root", "torch", "2.9.0",
                            tag=f"{tag}-{tag}-manylinux_2_28_x86_64")
    pip = fleet.ssh("sim1", f"{python.venv}/bin/python -m pip install --dry-run --no-deps "
                    f"--no-index /root/{x86_wheel.name}")
    assert pip.returncode != 0
    assert "is not a supported wheel on this platform" in pip.stdout + pip.stderr, pip.stderr


@pytest.fixture(scope="module")
def own_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The same for the controller's own architecture."""
    return fetched(tmp_path_factory.mktemp("own"), OS, openeuler.kernel_release(HERE))


@pytest.mark.skipif(HERE == ARM, reason="the controller's own arch is aarch64")
@pytest.mark.parametrize(("spec_arch", "host_arch"), [(ARM, HERE), (HERE, ARM)])
def test_a_host_of_another_arch_than_the_specs_is_refused(
        spec_arch: str, host_arch: str, request: pytest.FixtureRequest,
        sim_private_fleet: FleetFactory) -> None:
    spec, repo = request.getfixturevalue("arm_repo" if spec_arch == ARM else "own_repo")
    fleet = sim_private_fleet(os_name=OS, arch=host_arch)
    code, refused = install(spec, repo, fleet)
    assert code == 1, refused
    (host,) = refused["hosts"]
    assert host["status"] == "failed", host
    assert (f"the host is {host_arch} but the spec is for {spec_arch}; use --arch {host_arch} "
            "or the right inventory") in host["message"], host["message"]
    # Refused before anything changed: no package, no driver.
    after = fleet.ssh("sim1", "rpm -q gcc make dkms; ls /usr/local/Ascend")
    assert after.stdout.count("is not installed") == 3, after.stdout
    assert "No such file" in after.stderr, after.stderr
