#!/usr/bin/python3
"""Install script inside every fake vendor .run (driver, firmware, toolkit, ops, nnal).

makeself extracts the payload to a temporary folder and runs this with the package's
arguments. Behaviour follows the vendor's install guides (flags, order, failures:
https://www.hiascend.com/document/detail/en/CANNCommunityEdition/900/softwareinst/instg/instg_0005.html,
https://www.hiascend.com/document/detail/zh/canncommercial/850/softwareinst/instg/instg_0008.html)
and leaves the on-disk layout that real hosts show (tests/data/real). Runs on the simulated
host with only the standard library.
"""

from __future__ import annotations

import contextlib
import datetime
import grp
import json
import os
import pwd
import shutil
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
LOG = Path("/var/log/ascend_seclog/ascend_install.log")
INSTALL_INFO = Path("/etc/ascend_install.info")
CANN_INFO = Path("/etc/Ascend/ascend_cann_install.info")
STATE = Path("/var/lib/ascend-sim/state.json")
DEFAULT_PATH = "/usr/local/Ascend"
NPU_SMI = Path("/usr/local/bin/npu-smi")
DRIVER_MODULES = ("drv_pcie_host", "drv_devdrv", "drv_devmng", "drv_davinci_intf",
                  "drv_pcie_hdc_host", "drv_dp_proc_mng", "ascend_event_sched")

MODES = ("--full", "--install", "--upgrade", "--uninstall", "--run", "--devel", "--docker")


def install_fake(fake: Path, tool: Path) -> None:
    """A fake vendor tool (a Python program) at `tool`, renamed into place: a call meanwhile
    runs the old program or the new one, never half of one."""
    tool.parent.mkdir(parents=True, exist_ok=True)
    tmp = tool.with_name(f".{tool.name}.{os.getpid()}")
    shutil.copy2(fake, tmp)
    tmp.chmod(0o755)
    tmp.replace(tool)


class Fail(Exception):
    """Installer failure: message printed as the real installers print it, exit 1."""


def log(msg: str) -> None:
    """One line per step of a run (package, version, mode); microseconds, so that tests can
    order the runs of several hosts, which share this machine's clock."""
    LOG.parent.mkdir(parents=True, exist_ok=True)
    stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S.%f")
    with LOG.open("a") as fh:
        fh.write(f"[{stamp}] {msg}\n")


def read_kv(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    if path.is_file():
        for line in path.read_text().splitlines():
            if "=" in line:
                k, v = line.split("=", 1)
                out[k.strip()] = v.strip()
    return out


def write_kv(path: Path, data: dict[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{k}={v}\n" for k, v in data.items()))


def version_key(v: str) -> tuple[int, int, int, int]:
    """Vendor order of a CANN/HDK version: X.Y.RCn < X.Y.0 < X.Y.1 (the order of https://github.com/Ascend/pytorch/blob/master/COMPATIBILITY.md)."""
    parts = v.replace("-", ".").split(".")
    major, minor = int(parts[0]), int(parts[1])
    third = parts[2].lower() if len(parts) > 2 else "0"
    if third.startswith("rc"):
        return (major, minor, 0, int(third[2:] or 0))
    return (major, minor, 1, int(third) if third.isdigit() else 0)


class Args:
    def __init__(self, argv: list[str]) -> None:
        self.modes: list[str] = []
        self.quiet = False
        self.for_all = False
        self.force = False
        self.version = False
        self.path = ""
        self.username = ""
        self.usergroup = ""
        for a in argv:
            if a in MODES:
                self.modes.append(a)
            elif a in ("--quiet", "-q"):
                self.quiet = True
            elif a == "--install-for-all":
                self.for_all = True
            elif a == "--force":
                self.force = True
            elif a == "--version":
                self.version = True
            elif a == "--nox11":
                pass
            elif a.startswith("--install-path="):
                self.path = a.split("=", 1)[1]
            elif a.startswith("--install-username="):
                self.username = a.split("=", 1)[1]
            elif a.startswith("--install-usergroup="):
                self.usergroup = a.split("=", 1)[1]
            else:
                raise Fail(f"[ERROR]Unsupported parameter: {a}")


class Package:
    def __init__(self, manifest: dict[str, Any], args: Args) -> None:
        self.m = manifest
        self.args = args
        self.kind: str = manifest["kind"]
        self.version: str = manifest["version"]
        self.root = Path(args.path or self.default_path())

    def default_path(self) -> str:
        if self.kind in ("firmware",):
            return read_kv(INSTALL_INFO).get("Driver_Install_Path_Param", DEFAULT_PATH)
        return DEFAULT_PATH

    # ---- checks shared by several kinds --------------------------------------------------

    def check_arch(self) -> None:
        arch = self.m["arch"]
        machine = os.uname().machine
        if arch not in ("any", machine):
            raise Fail(
                f"[ERROR]The architecture of the package ({arch}) is inconsistent with that "
                f"of the current environment ({machine}), install failed."
            )

    def eula(self) -> None:
        if self.args.quiet:
            return
        print(f"Do you accept the EULA to install {self.m['package_name']}? [y/n]", flush=True)
        answer = sys.stdin.readline().strip().lower()
        if answer not in ("y", "yes"):
            raise Fail("[ERROR]The EULA is not accepted, the installation exits.")

    def busy(self) -> list[str]:
        if not STATE.is_file():
            return []
        state = json.loads(STATE.read_text())
        return [str(p["pid"]) for n in state["npus"] for p in n.get("processes", [])]

    # ---- driver --------------------------------------------------------------------------

    def driver(self, mode: str) -> str:
        a = self.args
        drv = self.root / "driver"
        if mode == "--upgrade" and (a.for_all or a.username or a.usergroup):
            raise Fail("[ERROR]--upgrade cannot be used together with --install-username, "
                       "--install-usergroup or --install-for-all")
        if mode == "--uninstall" and a.quiet:
            raise Fail("[ERROR]--quiet cannot be used together with --uninstall")
        if mode in ("--upgrade", "--uninstall") and self.busy() and not a.force:
            raise Fail("The davinci nodes are occupied by some processes, please stop processes "
                       "and install or uninstall again, details in : "
                       "/var/log/ascend_seclog/ascend_install.log")
        if mode == "--uninstall":
            if not (drv / "version.info").exists():
                raise Fail("[ERROR]Driver package is not installed, nothing to uninstall.")
            self.remove_driver()
            return "Driver package uninstall success!"
        user, group = self.driver_preflight(mode)
        print("[INFO]driver install type: Direct")
        return self.driver_files(mode, user, group)

    def driver_preflight(self, mode: str) -> tuple[str, str]:
        """Checks of a driver install or upgrade; returns the running user and group."""
        a = self.args
        drv = self.root / "driver"
        if mode == "--upgrade" and not (drv / "version.info").exists():
            raise Fail("[ERROR]Driver package is not installed, --upgrade is not supported; "
                       "use --full for a first install.")
        user = a.username or read_kv(INSTALL_INFO).get("UserName", "HwHiAiUser")
        group = a.usergroup or read_kv(INSTALL_INFO).get("UserGroup", user)
        if (user, group) == ("root", "root") and not a.for_all and mode != "--upgrade":
            raise Fail("[ERROR]root:root as the running user requires --install-for-all")
        try:
            pwd.getpwnam(user)
            grp.getgrnam(group)
        except KeyError:
            raise Fail(
                f"[ERROR]The user or group ({user}:{group}) does not exist, create it first: "
                f"groupadd {group}; useradd -g {group} -d /home/{user} -m {user} -s /bin/bash"
            ) from None
        missing = [t for t in ("lspci", "ifconfig") if shutil.which(t) is None]
        if missing:
            raise Fail(f"[ERROR]The list of missing tools: {','.join(missing)}")
        headers = Path("/lib/modules") / os.uname().release / "build"
        if not headers.is_dir():
            print("[WARNING]rebuild ko has something wrong, detail in "
                  "/var/log/ascend_seclog/ascend_rebuild.log Do you want to try build driver "
                  "after input kernel absolute path? [y/n]:", flush=True)
            sys.stdin.readline()
            raise Fail("[ERROR]Driver_ko_install failed, details in : "
                       "/var/log/ascend_seclog/ascend_install.log.")
        return user, group

    def driver_files(self, mode: str, user: str, group: str) -> str:
        a = self.args
        drv = self.root / "driver"
        self.copy_tree("driver", drv)
        write_kv(drv / "version.info", self.m["version_info"])
        for tool in ("upgrade-tool", "msnpureport"):
            t = drv / "tools" / tool
            t.parent.mkdir(parents=True, exist_ok=True)
            t.write_text(f"#!/bin/sh\necho '{tool} (simulated)'\n")
            t.chmod(0o755)
        # The NPUs' network tool answers from the fleet's fabric (tests/sim/network.py).
        install_fake(HERE / "hccn_tool.py", drv / "tools" / "hccn_tool")
        script = drv / "script" / "uninstall.sh"
        script.parent.mkdir(parents=True, exist_ok=True)
        script.write_text("#!/bin/sh\n# simulated driver uninstaller\n")
        script.chmod(0o755)
        dcmi = Path("/usr/local/dcmi")
        dcmi.mkdir(parents=True, exist_ok=True)
        shutil.copy2(HERE / "payload/driver/lib64/driver/libdcmi.so", dcmi / "libdcmi.so")
        (dcmi / "dcmi_interface_api.h").write_text("/* simulated DCMI header */\n")
        self.install_npu_smi()
        info = read_kv(INSTALL_INFO)
        if mode == "--full" or "UserName" not in info:
            info.update({"UserName": user, "UserGroup": group})
        info["Driver_Install_Type"] = "full"
        info["Driver_Install_Path_Param"] = str(self.root)
        if mode != "--upgrade":
            info["Driver_Install_For_All"] = "yes" if a.for_all else "no"
        info.setdefault("Driver_Install_Mode", "normal")
        write_kv(INSTALL_INFO, info)
        self.make_nodes(user, group)
        self.load_modules(True)
        self.fire_armed_faults()
        if mode == "--upgrade":
            return "Driver package upgrade success! Reboot needed for installation/upgrade to " \
                   "take effect!"
        return "Driver package install success! Reboot needed for installation/upgrade to " \
               "take effect!"

    def fire_armed_faults(self) -> None:
        """An NPU armed with `fault HOST health-alarm-after-driver` comes out of this install's
        hot reset in Alarm (what npu-smi then shows), as after a reset that failed."""
        if not STATE.is_file():
            return
        state = json.loads(STATE.read_text())
        armed = [n for n in state["npus"] if n.get("after_driver")]
        for n in armed:
            n.update(fault=n["after_driver"]["fault"], error_code=n["after_driver"]["error_code"],
                     processes=[], after_driver=None)
        if armed:
            tmp = STATE.with_suffix(".tmp")
            tmp.write_text(json.dumps(state, indent=2, sort_keys=True) + "\n")
            tmp.replace(STATE)

    def install_npu_smi(self) -> None:
        install_fake(HERE / "npu_smi.py", NPU_SMI)

    def make_nodes(self, user: str, group: str) -> None:
        uid, gid = pwd.getpwnam(user).pw_uid, grp.getgrnam(group).gr_gid
        nodes: list[tuple[str, int]] = [("davinci_manager", 0), ("devmm_svm", 1),
                                        ("hisi_hdc", 2)]
        if STATE.is_file():
            state = json.loads(STATE.read_text())
            for n in state["npus"]:
                if n.get("fault") == "missing":
                    continue
                for c in range(state["chips_per_npu"]):
                    dev = n["device_base"] + c
                    nodes.append((f"davinci{dev}", 10 + dev))
        for name, minor in nodes:
            p = Path("/dev") / name
            if p.exists():
                p.unlink()
            # Major 236 is arbitrary: the shared kernel has no such driver behind it.
            os.mknod(p, 0o660 | 0o020000, os.makedev(236, minor))
            os.chown(p, uid, gid)
            Path(p).chmod(0o660)

    def load_modules(self, loaded: bool) -> None:
        for name in DRIVER_MODULES:
            d = Path("/sys/module") / name
            if loaded:
                d.mkdir(parents=True, exist_ok=True)
                (d / "initstate").write_text("live\n")
                (d / "refcnt").write_text("0\n")
                (d / "coresize").write_text("102400\n")
            elif d.exists():
                shutil.rmtree(d)

    def remove_driver(self) -> None:
        shutil.rmtree(self.root / "driver", ignore_errors=True)
        shutil.rmtree("/usr/local/dcmi", ignore_errors=True)
        NPU_SMI.unlink(missing_ok=True)
        for p in Path("/dev").glob("davinci*"):
            p.unlink()
        for name in ("devmm_svm", "hisi_hdc"):
            (Path("/dev") / name).unlink(missing_ok=True)
        self.load_modules(False)
        info = {k: v for k, v in read_kv(INSTALL_INFO).items() if not k.startswith("Driver_")}
        if any(k.startswith("Firmware_") for k in info):
            write_kv(INSTALL_INFO, info)
        else:
            INSTALL_INFO.unlink(missing_ok=True)

    # ---- firmware ------------------------------------------------------------------------

    def firmware(self, mode: str) -> str:
        fw = self.root / "firmware"
        if mode == "--uninstall":
            if self.args.quiet:
                raise Fail("[ERROR]--quiet cannot be used together with --uninstall")
            shutil.rmtree(fw, ignore_errors=True)
            info = {k: v for k, v in read_kv(INSTALL_INFO).items()
                    if not k.startswith("Firmware_")}
            write_kv(INSTALL_INFO, info)
            return "Firmware package uninstall success!"
        drv = self.root / "driver"
        if not ((drv / "version.info").is_file() and (drv / "tools/upgrade-tool").is_file()):
            raise Fail("[ERROR]The driver is not installed or not installed completely, "
                       "install the driver package first.")
        if mode == "--upgrade" and not (fw / "version.info").exists():
            raise Fail("[ERROR]Firmware package is not installed, --upgrade is not supported; "
                       "use --full for a first install.")
        write_kv(fw / "version.info", self.m["version_info"])
        script = fw / "script" / "uninstall.sh"
        script.parent.mkdir(parents=True, exist_ok=True)
        script.write_text("#!/bin/sh\n# simulated firmware uninstaller\n")
        script.chmod(0o755)
        info = read_kv(INSTALL_INFO)
        info["Firmware_Install_Type"] = "full"
        info["Firmware_Install_Path_Param"] = str(self.root)
        write_kv(INSTALL_INFO, info)
        return ("Firmware package installed successfully! Reboot now or after driver "
                "installation for the installation/upgrade to take effect.")

    # ---- CANN (toolkit, ops/kernels, nnal) ----------------------------------------------

    def cann_home(self, version: str) -> Path:
        if version_key(version) >= (8, 5, 1, 0) and "alpha" not in version:
            return self.root / f"cann-{version}"
        return self.root / "ascend-toolkit" / version

    def installed_toolkits(self) -> list[str]:
        out: list[str] = []
        for d in self.root.glob("cann-*"):
            if (d / "version.cfg").is_file() and not d.is_symlink():
                out.append(d.name[len("cann-"):])
        tk = self.root / "ascend-toolkit"
        if tk.is_dir():
            for d in tk.iterdir():
                if not d.is_symlink() and (d / "version.cfg").is_file():
                    out.append(d.name)
        return out

    def toolkit(self, mode: str) -> str:
        ver, arch = self.version, self.m["arch"]
        home = self.cann_home(ver)
        new = home.name.startswith("cann-")
        if mode == "--uninstall":
            return self.toolkit_uninstall(home)
        present = [v for v in self.installed_toolkits() if v != ver]
        if present and mode != "--upgrade":
            older = [v for v in present if version_key(v) < version_key(ver)]
            if new and older:
                raise Fail(f"[ERROR]Ascend-cann-toolkit {', '.join(older)} is installed; to "
                           f"install {ver} use --upgrade or uninstall the old version first.")
        if mode == "--upgrade":
            if not present:
                raise Fail("[ERROR]No Ascend-cann-toolkit is installed, --upgrade is not "
                           "supported; use --install.")
            newer = [v for v in present if version_key(v) > version_key(ver)]
            if newer:
                raise Fail(f"[ERROR]Ascend-cann-toolkit {newer[0]} is newer than {ver}; "
                           f"--upgrade cannot downgrade, use --uninstall then --install.")
            for v in present:
                shutil.rmtree(self.cann_home(v), ignore_errors=True)
        plat = home / f"{arch}-linux"
        self.copy_tree("toolkit", plat)
        (home / "lib64").unlink(missing_ok=True)
        (home / "lib64").symlink_to(f"{arch}-linux/lib64")
        for sub in ("runtime", "compiler", "opp/built-in/op_impl/ai_core/tbe/op_tiling",
                    "toolkit/tools", "bin", "compiler/ccec_compiler/bin", "tools/aml/lib64",
                    "lib64/plugin/opskernel", "lib64/plugin/nnengine", "include"):
            (home / sub).mkdir(parents=True, exist_ok=True)
        for comp in ("runtime", "compiler", "opp", "toolkit"):
            write_kv(home / comp / "version.info", {"Version": ver})
        tbe = home / "python/site-packages/tbe/common"
        tbe.mkdir(parents=True, exist_ok=True)
        (tbe.parent / "__init__.py").write_text("# simulated CANN tbe package\n")
        (tbe / "__init__.py").write_text("")
        write_kv(plat / "ascend_toolkit_install.info", {
            "package_name": "Ascend-cann-toolkit",
            "version": ver,
            "innerversion": self.m["innerversion"],
            "compatible_version": self.m["compatible_version"],
            "arch": arch,
            "os": "linux",
            "path": str(plat),
        })
        self.write_version_cfg(home, kernels=False)
        tk = self.root / "ascend-toolkit"
        tk.mkdir(parents=True, exist_ok=True)
        latest = tk / "latest"
        if latest.is_symlink() or latest.exists():
            latest.unlink()
        if new:
            latest.symlink_to(f"../{home.name}")
            cann = self.root / "cann"
            if cann.is_symlink():
                cann.unlink()
            cann.symlink_to(home.name)
            (home / "set_env.sh").write_text(set_env(self.root, ver, new=True))
        else:
            latest.symlink_to(ver)
        (tk / "set_env.sh").write_text(set_env(self.root, ver, new=new))
        write_kv(CANN_INFO, {"Install_Path": str(self.root)})
        return "Ascend-cann-toolkit install success"

    def toolkit_uninstall(self, home: Path) -> str:
        if not home.is_dir():
            raise Fail(f"[ERROR]Ascend-cann-toolkit {self.version} is not installed in "
                       f"{self.root}.")
        shutil.rmtree(home)
        for link in (self.root / "cann", self.root / "ascend-toolkit" / "latest"):
            if link.is_symlink() and not link.exists():
                link.unlink()
        if not self.installed_toolkits():
            (self.root / "ascend-toolkit" / "set_env.sh").unlink(missing_ok=True)
            CANN_INFO.unlink(missing_ok=True)
        return "Ascend-cann-toolkit uninstall success"

    def write_version_cfg(self, home: Path, kernels: bool) -> None:
        build = self.m["component_build"]
        comps = ["runtime", "compiler", "hccl", "opp", "toolkit", "aoe", "ncs"]
        if kernels or ((home / "version.cfg").is_file() and "opp_kernel" in (
            home / "version.cfg"
        ).read_text()):
            comps.append("opp_kernel")
        lines = ["# version: 1.0"]
        for what in ("running", "upgrade", "installed"):
            lines += [f"{c}_{what}_version=[{build}:{self.version}]" for c in comps]
        (home / "version.cfg").write_text("\n".join(lines) + "\n")

    def ops(self, mode: str) -> str:
        ver = self.version
        home = self.cann_home(ver)
        name = self.m["package_name"]
        kdir = home / "opp/built-in/op_impl/ai_core/tbe/kernel" / self.m["soc"]
        if mode == "--uninstall":
            shutil.rmtree(kdir, ignore_errors=True)
            return f"{name} uninstall success"
        if not (home / "version.cfg").is_file():
            found = ", ".join(sorted(self.installed_toolkits())) or "none"
            raise Fail(f"[ERROR]{name} {ver} requires Ascend-cann-toolkit {ver} in the same "
                       f"install path ({self.root}); installed toolkit version(s): {found}.")
        kernel_root = kdir.parent
        others = [d.name for d in kernel_root.iterdir()] if kernel_root.is_dir() else []
        if home.name.startswith("cann-") and [o for o in others if o != self.m["soc"]]:
            raise Fail(f"[ERROR]Ops of another chip ({others[0]}) are installed in {self.root}; "
                       f"install each chip's toolkit and ops into its own path.")
        kdir.mkdir(parents=True, exist_ok=True)
        (kdir / "binary_info_config.json").write_text(json.dumps({"chip": self.m["chip"]}))
        self.write_version_cfg(home, kernels=True)
        return f"{name} install success"

    def nnal(self, mode: str) -> str:
        ver = self.version
        base = self.root / "nnal" / "atb"
        if mode == "--uninstall":
            shutil.rmtree(base / ver, ignore_errors=True)
            return "Ascend-cann-nnal uninstall success"
        home = os.environ.get("ASCEND_TOOLKIT_HOME") or os.environ.get("ASCEND_HOME_PATH")
        if not home or not Path(home).is_dir():
            raise Fail("[ERROR]The CANN toolkit environment is not set; run 'source "
                       f"{self.root}/ascend-toolkit/set_env.sh' (or cann/set_env.sh) first.")
        cfg = Path(home) / "version.cfg"
        have = "none"
        if cfg.is_file():
            for line in cfg.read_text().splitlines():
                if line.startswith("toolkit_installed_version=["):
                    have = line.rstrip("]").rsplit(":", 1)[1]
        if have != ver:
            raise Fail(f"[ERROR]Ascend-cann-nnal {ver} requires Ascend-cann-toolkit {ver}; "
                       f"the sourced toolkit is {have}.")
        for abi in ("cxx_abi_0", "cxx_abi_1"):
            d = base / ver / "atb" / abi
            self.copy_tree("nnal", d / "lib")
            for sub in ("bin", "examples", "tests/atbopstest"):
                (d / sub).mkdir(parents=True, exist_ok=True)
        (base / ver / "atb" / "version.info").write_text(
            f"Ascend-cann-atb : {ver}\nAscend-cann-atb Version : {ver}.B100\n"
            f"Platform : {self.m['arch']}\n"
        )
        latest = base / "latest"
        if latest.is_symlink():
            latest.unlink()
        latest.symlink_to(ver)
        (base / "set_env.sh").write_text(nnal_env(base))
        return "Ascend-cann-nnal install success"

    # ---- plumbing ------------------------------------------------------------------------

    def copy_tree(self, part: str, dest: Path) -> None:
        src = HERE / "payload" / part
        if src.is_dir():
            shutil.copytree(src, dest, dirs_exist_ok=True, symlinks=True)
        else:
            dest.mkdir(parents=True, exist_ok=True)

    def run(self) -> str:
        a = self.args
        if a.version:
            return self.version
        if len(a.modes) != 1:
            raise Fail("[ERROR]Exactly one of " + ", ".join(self.valid_modes())
                       + " is required; see --help.")
        mode = a.modes[0]
        if mode not in self.valid_modes():
            raise Fail(f"[ERROR]{mode} is not supported by {self.m['package_name']}.")
        if self.kind in ("toolkit", "ops", "nnal") and a.quiet and mode not in (
            "--install", "--upgrade", "--full"
        ):
            raise Fail("[ERROR]--quiet must be used together with --install or --upgrade.")
        if mode != "--uninstall":
            self.check_arch()
            if self.kind in ("toolkit", "ops", "nnal"):
                self.eula()
        log(f"{self.m['package_name']} {self.version} {' '.join(sys.argv[1:])} start")
        if self.kind == "driver":
            msg = self.driver(mode)
        elif self.kind == "firmware":
            msg = self.firmware(mode)
        elif self.kind == "toolkit":
            msg = self.toolkit(mode)
        elif self.kind == "ops":
            msg = self.ops(mode)
        else:
            msg = self.nnal(mode)
        log(f"{self.m['package_name']} {self.version} {mode} success")
        return msg

    def valid_modes(self) -> tuple[str, ...]:
        if self.kind == "driver":
            return ("--full", "--run", "--devel", "--docker", "--upgrade", "--uninstall")
        if self.kind == "firmware":
            return ("--full", "--run", "--upgrade", "--uninstall")
        if self.kind == "toolkit":
            return ("--install", "--full", "--devel", "--upgrade", "--uninstall")
        return ("--install", "--devel", "--upgrade", "--uninstall")


def set_env(root: Path, ver: str, new: bool) -> str:
    """The toolkit's set_env.sh with the variables the official images copy (https://github.com/Ascend/cann-container-image)."""
    if new:
        home = f"{root}/cann-{ver}"
        head = (f'export ASCEND_TOOLKIT_HOME={home}\n'
                f'export ASCEND_TOOLKIT_LATEST_HOME={root}/ascend-toolkit/latest\n')
    else:
        home = f"{root}/ascend-toolkit/latest"
        head = f"export ASCEND_TOOLKIT_HOME={home}\n"
    h = "${ASCEND_TOOLKIT_HOME}"
    drv = f"{root}/driver/lib64"
    path_extra = (f":{h}/tools/profiler/bin:{h}/tools/ascend_system_advisor/asys"
                  f":{h}/tools/show_kernel_debug_data:{h}/tools/msobjdump") if new else ""
    return (
        "#!/bin/sh\n# simulated CANN toolkit environment (ascend-env tests)\n"
        + head
        + f"export ASCEND_HOME_PATH={h}\n"
        + f"export ASCEND_OPP_PATH={h}/opp\n"
        + f"export ASCEND_AICPU_PATH={h}\n"
        + f"export TOOLCHAIN_HOME={h}/toolkit\n"
        + f"export LD_LIBRARY_PATH={drv}:{drv}/common:{drv}/driver:{h}/lib64:"
        f"{h}/lib64/plugin/opskernel:{h}/lib64/plugin/nnengine:"
        f"{h}/opp/built-in/op_impl/ai_core/tbe/op_tiling:{h}/tools/aml/lib64:"
        f"{h}/tools/aml/lib64/plugin:$LD_LIBRARY_PATH\n"
        + f"export PYTHONPATH={h}/python/site-packages:"
        f"{h}/opp/built-in/op_impl/ai_core/tbe:$PYTHONPATH\n"
        + f"export PATH={h}/bin:{h}/compiler/ccec_compiler/bin:{h}/tools/ccec_compiler/bin"
        f"{path_extra}:$PATH\n"
    )


def nnal_env(base: Path) -> str:
    return f"""#!/bin/bash
# simulated NNAL (ATB) environment (ascend-env tests); accepts --cxx_abi=0|1
abi=1
for arg in "$@"; do
    case "$arg" in --cxx_abi=*) abi="${{arg#--cxx_abi=}}" ;; esac
done
export ATB_HOME_PATH={base}/latest/atb/cxx_abi_${{abi}}
export LD_LIBRARY_PATH=${{ATB_HOME_PATH}}/lib:${{ATB_HOME_PATH}}/examples:\
${{ATB_HOME_PATH}}/tests/atbopstest:$LD_LIBRARY_PATH
export PATH=${{ATB_HOME_PATH}}/bin:$PATH
export ATB_STREAM_SYNC_EVERY_KERNEL_ENABLE=0
export ATB_STREAM_SYNC_EVERY_RUNNER_ENABLE=0
export ATB_STREAM_SYNC_EVERY_OPERATION_ENABLE=0
export ATB_OPSRUNNER_KERNEL_CACHE_LOCAL_COUNT=1
export ATB_OPSRUNNER_KERNEL_CACHE_GLOABL_COUNT=5
export ATB_WORKSPACE_MEM_ALLOC_ALG_TYPE=1
export ATB_COMPARE_TILING_EVERY_KERNEL=0
export ATB_SHARE_MEMORY_NAME_SUFFIX=""
export ATB_MATMUL_SHUFFLE_K_ENABLE=1
export LCCL_DETERMINISTIC=0
export LCCL_PARALLEL=0
"""


def main(argv: list[str]) -> int:
    # makeself runs us under umask 077; the vendor trees are world-readable (root 755).
    os.umask(0o022)
    manifest = json.loads((HERE / "manifest.json").read_text())
    try:
        args = Args(argv)
        print(Package(manifest, args).run())
        return 0
    except Fail as exc:
        print(str(exc), file=sys.stderr)
        with contextlib.suppress(OSError):
            log(f"{manifest['package_name']} {manifest['version']}: {exc}")
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
