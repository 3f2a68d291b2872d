"""Simulated hosts of a named OS, bare as the vendor's servers arrive: `up --os NAME`.

The root keeps the harness's Debian userland (glibc, Python, sshd's chroot) and is shaped as
the named OS: its os-release, its package manager and package database, the packages a
minimal install of it has (ascend_env/data/os/<name>.yaml's baseline), and a kernel release of
that OS. Bare: none of the driver's build prerequisites, and no kernel build tree.

- openeuler-22.03: Debian's own `rpm` and `dnf` (rpm's database in the root through
  %_dbpath), the stand-in RPMs of tests/sim/openeuler.py installed as the baseline, apt and
  dpkg removed, the release's dnf repository file (unreachable, as on an air-gapped host).
- debian-12: the harness's Debian root as it is, apt and dpkg being Debian's.

The hosts share the controller's kernel, so the release is simulated: the root's
/proc/sys/kernel/osrelease is a bind mount of it, and target/uname_release.c, preloaded by
/etc/ld.so.preload, makes uname(2) report it too: `uname -r`, Python, Ansible, the probe and the
fake installers all see a kernel of that OS, for which its devel packages exist (Debian's real
ones: the kernel is the one the Debian mirror's linux-headers-<arch> points at).

The architecture is simulated the same way (`up --arch aarch64`, openEuler only): the shim
reports the machine MACHINE_FILE names, so `uname -m`, Python, Ansible's ansible_architecture,
rpm's %_arch and dnf's basearch say aarch64, rpm installs the aarch64 builds and refuses the
x86_64 ones, and pip takes aarch64 wheel tags. The CPU (/proc/cpuinfo, the auxiliary vector's
AT_PLATFORM) and every binary stay the controller's.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

from tests.sim import gcc, hardware, openeuler, rootfs, standin_rpms
from tests.sim.chips import Chip
from tests.sim.layout import SimError, cache_dir, secure_mkdir
from tests.sim.provision import in_root

OS_NAMES = ("openeuler-22.03", "debian-12")
KERNEL_FILE = Path("var/lib/ascend-sim/kernel-release")
MACHINE_FILE = Path("var/lib/ascend-sim/machine")  # the shim's MACHINE_FILE
ARCHES = ("x86_64", "aarch64")
SHIM = Path("usr/lib/ascend-sim/libuname_release.so")
SHIM_SOURCE = Path(__file__).parent / "target" / "uname_release.c"
RPM_TOOLS = ("rpm", "dnf", "python3-dnf")
# The release's own repository file: a bare host has it, and an air-gapped one cannot reach it.
OPENEULER_REPO = """\
[OS]
name=OS
baseurl=http://repo.openeuler.org/openEuler-22.03-LTS/OS/$basearch/
enabled=1
gpgcheck=1
gpgkey=http://repo.openeuler.org/openEuler-22.03-LTS/OS/$basearch/RPM-GPG-KEY-openEuler
"""
APT_LISTS_MAX_AGE = 12 * 3600


def check(name: str | None, state: str = "bare", arch: str | None = None) -> None:
    if name is not None and name not in OS_NAMES:
        raise SimError(f"--os {name!r}: the simulated OSes are {', '.join(OS_NAMES)}")
    if name is not None and state != "bare":
        raise SimError(f"--os {name}: such hosts come up bare (--state bare)")
    if arch is not None and arch not in ARCHES:
        raise SimError(f"--arch {arch!r}: the simulated architectures are {', '.join(ARCHES)}")
    if arch not in (None, os.uname().machine) and name != "openeuler-22.03":
        # dpkg's architecture is built into it: a Debian host cannot report another one.
        raise SimError(f"--arch {arch}: only --os openeuler-22.03 hosts simulate an "
                       f"architecture other than this machine's ({os.uname().machine})")


def install_hardware(root: Path, chip: Chip, devices: int, kernel_headers: bool,
                     name: str | None, *, arch: str | None = None) -> None:
    """The simulated hardware, and for a named OS its shape (prepare): its kernel build tree
    comes from its devel package, which a bare host lacks. `arch`: default this machine's."""
    hardware.install(root, chip, devices, kernel_headers=kernel_headers and name is None)
    if name is not None:
        prepare(root, name, arch or os.uname().machine)


def os_key(name: str, arch: str) -> str:
    """The spec's OS key of such a host (ascend_env/spec/os_keys.py)."""
    return f"{name}-{arch}"


def base_for(name: str | None, state: str = "bare", arch: str | None = None) -> Path:
    """The cached root the host's overlay sits on (the RPM hosts' holds rpm and dnf)."""
    check(name, state, arch)
    recipe = rootfs.default_recipe()
    if name == "openeuler-22.03":
        recipe = dataclasses.replace(recipe, include=(*rootfs.BASE_INCLUDE, *RPM_TOOLS))
    return rootfs.ensure_base(recipe)


def kernel_release(name: str, arch: str) -> str:
    """`uname -r` on a simulated host of this OS."""
    if name == "openeuler-22.03":
        return openeuler.kernel_release(arch)
    return debian_kernel(arch)


def debian_kernel(arch: str) -> str:
    """The kernel the Debian mirror's linux-headers-<arch> depends on (its current ABI), read
    from the mirror through an apt of the harness's own (lists refreshed twice a day)."""
    recipe = rootfs.default_recipe()
    deb_arch = {"x86_64": "amd64", "aarch64": "arm64"}[arch]
    state = secure_mkdir(cache_dir() / f"apt-{recipe.suite}-{deb_arch}")
    for sub in ("lists/partial", "archives/partial"):
        (state / sub).mkdir(parents=True, exist_ok=True)
    (state / "sources.list").write_text(f"deb {recipe.mirror} {recipe.suite} main\n")
    (state / "status").touch()
    options = ["-o", f"Dir::State::Lists={state / 'lists'}", "-o",
               f"Dir::State::status={state / 'status'}", "-o", f"Dir::Cache={state}",
               "-o", f"Dir::Etc::sourcelist={state / 'sources.list'}", "-o",
               "Dir::Etc::sourceparts=-", "-o", f"APT::Architecture={deb_arch}"]
    stamp = state / "lists" / ".updated"
    if not stamp.exists() or time.time() - stamp.stat().st_mtime > APT_LISTS_MAX_AGE:
        res = subprocess.run(["apt-get", *options, "-qq", "update"], capture_output=True,
                             text=True, check=False)
        if res.returncode != 0:
            raise SimError(f"apt-get update from {recipe.mirror} failed: "
                           f"{res.stderr.strip()[-500:]}")
        stamp.touch()
    res = subprocess.run(["apt-cache", *options, "show", f"linux-headers-{deb_arch}"],
                         capture_output=True, text=True, check=False)
    found = re.search(rf"^Depends:.*?linux-headers-(\S+-{deb_arch})\b", res.stdout, re.M)
    if found is None:
        raise SimError(f"the mirror {recipe.mirror} has no linux-headers-{deb_arch} naming a "
                       f"kernel: {res.stderr.strip()[-300:]}")
    return found.group(1)


def prepare(root: Path, name: str, arch: str) -> str:
    """Shape a fresh host root as the named OS, bare; returns its kernel release (the name
    and arch were checked by base_for, before any host was built)."""
    release = kernel_release(name, arch)
    # The shim first: rpm installs the baseline's kernel only on a host of its arch.
    simulate_kernel(root, release, arch)
    if name == "openeuler-22.03":
        _rpm_host(root, arch)
    return release


def simulate_kernel(root: Path, release: str, arch: str) -> None:
    """The root's kernel release and machine: /proc/sys/kernel/osrelease and uname(2) (see
    above)."""
    held = root / KERNEL_FILE
    held.parent.mkdir(parents=True, exist_ok=True)
    held.write_text(release + "\n")
    (root / MACHINE_FILE).write_text(arch + "\n")
    res = subprocess.run(["mount", "--bind", str(held), str(root / "proc/sys/kernel/osrelease")],
                         capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise SimError(f"cannot simulate the kernel release in {root}: {res.stderr.strip()}")
    source = SHIM_SOURCE.read_text()
    built = gcc.cached("uname-release", source, lambda out: gcc.run(
        ["-shared", "-fPIC", "-O1", "-o", str(out / "libuname_release.so"), str(SHIM_SOURCE)],
        "the uname shim"))
    (root / SHIM).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(built / "libuname_release.so", root / SHIM)
    (root / "etc/ld.so.preload").write_text(f"/{SHIM}\n")


def standin_mirror(arch: str) -> Path:
    """The stand-in openEuler 22.03 mirror (every package of the simulated OS), cached."""
    from ascend_env.spec.os_keys import load_os_keys  # noqa: PLC0415

    entry = load_os_keys()[os_key("openeuler-22.03", arch)]
    return standin_rpms.cached_mirror(f"openeuler-22.03-{arch}",
                                      openeuler.mirror_packages(entry, arch))


def _rpm_host(root: Path, arch: str) -> None:
    from ascend_env.spec.os_keys import load_os_keys  # noqa: PLC0415

    entry = load_os_keys()[os_key("openeuler-22.03", arch)]
    packages = openeuler.mirror_packages(entry, arch)
    mirror = standin_rpms.cached_mirror(f"openeuler-22.03-{arch}", packages)
    wanted = set(openeuler.baseline_names(entry))
    running = openeuler.kernel_release(arch)
    files = [f"{p.nevra}.rpm" for p in packages if p.name in wanted
             and (p.name != "kernel" or p.nevra.endswith(running.split("-", 1)[1]))]
    (root / "etc/rpm").mkdir(parents=True, exist_ok=True)
    # %_host_cpu is built into rpm (Debian's: x86_64); a host of that arch has its own.
    (root / "etc/rpm/macros").write_text(f"%_dbpath /var/lib/rpm\n%_host_cpu {arch}\n")
    stage = root / "var/tmp/ascend-sim-baseline"
    stage.mkdir(parents=True, exist_ok=True)
    for name in files:
        shutil.copy2(mirror / name, stage / name)
    res = in_root(root, "rpm --initdb && rpm -i --quiet /var/tmp/ascend-sim-baseline/*.rpm")
    shutil.rmtree(stage, ignore_errors=True)
    if res.returncode != 0:
        raise SimError(f"installing the openEuler baseline in {root} failed: "
                       f"{res.stdout[-800:]}{res.stderr[-800:]}")
    # An RPM host: no apt, no dpkg, nothing that says Debian.
    for pattern in ("usr/bin/apt*", "usr/bin/dpkg*"):
        for tool in root.glob(pattern):
            tool.unlink()
    (root / "etc/debian_version").unlink(missing_ok=True)
    repos = root / "etc/yum.repos.d"
    repos.mkdir(parents=True, exist_ok=True)
    (repos / "openEuler.repo").write_text(OPENEULER_REPO)
