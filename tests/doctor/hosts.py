"""Simulated hosts made ready the way `ascend-env install` leaves them, and faults to break them.

A sim host in state `provisioned` has the vendor packages only (like a host installed by hand
from the .run files); `make_ready` adds what the install's env role, threads settings, the
framework Python's CANN dependencies and a job user give it. Each fault breaks one thing.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from ascend_env.repository.wheelhouse import CANN_PYTHON_DEPS
from tests.sim.fixtures import SimFleet
from tests.wheels import build_wheel

INSTALL = "usr/local/Ascend"
RUN_USER = "alice"
DRIVER_LIBS = ("driver/lib64", "driver/lib64/common", "driver/lib64/driver")
# Spec devices 2 on a 2-CPU machine: 2 physical cores / 2 NPUs x 2, at most 2 / 2 = 1.
OMP_READY = 1


def chroot(root: Path, script: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["chroot", str(root), "/bin/sh", "-c", script], capture_output=True,
                          text=True, check=False,
                          env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root"})
    assert done.returncode == 0, done.stderr
    return done


def site_packages(root: Path) -> Path:
    version = sorted(p.name for p in (root / "usr/lib").glob("python3.*") if p.is_dir())[-1]
    path = root / "usr/local/lib" / version / "dist-packages"
    path.mkdir(parents=True, exist_ok=True)
    return path


def fake_dist(root: Path, name: str, version: str) -> None:
    """An installed distribution as importlib.metadata sees it: a dist-info folder."""
    folder = site_packages(root) / f"{name.replace('-', '_')}-{version}.dist-info"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")


def remove_dist(root: Path, name: str) -> None:
    for folder in site_packages(root).glob(f"{name.replace('-', '_')}-*.dist-info"):
        shutil.rmtree(folder)


def make_ready(root: Path) -> None:
    """What `ascend-env install` (env role) and a site's setup add to vendor packages."""
    base = f"/{INSTALL}"
    (root / "etc/ld.so.conf.d/ascend-env.conf").write_text(
        "# Managed by ascend-env for spec sim.\n"
        + "".join(f"{base}/{d}\n" for d in DRIVER_LIBS)
        + "".join(f"{base}/cann/{d}\n" for d in ("lib64", "lib64/plugin/opskernel",
                                                  "lib64/plugin/nnengine")))
    (root / "etc/profile.d/ascend-env.sh").write_text(
        f"# Managed by ascend-env for spec sim.\nif [ -f {base}/cann/set_env.sh ]; then\n"
        f"    . {base}/cann/set_env.sh\nfi\n")
    (root / "etc/profile.d/ascend-env-threads.sh").write_text(
        f"export OMP_NUM_THREADS={OMP_READY}\nexport CPU_AFFINITY_CONF=1\n")
    for name in CANN_PYTHON_DEPS:
        fake_dist(root, name, "1.0")
    chroot(root, f"ldconfig; id {RUN_USER} >/dev/null 2>&1 || useradd -m -G HwHiAiUser "
                 f"{RUN_USER}")


def _set_key(path: Path, key: str, value: str) -> None:
    lines = [f"{key}={value}" if line.startswith(f"{key}=") else line
             for line in path.read_text().splitlines()]
    path.write_text("\n".join(lines) + "\n")


# -- faults: each breaks one thing on a ready host ---------------------------------------------

def driver_firmware_mismatch(fleet: SimFleet, host: str) -> None:
    _set_key(fleet.root(host) / INSTALL / "firmware/version.info", "Version", "6.4.12.1.241")


def cann_too_new(fleet: SimFleet, host: str) -> None:
    info = fleet.root(host) / INSTALL / "driver/version.info"
    _set_key(info, "Version", "24.1.0")
    _set_key(info, "package_version", "24.1.0")
    # Its compatibility lists decide driver.supports-cann: an inner code older than
    # any CANN 8.5.0 lists, and no CANN code of 8.5.0's in its own list (simulated values).
    _set_key(info, "Innerversion", "V100R001C13")
    _set_key(info, "compatible_version", "[V100R001C13]")


def torch_npu_other_cann(fleet: SimFleet, host: str) -> None:
    root = fleet.root(host)
    fake_dist(root, "torch", "2.1.0")
    fake_dist(root, "torch-npu", "2.1.0.post8")  # paired with CANN 8.0.RC3


def ops_other_version(fleet: SimFleet, host: str) -> None:
    cfg = fleet.root(host) / INSTALL / "cann/version.cfg"
    lines = [line.replace(":8.5.0]", ":8.3.RC1]") if line.startswith("opp_kernel_") else line
             for line in cfg.read_text().splitlines()]
    cfg.write_text("\n".join(lines) + "\n")


def no_library_path(fleet: SimFleet, host: str) -> None:
    root = fleet.root(host)
    (root / "etc/ld.so.conf.d/ascend-env.conf").unlink()
    chroot(root, "ldconfig")


def set_env_never_sourced(fleet: SimFleet, host: str) -> None:
    (fleet.root(host) / "etc/profile.d/ascend-env.sh").unlink()


def device_node_mode(fleet: SimFleet, host: str) -> None:
    chroot(fleet.root(host), "chown root:root /dev/davinci1 && chmod 0600 /dev/davinci1")


def user_not_in_group(fleet: SimFleet, host: str) -> None:
    chroot(fleet.root(host), f"gpasswd -d {RUN_USER} HwHiAiUser >/dev/null")


def health_alarm(fleet: SimFleet, host: str) -> None:
    fleet.fault(host, "health-alarm", 1)


def device_busy(fleet: SimFleet, host: str) -> None:
    fleet.fault(host, "busy", 0)


def not_started(fleet: SimFleet, host: str) -> None:
    fleet.fault(host, "not-started", 1)


def threads_wrong(fleet: SimFleet, host: str) -> None:
    (fleet.root(host) / "etc/profile.d/ascend-env-threads.sh").write_text(
        "export OMP_NUM_THREADS=64\nexport CPU_AFFINITY_CONF=1\n")


def threads_unset(fleet: SimFleet, host: str) -> None:
    (fleet.root(host) / "etc/profile.d/ascend-env-threads.sh").unlink()


def python_deps_missing(fleet: SimFleet, host: str) -> None:
    for name in ("sympy", "decorator", "absl-py"):
        remove_dist(fleet.root(host), name)


Fault = Callable[[SimFleet, str], None]


# -- what the python-deps fix needs on a simulated host: pip and a local wheelhouse ------------

WHEELHOUSE = "/root/wheels"


def give_pip_and_wheels(root: Path, names: tuple[str, ...]) -> None:
    """pip (this venv's, pure Python) and one tiny wheel per package, for an offline install."""
    import pip  # noqa: PLC0415

    dest = site_packages(root) / "pip"
    if not dest.exists():
        shutil.copytree(Path(pip.__file__).parent, dest)
    for name in names:
        build_wheel(root / WHEELHOUSE.lstrip("/"), name, "1.0")


def inventory_with(fleet: SimFleet, dest: Path, *, extra_vars: dict[str, str] | None = None,
                   ghosts: tuple[str, ...] = ()) -> Path:
    """A copy of the fleet's inventory with extra group vars and unreachable hosts."""
    text = fleet.inventory.read_text()
    lines = text.splitlines()
    at = lines.index("[sim:vars]")
    ghost_lines = [f"{name} ansible_host=127.0.0.{250 - i} ansible_port=9"
                   for i, name in enumerate(ghosts)]
    var_lines = [f"{k}='{v}'" for k, v in (extra_vars or {}).items()]
    lines = lines[:at - 1] + ghost_lines + lines[at - 1:at + 1] + var_lines + lines[at + 1:]
    dest.write_text("\n".join(lines) + "\n")
    return dest
