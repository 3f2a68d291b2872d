"""Captures the facts tests share: two provisioned hosts, garbage, and the samples."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from ascend_env.core.resources import remote_source
from ascend_env.facts import accounts, system
from ascend_env.facts.capture import (
    Capture,
    CommandResult,
    PathInfo,
    ProbeError,
    ProcessInfo,
    parse_capture,
)
from ascend_env.remote import probe

DATA = Path(__file__).resolve().parents[1] / "data"


def sample(parser: str, name: str) -> str:
    """The text of tests/data/<parser>/<name>.txt."""
    text: str = (DATA / parser / f"{name}.txt").read_text()
    return text


BASE = "/usr/local/Ascend"


def ok(stdout: str, argv: list[str] | None = None) -> CommandResult:
    return CommandResult(argv=argv or [], rc=0, stdout=stdout)


def host_910b() -> Capture:
    """A provisioned Atlas 800T A2 (two NPUs shown) with CANN 8.0.0, from the samples."""
    toolkit = sample("install_info", "toolkit-8.0.0-aarch64")
    npus = [0, 1]
    commands = {
        system.UNAME_M: ok("aarch64\n"),
        system.UNAME_R: ok("5.10.0-182.0.0.95.oe2203sp3.aarch64\n"),
        probe.NPU_SMI_INFO: ok(sample("npu_smi_info", "sim-910b-busy")),
        probe.NPU_SMI_LIST: ok("        Total Count                    : 2\n\n"
                                "        NPU ID                         : 0\n"
                                "        Chip Count                     : 1\n\n"
                                "        NPU ID                         : 1\n"
                                "        Chip Count                     : 1\n"),
        probe.LDCONFIG: ok("3 libs found in cache `/etc/ld.so.cache'\n"
                            f"\tlibascend_hal.so (libc6,AArch64) => {BASE}/driver/lib64/driver/"
                            "libascend_hal.so\n"),
        accounts.ID: ok("uid=1001(alice) gid=1001(alice) groups=1001(alice),1000(HwHiAiUser)\n"),
        probe.GETENT_PASSWD.format(user="HwHiAiUser"): ok(
            "HwHiAiUser:x:1000:1000::/home/HwHiAiUser:/bin/bash\n"),
        probe.GETENT_GROUP.format(group="HwHiAiUser"): ok("HwHiAiUser:x:1000:alice\n"),
        probe.GETENFORCE: ok("Permissive\n"),
        probe.LOGIN_ENV: ok("PATH=/usr/bin\0OMP_NUM_THREADS=8\0"),
        probe.LSCPU: ok(sample("lscpu", "debian-12-2cpu")),
        probe.FRAMEWORK_PYTHON: ok(json.dumps({
            "executable": "/opt/venv/bin/python", "version": "3.10.14", "distributions": [
                ["torch", "2.1.0+cpu", ""], ["torch_npu", "2.1.0.post8", ""],
                ["numpy", "1.26.4", ""]]})),
    }
    for npu in npus:
        board = sample("npu_smi_board", "910-mc-logs")
        commands[probe.NPU_SMI_BOARD.format(npu=npu)] = ok(
            board.replace("NPU ID                         : 0", f"NPU ID{' ' * 25}: {npu}"))
        commands[probe.NPU_SMI_HEALTH.format(npu=npu)] = ok(
            sample("npu_smi_health", "npu-level-200i-a2"))
        health = "chip-alarm-tabs" if npu == 1 else "chip-ok"
        commands[probe.NPU_SMI_CHIP_HEALTH.format(npu=npu, chip=0)] = ok(
            sample("npu_smi_health", health))
    node = PathInfo(type="char", mode="0660", owner="HwHiAiUser", group="HwHiAiUser", uid=1000,
                    gid=1000, rdev="236:10")
    return Capture(
        host="node-1.example.com", captured_at="2026-01-01T00:00:00+00:00",
        options={"install_path": BASE, "install_paths": [BASE]},
        files={
            "/etc/os-release": 'ID="openEuler"\nVERSION_ID="22.03"\n',
            "/etc/ascend_install.info": sample("ascend_install_info", "llm-action"),
            f"{BASE}/driver/version.info": sample("version_info", "driver-24.1.rc3"),
            f"{BASE}/firmware/version.info": sample("version_info", "firmware-7.1.0.11.220"),
            f"{BASE}/ascend-toolkit/latest/aarch64-linux/ascend_toolkit_install.info": toolkit,
            f"{BASE}/ascend-toolkit/latest/version.cfg": sample("version_cfg", "toolkit-8.0.0"),
            f"{BASE}/ascend-toolkit/set_env.sh": sample("set_env",
                                                         "sim-toolkit-8.0.0-old-layout"),
            f"{BASE}/nnal/atb/latest/atb/version.info": sample("atb_version_info",
                                                                "atb-8.0.0-excerpt"),
            "/sys/bus/pci/devices/0000:c1:00.0/vendor": "0x19e5\n",
            "/sys/bus/pci/devices/0000:c1:00.0/device": "0xd802\n",
            "/sys/bus/pci/devices/0000:c1:00.0/subsystem_vendor": "0x19e5\n",
            "/sys/bus/pci/devices/0000:c1:00.0/subsystem_device": "0x3000\n",
            "/sys/bus/pci/devices/0000:c1:00.0/class": "0x120000\n",
            "/sys/bus/pci/devices/0000:c1:00.0/numa_node": "0\n",
            "/proc/modules": sample("proc_modules", "driver-loaded-constructed"),
            "/sys/devices/system/node/node0/cpulist": "0-1\n",
        },
        commands=commands,
        env={"ASCEND_HOME_PATH": f"{BASE}/ascend-toolkit/latest",
             "LD_LIBRARY_PATH": f"{BASE}/ascend-toolkit/latest/lib64", "OMP_NUM_THREADS": "4"},
        paths={
            f"{BASE}/driver/tools/upgrade-tool": PathInfo(type="file", mode="0755"),
            f"{BASE}/ascend-toolkit/latest": PathInfo(type="link", target="8.0.0",
                                                      resolved=f"{BASE}/ascend-toolkit/8.0.0"),
            f"{BASE}/ascend-toolkit/set_env.sh": PathInfo(type="file"),
            "/dev/davinci0": node, "/dev/davinci1": node, "/dev/davinci_manager": node,
            "/dev/hisi_hdc": PathInfo(type="missing"),
        },
        listings={
            f"{BASE}/ascend-toolkit": ["8.0.0", "8.1.RC1", "latest", "set_env.sh"],
            f"{BASE}/ascend-toolkit/latest/lib64": ["libascendcl.so", "libhccl.so"],
            f"{BASE}/driver/lib64/driver": ["libascend_hal.so"],
            f"{BASE}/ascend-toolkit/latest/opp/built-in/op_impl/ai_core/tbe/kernel":
                ["ascend910b"],
        },
    )


def host_310p() -> Capture:
    """An Atlas 300I Duo in a container: 8.5.0 new layout, no firmware, sysfs topology and a
    cgroup quota, SELinux enforcing, MindSpore; the branches host_910b does not take."""
    toolkit = sample("install_info", "toolkit-8.5.0-new-layout")
    pci = "/sys/bus/pci/devices/0000:01:00.0"
    commands = {
        system.UNAME_M: ok("x86_64\n"),
        probe.NPU_SMI_INFO: ok(sample("npu_smi_info", "310p3-25.2.0-duo")),
        probe.NPU_SMI_LIST: ok("        Card Count                     : 2\n\n"
                                "        NPU ID                         : 2\n"
                                "        Chip Count                     : 2\n\n"
                                "        NPU ID                         : 5\n"
                                "        Chip Count                     : 1\n"),
        probe.NPU_SMI_BOARD.format(npu=2): ok(sample("npu_smi_board", "200i-dk-a2-excerpt")),
        probe.NPU_SMI_BOARD.format(npu=5): ok(sample("npu_smi_board", "invalid-card-id")),
        probe.NPU_SMI_HEALTH.format(npu=2): ok(sample("npu_smi_health", "npu-level-200i-a2")),
        probe.NPU_SMI_CHIP_HEALTH.format(npu=2, chip=1): ok(
            sample("npu_smi_health", "chip-alarm-tabs")),
        probe.LDCONFIG: ok(sample("ldconfig", "debian-12-head")),
        probe.LSMOD: ok(sample("lsmod", "sim-driver")),
        accounts.ID: CommandResult(rc=127, stderr="id: not found"),
        "id alice": ok("uid=1001(alice) gid=1001(alice) groups=1001(alice)\n"),
        probe.GETENT_PASSWD.format(user="HwHiAiUser"): ok(sample("getent_passwd", "root")),
        probe.GETENT_GROUP.format(group="HwHiAiUser"): ok(sample("getent_group", "root")),
        probe.SESTATUS: ok(sample("sestatus", "enforcing-constructed")),
        probe.LS_LABELS: ok(sample("ls_labels", "ascend-paths-constructed")),
        probe.FRAMEWORK_PYTHON: ok(json.dumps({
            "executable": "/usr/bin/python3", "version": 3.9, "prefix": "/usr",
            "distributions": [["MindSpore_Ascend", "2.4.0", ""], ["numpy", "1.26.4", ""],
                              ["numpy", "2.0.0", ""]]})),
    }
    return Capture(
        host="infer-7", captured_at="2026-02-03T04:05:06+00:00",
        options={"install_paths": [BASE, "/opt/ascend"]},
        process=ProcessInfo(uid=0, euid=0, gid=0, groups=[0], user="root", cpu_count=4,
                            affinity=[0, 1, 2, 3]),
        files={
            "/usr/lib/os-release": sample("os_release", "debian-12"),
            "/proc/sys/kernel/osrelease": "5.15.0-91-generic\n",
            f"{BASE}/driver/version.info": sample("version_info", "driver-23.0.7"),
            f"{BASE}/cann/x86_64-linux/ascend_toolkit_install.info": toolkit,
            f"{BASE}/cann/version.cfg": "toolkit_installed_version=[7.8.0.1.212:8.5.0]\n"
                                       "opp_kernel_installed_version=[7.8.0.1.212:8.5.0]\n"
                                       "bogus line\n",
            f"{BASE}/cann/set_env.sh": sample("set_env", "sim-toolkit-8.5.0-new-layout"),
            f"{BASE}/nnal/atb/set_env.sh": sample("set_env", "sim-nnal"),
            f"{BASE}/nnae/latest/ascend_nnae_install.info": sample("install_info",
                                                                    "nnae-8.0.RC3"),
            "/etc/profile.d/ascend-env-threads.sh": "export OMP_NUM_THREADS=2\n",
            **{f"{pci}/{attr}": value for attr, value in {
                "vendor": "0x19e5\n", "device": "0xd500\n", "subsystem_vendor": "0x0200\n",
                "subsystem_device": "0x0110\n", "class": "0x120000\n",
                "numa_node": "-1\n"}.items()},
            **{f"/sys/devices/system/cpu/cpu{n}/topology/core_id": f"{n // 2}\n"
               for n in range(4)},
            **{f"/sys/devices/system/cpu/cpu{n}/topology/physical_package_id": f"{n // 2}\n"
               for n in range(4)},
            "/sys/devices/system/node/node0/cpulist": "0-1\n",
            "/sys/devices/system/node/node1/cpulist": "2-3\n",
            "/sys/devices/system/cpu/online": "0-3\n",
            "/sys/fs/cgroup/cpu.max": "150000 100000\n",
            "/sys/fs/selinux/enforce": "1\n",
            "/etc/selinux/config": "SELINUX=enforcing\nSELINUXTYPE=targeted\n",
            "/proc/self/mountinfo": "1 0 0:1 / /usr/local/Ascend/driver ro - ext4 /dev/sda1\n"
                                    "2 0 0:2 / /dev/davinci0 rw - devtmpfs udev\n",
        },
        commands=commands,
        env={"ASCEND_TOOLKIT_HOME": f"{BASE}/cann", "PYTHONPATH": "/opt/py::/opt/py2",
             "PATH": "/usr/local/bin:/usr/bin", "container": "oci", "KMP_AFFINITY": "x",
             "ASCEND_OPP_PATH": f"{BASE}/cann/opp", "LD_LIBRARY_PATH": "relative:/usr/lib/"},
        paths={
            f"{BASE}/cann": PathInfo(type="link", target="cann-8.5.0",
                                     resolved=f"{BASE}/cann-8.5.0"),
            f"{BASE}/cann/set_env.sh": PathInfo(type="file", label="system_u:object_r:bin_t:s0"),
            f"{pci}/driver": PathInfo(type="link", target="../../../bus/pci/drivers/drv_pcie"),
            "/.dockerenv": PathInfo(type="file"),
            "/dev/davinci0": PathInfo(type="char", mode="0666", uid=0, gid=0, owner="root",
                                      group="root", rdev="236:0"),
            "/dev/davinci10": PathInfo(type="char", mode="0660"),
            "/dev/davinci2": PathInfo(type="char", mode="0660"),
            "/dev/davinci_manager": PathInfo(type="missing"),
            "/dev/devmm_svm": PathInfo(type="char", mode="0660", label="device_t"),
        },
        listings={
            BASE: ["cann", "cann-8.5.0", "cann-8.3.RC1", "driver", "nnal"],
            f"{BASE}/cann/opp/built-in/op_impl/ai_core/tbe/kernel": ["ascend310p"],
            "/usr/lib": ["libascend_hal.so.1", "libhccl.so"],
            "/sys/module": ["drv_devdrv", "ext4", "ascend_queue"],
        },
        errors=[ProbeError(where="/etc/ascend_install.info", error="Permission denied")],
    )


def host_garbage() -> Capture:
    junk = "\x00garbage | : = [ ]"
    return Capture(
        files={f"{BASE}/driver/version.info": "Version=not-a-version\n",
               f"{BASE}/ascend-toolkit/latest/version.cfg": "junk_line\n" + junk,
               "/etc/os-release": junk, "/proc/modules": junk},
        commands={probe.NPU_SMI_INFO: ok(junk), probe.NPU_SMI_LIST: ok(junk),
                  probe.FRAMEWORK_PYTHON: ok(junk), probe.LSCPU: ok(junk)},
        paths={"/dev/davinci0": PathInfo(type="file")})


# The hosts whose facts JSON tests/facts/golden/ holds.
GOLDEN_HOSTS: dict[str, Callable[[], Capture]] = {
    "host-910b": host_910b, "host-310p": host_310p, "empty": Capture, "garbage": host_garbage}


# CANN toolkit trees for the probe: (release, the folder it installs, its layout's link).
CANN_TREES = {"old": ("8.1.RC1", "ascend-toolkit/8.1.RC1", "ascend-toolkit/latest"),
              "new": ("8.5.0", "cann-8.5.0", "cann")}


def cann_tree(root: Path, layout: str, links: tuple[str, ...]) -> str:
    """A CANN toolkit of `layout` under root/usr/local/Ascend with only the `links` named
    (`cann`, `ascend-toolkit/latest`; `links=()` is an install stopped before it made them);
    the toolkit's folder as the host sees it."""
    version, folder, _ = CANN_TREES[layout]
    base = root / BASE.lstrip("/")
    arch = os.uname().machine
    name = "toolkit-8.5.0-new-layout" if layout == "new" else "toolkit-8.1.RC1-aarch64"
    files = {f"{folder}/{arch}-linux/ascend_toolkit_install.info":
             sample("install_info", name).replace("aarch64", arch),
             f"{folder}/version.cfg": f"toolkit_installed_version=[7.8.0.1.212:{version}]\n",
             "ascend-toolkit/set_env.sh": "export ASCEND_HOME_PATH=/usr/local/Ascend/"
                                          "ascend-toolkit/latest\n"}
    if layout == "new":
        files[f"{folder}/set_env.sh"] = "export ASCEND_HOME_PATH=/usr/local/Ascend/cann\n"
    for path, text in files.items():
        (base / path).parent.mkdir(parents=True, exist_ok=True)
        (base / path).write_text(text)
    for link in links:
        (base / link).symlink_to(os.path.relpath(base / folder, (base / link).parent))
    return f"{BASE}/{folder}"


def probe_tree(root: Path) -> Capture:
    """What the probe records of the tree under `root` (no commands run)."""
    done = subprocess.run([sys.executable, "-c", remote_source("probe"), "--root", str(root),
                           "--no-commands"], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    return parse_capture(done.stdout, where=f"probe of {root}")
