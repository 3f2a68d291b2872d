#!/usr/bin/env python3
"""Capture the raw state of one Ascend host (or container, or chroot) as one JSON document.

Runs ON the target with only the standard library, under Python 3.8 to 3.12, after the
source of probe_io.py (how it reads files and runs commands), as one text:
`python3 -c "$(cat probe_io.py probe.py)" [--install-path P] [--python PY] [--root DIR]
[--no-commands]` (what `ascend-env collect` sends: ascend_env.core.resources.remote_source).
It records text as found (file contents, command outputs with exit codes, environment,
stat of paths) and parses nothing it does not need to decide what to read next; all
interpretation lives in ascend_env/facts/ (DESIGN.md, "Capture raw, parse centrally").
"""

import argparse
import datetime
import json
import os
import re
import shutil
import sys
import time
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

if __name__ != "__main__":  # imported; run as a program, probe_io's source ran first
    from .probe_io import DEFAULT_JOBS, Commands, Job, Json, Tree, process_info

# The docstring's first line (on a target probe_io's docstring comes first).
DESCRIPTION = ("Capture the raw state of one Ascend host (or container, or chroot) as one JSON "
               "document.")
SCHEMA = "ascend-env/capture/v1"
PROBE_VERSION = "1"
DEFAULT_INSTALL_PATH = "/usr/local/Ascend"
DEFAULT_TIMEOUT_S = 15.0

# Command keys that ascend_env/facts looks up: the command line itself, so a capture reads plainly.
NPU_SMI_INFO = "npu-smi info"
NPU_SMI_LIST = "npu-smi info -l"
NPU_SMI_BOARD = "npu-smi info -t board -i {npu}"
NPU_SMI_HEALTH = "npu-smi info -t health -i {npu}"
NPU_SMI_CHIP_HEALTH = "npu-smi info -t health -i {npu} -c {chip}"
# Only where the `npu-smi info` table is an A3 one (its chip rows name a `Phy-ID`): each die's
# SuperPoD ids (spod-info) and which logical device each (NPU, chip) is (`-m`).
A3_TABLE_MARK = "Phy-ID"
NPU_SMI_MAP = "npu-smi info -m"
NPU_SMI_SPOD = "npu-smi info -t spod-info -i {npu} -c {chip}"
# A health word but OK in `npu-smi info` makes the probe read the health pages (alarm codes):
# https://hiascend.com/document/detail/zh/Atlas%20300I%20Pro%20Inference%20Card/Atlas%20300I%20Pro%20Inference%20Card/300Ipro_015.html
UNHEALTHY = frozenset(("warning", "alarm", "critical", "unknown"))
LSPCI = "lspci -D -n -d 19e5:"  # only where sysfs shows no Huawei function (capture_pci)
LSMOD = "lsmod"
LDCONFIG = "ldconfig -p"
LSCPU = "lscpu -p=CPU,CORE,SOCKET,NODE"
GETENFORCE = "getenforce"
SESTATUS = "sestatus"
ID_USER = "id {user}"
GETENT_PASSWD = "getent passwd {user}"
GETENT_GROUP = "getent group {group}"
# Followed by the Ascend paths that exist; only where SELinux is on (without it every label
# is "?"). The labels themselves are also in "paths" (the security.selinux attribute).
LS_LABELS = "ls -Zd"
# What a login shell gets (profile.d, set_env.sh sourced from profiles): jobs started over
# ssh or by a scheduler often get that rather than the probe's own environment.
LOGIN_ENV = "bash -lc 'env -0'"
# The NPUs' own network ports (RoCE), per logical device id `{dev}` (the /dev/davinci<N>
# numbers); argv runs the hccn_tool the driver installed, else the one on PATH.
HCCN_TOOL = "/driver/tools/hccn_tool"  # under each install path
HCCN_IP = "hccn_tool -i {dev} -ip -g"
HCCN_LINK = "hccn_tool -i {dev} -link -g"
HCCN_LINK_STAT = "hccn_tool -i {dev} -link_stat -g"  # up/down counts: a flapping port
HCCN_HEALTH = "hccn_tool -i {dev} -net_health -g"
HCCN_NETDETECT = "hccn_tool -i {dev} -netdetect -g"
HCCN_GATEWAY = "hccn_tool -i {dev} -gateway -g"
HCCN_LLDP = "hccn_tool -i {dev} -lldp -g"
HCCN_TLS = "hccn_tool -i {dev} -tls -g"
HCCN_QUERIES = (HCCN_IP, HCCN_LINK, HCCN_LINK_STAT, HCCN_HEALTH, HCCN_NETDETECT, HCCN_GATEWAY,
                HCCN_LLDP, HCCN_TLS)
# The optical module is read over the card's I2C bus (hccn_tool knows "I2c is busy"), so only
# for ports whose link is not UP: there a missing module is the likely cause.
HCCN_OPTICAL = "hccn_tool -i {dev} -optical -g"
IP_ADDR = "ip -o addr show"  # the host's own interfaces
IP_LINK = "ip -o link show"  # their state (UP, DOWN), which `ip -o addr` does not print
# The framework interpreter's command line holds a long snippet; the key names it instead and
# the record's argv keeps the real command.
FRAMEWORK_PYTHON = "framework-python -c distributions"

DRIVER_USER = "HwHiAiUser"
HUAWEI_PCI_VENDOR = "0x19e5"
PCI_ATTRS = ("vendor", "device", "subsystem_vendor", "subsystem_device", "class", "revision",
             "numa_node", "local_cpulist", "current_link_speed", "current_link_width")
DEVICE_NODES = ("davinci_manager", "davinci_manager_docker", "devmm_svm", "hisi_hdc")

# Sonames torch_npu links (readelf -d of the wheels of
# https://pypi.org/project/torch-npu/2.7.1.post2/) plus what it and npu-smi load at run time.
# `ldconfig -p` lists every library on the host; only these lines are kept.
ASCEND_SONAMES = (
    "libascendcl.so", "libhccl.so", "libacl_op_compiler.so", "libge_runner.so", "libgraph.so",
    "libacl_tdt_channel.so", "libfmk_parser.so", "libascend_protobuf.so", "libatb.so",
    "libascend_hal.so", "libdcmi.so", "libc_sec.so", "libmmpa.so", "libruntime.so",
    "libopapi.so", "libtorch_npu.so",
)
SONAMES_KEPT = "only the Ascend sonames (those torch_npu links, https://pypi.org/project/torch-npu/)"

# Environment that matters to an Ascend job; everything else (tokens, keys, proxies) stays out.
ENV_NAMES = ("LD_LIBRARY_PATH", "LD_PRELOAD", "PYTHONPATH", "PYTHONHOME", "PATH", "VIRTUAL_ENV",
             "CONDA_PREFIX", "TOOLCHAIN_HOME", "CMAKE_PREFIX_PATH", "TASK_QUEUE_ENABLE",
             "CPU_AFFINITY_CONF", "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "container",
             "BISHENG_INSTALL_PATH")
ENV_PREFIXES = ("ASCEND_", "ATB_", "HCCL_", "LCCL_", "OMP_", "KMP_", "GOMP_", "MKL_",
                "OPENBLAS_", "TORCH_", "PYTORCH_", "NPU_", "MS_")

# Lines of /proc/self/mountinfo worth keeping: what a container got from the host.
MOUNT_WORDS = ("Ascend", "davinci", "dcmi", "npu-smi", "hccn", "devmm", "hisi_hdc")

# Run by the framework interpreter: installed distributions from metadata, nothing imported
# from them (importing torch would autoload torch_npu and fail without CANN,
# https://github.com/pytorch/pytorch/blob/main/torch/__init__.py).
# The headers are read directly where importlib.metadata finds them (a *.dist-info or
# *.egg-info folder, or an egg-info file, in each sys.path entry) because a framework
# environment may be older than importlib.metadata (Python 3.8); written for Python 3.6+.
DISTRIBUTIONS_SNIPPET = r"""
import json, os, sys
out = {"executable": sys.executable, "version": sys.version.split()[0],
       "prefix": sys.prefix, "path": sys.path, "distributions": []}
for entry in sys.path:
    try:
        names = sorted(os.listdir(entry or "."))
    except OSError:
        continue
    for name in names:
        if not name.endswith((".dist-info", ".egg-info")):
            continue
        where = os.path.join(entry, name)
        meta = where
        if os.path.isdir(where):
            meta = os.path.join(where, "METADATA" if name.endswith(".dist-info") else "PKG-INFO")
        fields = {}
        try:
            with open(meta, encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    if not line.strip():
                        break
                    key, _, value = line.partition(":")
                    if not line[0].isspace():
                        fields.setdefault(key.strip(), value.strip())
        except OSError:
            continue
        if fields.get("Name"):
            out["distributions"].append([fields["Name"], fields.get("Version", ""), where])
print(json.dumps(out))
"""
# `LOGIN_ENV` quotes its script; every other key is its argv, split on spaces.
ARGV = {LOGIN_ENV: ["bash", "-lc", "env -0"]}


def _argv(key: str) -> List[str]:
    return ARGV.get(key) or key.split()


def _env_wanted(name: str) -> bool:
    return name in ENV_NAMES or name.startswith(ENV_PREFIXES)


def _soname(name: str) -> bool:
    return name.split(".so", 1)[0] + ".so" in ASCEND_SONAMES


def _kv(text: str) -> Dict[str, str]:
    pairs = (line.split("=", 1) for line in text.splitlines() if "=" in line)
    return {key.strip(): value.strip() for key, value in pairs}


def _keep(key: str, record: Json) -> Optional[str]:
    """Cut what must not leave the host out of a command's record; what was kept."""
    if key == LDCONFIG:
        # The cache lists every library on the host; keep the header and ours.
        lines = record["stdout"].splitlines(True)
        record["stdout"] = "".join(line for i, line in enumerate(lines)
                                   if i == 0 or _soname(line.strip().split(" ", 1)[0]))
        return SONAMES_KEPT
    if key == LOGIN_ENV:
        # The same allow-list as `env`: a login environment holds tokens too.
        record["stdout"] = "".join(item + "\0" for item in record["stdout"].split("\0")
                                   if _env_wanted(item.partition("=")[0]))
        return "only the variables `env` keeps"
    return None


def _unhealthy(table: str) -> bool:
    """A health word but OK in an npu-smi table."""
    return not UNHEALTHY.isdisjoint(re.findall(r"\w+", table.lower()))


def _npu_ids(text: str) -> List[Tuple[str, int]]:
    """(NPU ID, chip count) pairs of `npu-smi info -l`; the probe needs them for its next step."""
    found: List[Tuple[str, int]] = []
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if not sep or not value.isdigit():
            continue
        if key == "NPU ID":
            found.append((value, 1))
        elif key == "Chip Count" and found:
            found[-1] = (found[-1][0], min(int(value), 8))
    return found


# -- what to capture --------------------------------------------------------------------------

def install_paths(tree: Tree, install_path: str) -> List[str]:
    """--install-path, plus any other path the install records or environment name."""
    found = [install_path]
    for path, keys in (("/etc/ascend_install.info",
                        ("Driver_Install_Path_Param", "Firmware_Install_Path_Param")),
                       ("/etc/Ascend/ascend_cann_install.info", ("Install_Path",))):
        for key, value in _kv(tree.read(path) or "").items():
            if key in keys and value.startswith("/"):
                found.append(value.rstrip("/") or "/")
    home = os.path.expanduser("~")
    if home.startswith("/") and os.path.isdir(tree.real(home + "/Ascend")):
        # non-root CANN installs (--install-path's default,
        # https://www.hiascend.com/document/detail/en/canncommercial/850/softwareinst/instg/instg_0042.html)
        found.append(home + "/Ascend")
    return list(dict.fromkeys(found))


# What the probe records under each install path (INSTALL), each CANN home in it (CANN_HOME)
# and / (SYSTEM): "stat" (type, mode, owner, link target, label), "list" (a folder's names),
# "read" (the text). A pattern with * ? [ stands for every match; a new file is a line here.
INSTALL = {
    "stat": ("", "/driver", "/driver/tools/upgrade-tool", HCCN_TOOL, "/driver/lib64",
             "/driver/lib64/common", "/driver/lib64/driver", "/firmware", "/ascend-toolkit",
             "/ascend-toolkit/latest", "/ascend-toolkit/set_env.sh", "/cann", "/cann/set_env.sh",
             "/nnal", "/nnal/atb/latest", "/nnal/atb/set_env.sh", "/nnae/latest", "/nnrt/latest",
             "/toolbox/latest", "/cann-*", "/ascend-toolkit/*"),
    "list": ("", "/ascend-toolkit", "/nnal/atb"),
    "read": ("/driver/version.info", "/firmware/version.info", "/ascend-toolkit/set_env.sh",
             "/cann/set_env.sh", "/nnae/*/ascend_nnae_install.info", "/nnae/*/version.cfg",
             "/nnae/set_env.sh", "/nnrt/*/*/ascend_nnrt_install.info",
             "/tfplugin/*/ascend_tfplugin_install.info", "/nnal/atb/set_env.sh",
             "/nnal/atb/*/atb/version.info", "/toolbox/*/ascend_tool_box_install.info",
             "/toolbox/*/*/ascend_tool_box_install.info", "/toolbox/set_env.sh"),
}
CANN_HOME = {
    "stat": ("",), "list": ("/opp/built-in/op_impl/ai_core/tbe/kernel",),
    "read": ("/version.cfg", "/ascend_*_install.info", "/*/ascend_*_install.info",
             "/compiler/version.info", "/runtime/version.info", "/opp/version.info",
             "/set_env.sh"),
}
# Folders under each install path searched for the Ascend sonames, beside LD_LIBRARY_PATH's.
LIBRARY_DIRS = ("/driver/lib64", "/driver/lib64/common", "/driver/lib64/driver",
                "/ascend-toolkit/latest/lib64", "/cann/lib64",
                "/nnal/atb/latest/atb/cxx_abi_0/lib", "/nnal/atb/latest/atb/cxx_abi_1/lib")
# CPU and NUMA topology, device nodes, OS, kernel, SELinux, containers; the Ascend profile.d
# and ld.so.conf.d files with their owner and mode (install compares its own with them).
SYSTEM = {
    "stat": ("/dev/davinci[0-9]*", "/dev/vdavinci[0-9]*", *("/dev/" + n for n in DEVICE_NODES),
             "/usr/local/dcmi", "/usr/local/dcmi/libdcmi.so", "/usr/local/bin/npu-smi",
             "/usr/local/sbin/npu-smi", "/etc/ascend_install.info", "/etc/Ascend",
             "/.dockerenv", "/run/.containerenv", "/var/log/npu/slog",
             "/etc/profile.d/*scend*", "/etc/ld.so.conf.d/*scend*"),
    "list": ("/sys/module", "/etc/profile.d"),
    "read": ("/etc/ld.so.conf", "/etc/ld.so.conf.d/*.conf", "/sys/devices/system/cpu/online",
             "/sys/devices/system/cpu/present", "/sys/devices/system/cpu/possible",
             "/sys/devices/system/cpu/cpu*/topology/core_id",
             "/sys/devices/system/cpu/cpu*/topology/physical_package_id",
             "/sys/devices/system/node/online", "/sys/devices/system/node/node*/cpulist",
             "/sys/fs/cgroup/cpu.max", "/sys/fs/cgroup/cpuset.cpus.effective",
             "/etc/os-release", "/proc/modules", "/proc/sys/kernel/osrelease", "/proc/1/cgroup",
             "/proc/self/cgroup", "/etc/selinux/config", "/sys/fs/selinux/enforce",
             "/etc/hccn.conf", "/etc/profile.d/*scend*"),
}


def capture_area(tree: Tree, what: Mapping[str, Sequence[str]], prefix: str = "") -> None:
    """Stat, list and read the paths of one area (INSTALL, CANN_HOME, SYSTEM) under `prefix`."""
    for pattern in what["stat"]:
        for path in tree.expand(prefix + pattern):
            tree.stat(path)
    for pattern in what["list"]:
        tree.listdir(prefix + pattern)
    for pattern in what["read"]:
        for path in tree.expand(prefix + pattern):
            if path not in tree.files:
                tree.read(path)


def cann_homes(tree: Tree, base: str) -> List[str]:
    homes = tree.glob(base + "/ascend-toolkit/*") + tree.glob(base + "/cann-*") + [base + "/cann"]
    for name in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_TOOLKIT_LATEST_HOME"):
        value = os.environ.get(name, "")
        if value.startswith("/"):
            homes.append(value.rstrip("/"))
    return [h for h in dict.fromkeys(homes) if os.path.isdir(tree.real(h))]


def capture_files(tree: Tree, bases: Sequence[str]) -> None:
    """Everything the probe reads from the file system but PCI (capture_pci)."""
    for base in bases:
        capture_area(tree, INSTALL, base)
        for home in cann_homes(tree, base):
            capture_area(tree, CANN_HOME, home)
    dirs = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d.startswith("/")]
    dirs += [base + d for base in bases for d in LIBRARY_DIRS]
    for d in dict.fromkeys(os.path.normpath(d) for d in [*dirs, "/usr/local/dcmi"]):
        tree.listdir(d, keep=_soname, why=SONAMES_KEPT)
    capture_area(tree, SYSTEM)
    if "/etc/os-release" not in tree.files:
        tree.read("/usr/lib/os-release")
    tree.read("/proc/self/mountinfo", keep=lambda line: any(w in line for w in MOUNT_WORDS),
              why="lines mentioning " + ", ".join(MOUNT_WORDS))


def capture_pci(tree: Tree) -> bool:
    """Huawei's PCI functions from sysfs (a server has a hundred others); False if none.

    That is what `lspci -n` prints, read where lspci reads it; lspci runs only when sysfs
    shows none, to tell an absent card from a sysfs the probe cannot see."""
    found = False
    for vendor_file in tree.glob("/sys/bus/pci/devices/*/vendor"):
        try:
            with open(tree.real(vendor_file)) as fh:
                vendor = fh.read().strip().lower()
        except OSError:
            continue
        if vendor == HUAWEI_PCI_VENDOR:
            found = True
            device = os.path.dirname(vendor_file)
            for attr in PCI_ATTRS:
                tree.read(device + "/" + attr)
            tree.stat(device + "/driver")
    return found


def first_jobs(tree: Tree, bases: Sequence[str], python: str, users: Sequence[str],
               env: Dict[str, str]) -> List[Job]:
    """The commands that need nothing but the install record (read by install_paths)."""
    jobs: List[Job] = [(key, _argv(key), None) for key in (
        NPU_SMI_INFO, NPU_SMI_LIST, LSMOD, LDCONFIG, LSCPU, GETENFORCE, SESTATUS, LOGIN_ENV)]
    install = _kv(tree.files.get("/etc/ascend_install.info", ""))
    for user in dict.fromkeys([DRIVER_USER, install.get("UserName", DRIVER_USER)]):
        jobs.append((GETENT_PASSWD.format(user=user), ["getent", "passwd", user], None))
    for group in dict.fromkeys([DRIVER_USER, install.get("UserGroup", DRIVER_USER)]):
        jobs.append((GETENT_GROUP.format(group=group), ["getent", "group", group], None))
    for user in users:
        jobs.append((ID_USER.format(user=user), ["id", user], None))
    if os.path.exists(tree.real("/sys/fs/selinux/enforce")):
        wanted = [*bases, "/dev/davinci_manager", "/usr/local/dcmi", "/usr/local/bin/npu-smi",
                  *tree.glob("/dev/davinci[0-9]*")]
        labelled = [tree.real(p) for p in wanted if os.path.lexists(tree.real(p))]
        if labelled:
            jobs.append((LS_LABELS, ["ls", "-Zd", *labelled], None))
    # TORCH_DEVICE_BACKEND_AUTOLOAD=0: nothing the snippet does may load torch_npu.
    framework_env = dict(env, TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    jobs.append((FRAMEWORK_PYTHON, [python, "-c", DISTRIBUTIONS_SNIPPET], framework_env))
    return jobs


def npu_jobs(records: Dict[str, Json], boards: bool = True) -> List[Job]:
    """Per-device queries, for the IDs `npu-smi info -l` lists (they need not be 0..N-1)."""
    listing = records.get(NPU_SMI_LIST)
    if not listing or listing["rc"] != 0:
        return []
    # The health pages only add error codes to what the `info` table already says; when
    # every NPU there is OK they are skipped.
    table = records.get(NPU_SMI_INFO)
    all_ok = bool(table and table["rc"] == 0 and not _unhealthy(table["stdout"]))
    a3 = bool(table and table["rc"] == 0 and A3_TABLE_MARK in table["stdout"])
    jobs: List[Job] = [(NPU_SMI_MAP, _argv(NPU_SMI_MAP), None)] if a3 else []
    for npu, chips in _npu_ids(listing["stdout"]):
        keys = [NPU_SMI_BOARD.format(npu=npu)] if boards else []
        if not all_ok:
            keys.append(NPU_SMI_HEALTH.format(npu=npu))
            keys += [NPU_SMI_CHIP_HEALTH.format(npu=npu, chip=chip) for chip in range(chips)]
        if a3:
            keys += [NPU_SMI_SPOD.format(npu=npu, chip=chip) for chip in range(chips)]
        jobs += [(key, _argv(key), None) for key in keys]
    return jobs


def hccn_argv(tree: Tree, bases: Sequence[str], search_path: Optional[str]) -> Optional[str]:
    """The hccn_tool to run: the driver's (as the host sees it), else one on PATH."""
    for base in bases:
        if os.access(tree.real(base + HCCN_TOOL), os.X_OK):
            return tree.real(base + HCCN_TOOL)
    return shutil.which("hccn_tool", path=search_path)


def network_jobs(tree: Tree, tool: Optional[str], keys: Sequence[str] = HCCN_QUERIES,
                 devices: Optional[Iterable[str]] = None) -> List[Job]:
    """`keys` for each NPU (the /dev/davinci<N> nodes found) when hccn_tool is there."""
    if tool is None:
        return []
    if devices is None:
        found = (re.match(r"/dev/davinci(\d+)$", path) for path in tree.paths)
        devices = sorted({m.group(1) for m in found if m}, key=int)
    return [(key.format(dev=dev), [tool, *key.format(dev=dev).split()[1:]], None)
            for dev in devices for key in keys]


def optical_jobs(records: Mapping[str, Json], tree: Tree, tool: Optional[str]) -> List[Job]:
    """The optical module of each port whose link is not UP (or could not be read)."""
    down = [key.split()[2] for key in records if re.match(r"hccn_tool -i \d+ -link -g$", key)
            and "link status: UP" not in records[key]["stdout"]]
    return network_jobs(tree, tool, (HCCN_OPTICAL,), down)


def capture(args: argparse.Namespace) -> Json:
    """The whole capture document for the options `parse_args` read."""
    started = time.monotonic()
    tree = Tree(args.root)
    commands = Commands(args.timeout, args.jobs, enabled=not args.no_commands, keep=_keep)
    install_path = args.install_path.rstrip("/") or "/"
    bases = install_paths(tree, install_path)
    # Commands first: they mostly wait (npu-smi on the driver, interpreters starting) while
    # the files are read here.
    commands.start(first_jobs(tree, bases, args.python, args.user, commands.env))
    capture_files(tree, bases)
    if not capture_pci(tree):
        commands.start([(LSPCI, _argv(LSPCI), None)])
    for path in args.read:  # what the caller needs beside the capture, in the same pass
        tree.stat(path)
        tree.read(path)
    hccn = hccn_argv(tree, bases, commands.search_path) if args.network else None
    ip_jobs: List[Job] = [(key, _argv(key), None) for key in (IP_ADDR, IP_LINK)]
    commands.start(network_jobs(tree, hccn) + (ip_jobs if args.network else []))
    # The per-device queries need the IDs `npu-smi info -l` lists.
    commands.wait([NPU_SMI_INFO, NPU_SMI_LIST])
    commands.start(npu_jobs(commands.records, args.boards))
    commands.wait([key for key in commands.pending if " -link -g" in key])
    commands.start(optical_jobs(commands.records, tree, hccn))
    commands.close()
    uname = os.uname()
    return {
        "schema": SCHEMA,
        "host": uname.nodename,  # what gethostname() returns
        "captured_at": datetime.datetime.now(datetime.timezone.utc).replace(
            microsecond=0).isoformat(),
        "probe_version": PROBE_VERSION,
        "root": tree.root or "/",
        "options": {"install_path": install_path, "install_paths": bases,
                    "python": args.python, "commands": commands.enabled,
                    "network": args.network, "boards": args.boards,
                    "timeout_s": args.timeout},
        "process": process_info(),
        "uname": {"sysname": uname.sysname, "release": uname.release,
                  "version": uname.version, "machine": uname.machine},
        "files": tree.files,
        "commands": commands.records,
        "env": {name: value for name, value in os.environ.items() if _env_wanted(name)},
        "paths": tree.paths,
        "listings": tree.listings,
        "filters": {**tree.filters, **commands.filters},
        "errors": tree.errors,
        "duration_s": round(time.monotonic() - started, 3),
    }


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    """The probe's options; bad usage exits 2 with the usage on stderr."""
    parser = argparse.ArgumentParser(prog="probe.py", allow_abbrev=False,
                                     description=DESCRIPTION)
    add = parser.add_argument
    add("--install-path", metavar="P", default=DEFAULT_INSTALL_PATH,
        help="where the driver and CANN are installed (default %(default)s)")
    add("--python", metavar="PY", default=sys.executable,
        help="interpreter whose installed frameworks are reported (default: this one)")
    add("--root", metavar="DIR", default="/",
        help="read files, sysfs and /dev under DIR (tests on a fake tree)")
    add("--no-commands", action="store_true", help="run no command at all")
    add("--timeout", metavar="S", type=float, default=DEFAULT_TIMEOUT_S,
        help="seconds each command may take (default %(default)g)")
    add("--jobs", metavar="N", type=int, default=DEFAULT_JOBS,
        help="commands run at once (default %(default)s)")
    add("--user", metavar="USER", action="append", default=[],
        help="also record `id USER` (the account that runs jobs); repeatable")
    add("--read", metavar="FILE", action="append", default=[],
        help="also record FILE's text and stat; repeatable")
    add("--no-network", dest="network", action="store_false",
        help="leave out the NPUs' ports and the host's interfaces (hccn_tool, ip)")
    add("--no-boards", dest="boards", action="store_false",
        help="leave out each NPU's board page (npu-smi info -t board)")
    add("-o", "--output", metavar="FILE", help="write the JSON here instead of stdout")
    return parser.parse_args(argv)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    text = json.dumps(capture(args), indent=1, sort_keys=True) + "\n"
    if args.output:
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
