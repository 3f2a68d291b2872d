"""The simulated openEuler 22.03 LTS: its kernel, its os-release and its stand-in packages.

The packages are those ascend_env/data/os/openeuler-22.03.yaml names (every purpose and the
baseline), plus the dependencies that make resolving them real work, as stand-ins
(tests/sim/standin_rpms.py). Versions are of openEuler 22.03's shape, not taken from it.
The kernels are real openEuler 22.03 LTS builds (src-openeuler/kernel, branch
openEuler-22.03-LTS, kernel.spec: 5.10.0 release 60.18.0.50, the GA, which Ascend hosts run
(`5.10.0-60.18.0.50.oe2203.aarch64` in https://github.com/vllm-project/vllm-ascend/issues/1886),
and 60.139.0.166, a later update): the hosts run the first; the mirror has the devel packages
of both, so a repository fetched for the other one lacks the running kernel's.
"""

from __future__ import annotations

from ascend_env.spec.os_keys import OsEntry
from tests.sim.standin_rpms import StandIn

OS_NAME = "openeuler-22.03"
DIST = "oe2203"
KERNELS = ("5.10.0-60.18.0.50.oe2203", "5.10.0-60.139.0.166.oe2203")
# openEuler 22.03 LTS's /etc/os-release as the GA writes it: VERSION without the "(LTS-SPn)"
# of the SPs (openEuler community guides quote it so, e.g. RFO's quick start on 22.03-LTS).
OS_RELEASE = """\
NAME="openEuler"
VERSION="22.03 LTS"
ID="openEuler"
VERSION_ID="22.03"
PRETTY_NAME="openEuler 22.03 LTS"
ANSI_COLOR="0;31"

"""

# Built for the host's arch, as the distribution's are, except these, whose spec files in
# src-openeuler say `BuildArch: noarch` (dkms, cmake's cmake-data, python-pip, dnf, setup, ...).
NOARCH = frozenset({"basesystem", "ca-certificates", "cmake-data", "dkms", "dnf", "python3-dnf",
                    "python3-pip", "setup"})

# name -> (version, release, epoch, requires); releases get the dist tag. Unlisted: 1.0-1.
_EVR: dict[str, tuple[str, str, int | None, tuple[str, ...]]] = {
    "glibc": ("2.34", "70", None, ()),
    "glibc-common": ("2.34", "70", None, ("glibc = 2.34-70.oe2203",)),
    "glibc-devel": ("2.34", "70", None, ("glibc = 2.34-70.oe2203", "libxcrypt-devel")),
    "libxcrypt-devel": ("4.4.26", "2", None, ()),
    "libstdc++": ("10.3.1", "10", None, ()),
    "libstdc++-devel": ("10.3.1", "10", None, ("libstdc++ = 10.3.1-10.oe2203",)),
    "gcc": ("10.3.1", "10", None, ("cpp = 10.3.1-10.oe2203", "binutils", "glibc-devel")),
    "gcc-c++": ("10.3.1", "10", None, ("gcc = 10.3.1-10.oe2203",
                                       "libstdc++-devel = 10.3.1-10.oe2203")),
    "cpp": ("10.3.1", "10", None, ()),
    "binutils": ("2.37", "7", None, ()),
    "make": ("4.3", "2", 1, ()),
    "dkms": ("3.0.3", "1", None, ("gcc", "make", "kmod", "bash")),
    "perl": ("5.34.0", "3", 4, ("perl-libs",)),
    "perl-libs": ("5.34.0", "3", 4, ()),
    "cmake": ("3.22.0", "4", None, ("cmake-data",)),
    "cmake-data": ("3.22.0", "4", None, ()),
    "pciutils": ("3.7.0", "4", None, ("pciutils-libs",)),
    "net-tools": ("2.0", "0.60", None, ()),
    "zlib": ("1.2.11", "20", None, ()),
    "zlib-devel": ("1.2.11", "20", None, ("zlib = 1.2.11-20.oe2203",)),
    "openssl-libs": ("1.1.1m", "1", 1, ()),
    "openssl-devel": ("1.1.1m", "1", 1, ("openssl-libs = 1:1.1.1m-1.oe2203", "pkgconf")),
    "libffi-devel": ("3.4.2", "3", None, ("libffi",)),
    "sqlite-devel": ("3.37.2", "3", None, ("sqlite",)),
    "python3": ("3.9.9", "7", None, ()),
    "python3-devel": ("3.9.9", "7", None, ("python3 = 3.9.9-7.oe2203",)),
    "python3-pip": ("21.3.1", "1", None, ("python3",)),
}


def kernel_release(arch: str, which: int = 0) -> str:
    """`uname -r` of a host running that kernel: version-release.arch (KernelVer)."""
    return f"{KERNELS[which]}.{arch}"


def _package(name: str, arch: str) -> StandIn:
    version, release, epoch, requires = _EVR.get(name, ("1.0", "1", None, ()))
    return StandIn(name, version, f"{release}.{DIST}", "noarch" if name in NOARCH else arch,
                   epoch=epoch, requires=requires)


def _kernel_packages(arch: str, which: int) -> list[StandIn]:
    version, release = KERNELS[which].split("-", 1)
    kver = kernel_release(arch, which)
    tree = f"/usr/src/kernels/{kver}"
    return [
        StandIn("kernel", version, release, arch, provides=(f"kernel-uname-r = {kver}",),
                files={f"/lib/modules/{kver}/modules.order": ""}),
        StandIn("kernel-devel", version, release, arch, requires=("perl", "findutils"),
                provides=(f"kernel-devel-uname-r = {kver}",),
                files={f"{tree}/Makefile": f"# stand-in build tree of {kver}\n",
                       f"{tree}/.config": "# stand-in\n"},
                links={f"/lib/modules/{kver}/build": tree,
                       f"/lib/modules/{kver}/source": "build"}),
        StandIn("kernel-headers", version, release, arch),
    ]


def release_package() -> StandIn:
    """openEuler-release: the os-release files, and the releasever dnf reads."""
    return StandIn("openEuler-release", "22.03LTS", "52",
                   provides=("system-release = 22.03LTS-52",
                             "system-release(releasever) = 22.03LTS"),
                   files={"/etc/os-release": OS_RELEASE,
                          "/etc/openEuler-release": "openEuler release 22.03 LTS\n"},
                   links={"/etc/system-release": "openEuler-release"})


def mirror_packages(entry: OsEntry, arch: str) -> list[StandIn]:
    """Every stand-in of the simulated mirror: the data's packages, their dependencies, the
    baseline, the release package and both kernels."""
    names = {p.name for purpose in ("driver_build", "python", "cann_prerequisites")
             for p in getattr(entry.packages, purpose) if "{kernel}" not in p.name}
    names |= set(entry.baseline.packages)
    kernels = [p for which in range(len(KERNELS)) for p in _kernel_packages(arch, which)]
    wanted = set(names) | {req.split()[0] for p in kernels for req in p.requires}
    while wanted:  # the dependencies' own stand-ins
        name = wanted.pop()
        names.add(name)
        wanted |= {req.split()[0] for req in _package(name, arch).requires} - names
    return [*(_package(n, arch) for n in sorted(names)), release_package(), *kernels]


def baseline_names(entry: OsEntry) -> list[str]:
    """What a bare host has installed: the data's baseline, its release package and kernel."""
    return [*entry.baseline.packages, "openEuler-release", "kernel"]
