#!/usr/bin/env python3
"""Capture the raw state of one Ascend host (or container, or chroot) as one JSON document.

Runs ON the target with only the standard library, under Python 3.8 to 3.12:
`python3 probe.py [--install-path P] [--python PY] [--root DIR] [--no-commands]`.
It records text as found (file contents, command outputs with exit codes, environment,
stat of paths) and parses nothing it does not need to decide what to read next; all
interpretation lives in ascend_env/facts/model.py (DESIGN.md, "Capture raw, parse centrally").
"""

from __future__ import annotations

import grp
import os
import pwd
import selectors
import stat
import sys
import time

# The probe runs on every host of a fleet, and every minute where it is a container health
# check: it imports only what it uses (argparse, concurrent.futures with logging, socket,
# shutil and typing doubled its start-up, ~30 ms of CPU where ~11 ms do) and runs its
# commands from this one thread (a pool's threads cost ~3x the CPU to start the same
# commands). It starts them with os.posix_spawn, matches paths and writes its JSON itself:
# subprocess (threading, locale, signal's enums), glob, shlex and json (both with re and
# enum) cost another ~10 ms a host, a fifth of a probe. TYPE_CHECKING is False at run time;
# mypy reads the block.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple

    Json = Dict[str, Any]
    Job = Tuple[str, List[str], Optional[Dict[str, str]]]

SCHEMA = "ascend-env/capture/v1"
PROBE_VERSION = "1"
DEFAULT_INSTALL_PATH = "/usr/local/Ascend"
DEFAULT_TIMEOUT_S = 15.0
MAX_FILE_BYTES = 256 * 1024
MAX_OUTPUT_BYTES = 1024 * 1024

# Command keys that facts.py looks up; the literal command line, so a capture reads plainly.
NPU_SMI_INFO = "npu-smi info"
NPU_SMI_LIST = "npu-smi info -l"
NPU_SMI_BOARD = "npu-smi info -t board -i {npu}"
NPU_SMI_HEALTH = "npu-smi info -t health -i {npu}"
NPU_SMI_CHIP_HEALTH = "npu-smi info -t health -i {npu} -c {chip}"
# Any health word but OK in `npu-smi info` (ascend-facts §4.4) makes the probe read the
# per-device health pages, which carry the alarm codes.
UNHEALTHY = frozenset(("warning", "alarm", "critical", "unknown"))
# Signal numbers on x86_64 and aarch64 Linux (the signal module would import enum for them).
SIGKILL = 9
# Python ignores these; a command gets them back at their defaults, as subprocess does.
SIGNALS_TO_RESTORE = (13, 25)  # SIGPIPE, SIGXFSZ
LSPCI = "lspci -D -n -d 19e5:"  # only where sysfs shows no Huawei function (capture_pci)
LSMOD = "lsmod"
LDCONFIG = "ldconfig -p"
# Older probes ran these; os.uname() is the same system call (capture "uname"), and facts.py
# still reads them from older captures.
UNAME_R = "uname -r"
UNAME_M = "uname -m"
LSCPU = "lscpu -p=CPU,CORE,SOCKET,NODE"
GETENFORCE = "getenforce"
SESTATUS = "sestatus"
ID = "id"  # older probes; the probe's own groups, with names, are in "process" now
ID_USER = "id {user}"
GETENT_PASSWD = "getent passwd {user}"
GETENT_GROUP = "getent group {group}"
# Followed by the Ascend paths that exist; only where SELinux is on (without it every label
# is "?"). The labels themselves are also in "paths" (the security.selinux attribute).
LS_LABELS = "ls -Zd"
# What a login shell gets (profile.d, set_env.sh sourced from profiles): jobs started over
# ssh or by a scheduler often get that rather than the probe's own environment.
LOGIN_ENV = "bash -lc 'env -0'"
# The framework interpreter's command line holds a long snippet; the key names it instead and
# the record's argv keeps the real command.
FRAMEWORK_PYTHON = "framework-python -c distributions"

DRIVER_USER = "HwHiAiUser"
HUAWEI_PCI_VENDOR = "0x19e5"
PCI_ATTRS = ("vendor", "device", "subsystem_vendor", "subsystem_device", "class", "revision",
             "numa_node", "local_cpulist", "current_link_speed", "current_link_width")
DEVICE_NODES = ("davinci_manager", "davinci_manager_docker", "devmm_svm", "hisi_hdc")

# Sonames torch_npu links (ascend-facts §9) plus what it and npu-smi load at run time.
# `ldconfig -p` lists every library on the host; only these lines are kept.
ASCEND_SONAMES = (
    "libascendcl.so", "libhccl.so", "libacl_op_compiler.so", "libge_runner.so", "libgraph.so",
    "libacl_tdt_channel.so", "libfmk_parser.so", "libascend_protobuf.so", "libatb.so",
    "libascend_hal.so", "libdcmi.so", "libc_sec.so", "libmmpa.so", "libruntime.so",
    "libopapi.so", "libtorch_npu.so",
)

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
# from them (importing torch would autoload torch_npu and fail without CANN, ascend-facts §9).
# The metadata headers are read directly, as importlib.metadata finds them (a *.dist-info or
# *.egg-info folder, or an egg-info file, in each sys.path entry): importing
# importlib.metadata (email, zipfile, csv) tripled the snippet's time, to ~65 ms a host.
# Written for Python 3.6+ because a framework environment may be older than the probe's.
# The probe's own interpreter runs DISTRIBUTIONS_CODE and encodes `out` itself.
DISTRIBUTIONS_CODE = r"""
import os, sys
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
"""
DISTRIBUTIONS_SNIPPET = DISTRIBUTIONS_CODE + "import json\nprint(json.dumps(out))\n"
# `LOGIN_ENV` quotes its script; every other key is its argv, split on spaces.
ARGV = {LOGIN_ENV: ["bash", "-lc", "env -0"]}


def _argv(key: str) -> List[str]:
    return ARGV.get(key) or key.split()


SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t",
                 "\b": "\\b", "\f": "\\f"}


def _ascii_quote(text: str) -> str:
    """A JSON string literal, non-ASCII escaped (as json.dumps writes it)."""
    out = []
    for c in text:
        code = ord(c)
        if c in SHORT_ESCAPES:
            out.append(SHORT_ESCAPES[c])
        elif 0x20 <= code < 0x7F:
            out.append(c)
        elif code > 0xFFFF:
            code -= 0x10000
            out.append("\\u%04x\\u%04x" % (0xD800 | (code >> 10), 0xDC00 | (code & 0x3FF)))
        else:
            out.append("\\u%04x" % code)
    return '"' + "".join(out) + '"'


try:  # CPython's C version of the same, which json.dumps itself calls
    from _json import encode_basestring_ascii as _quote
except ImportError:  # pragma: no cover - other interpreters
    _quote = _ascii_quote


def _json(value: Any, indent: Optional[int] = None, sort_keys: bool = False,
          depth: int = 0) -> str:
    """json.dumps(value, indent=indent, sort_keys=sort_keys) for the probe's plain data
    (dicts with string keys, lists, strings, numbers, booleans, None)."""
    if isinstance(value, str):
        return _quote(value)
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):  # durations and timeouts: always finite
        return float.__repr__(value)
    if isinstance(value, dict):
        items = sorted(value.items()) if sort_keys else list(value.items())
        parts = [_quote(str(k)) + ": " + _json(v, indent, sort_keys, depth + 1)
                 for k, v in items]
        opening, closing = "{", "}"
    elif isinstance(value, (list, tuple)):
        parts = [_json(v, indent, sort_keys, depth + 1) for v in value]
        opening, closing = "[", "]"
    else:
        raise TypeError("not JSON: %r" % type(value).__name__)
    if not parts:
        return opening + closing
    if indent is None:
        return opening + ", ".join(parts) + closing
    pad = "\n" + " " * (indent * (depth + 1))
    return opening + pad + ("," + pad).join(parts) + "\n" + " " * (indent * depth) + closing

def _now() -> str:
    """UTC, to the second, as datetime's isoformat writes it (datetime costs an import)."""
    return time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())


def _decode(data: Optional[bytes], limit: int = MAX_OUTPUT_BYTES) -> str:
    if not data:
        return ""
    return data[:limit].decode("utf-8", errors="replace")


class _Running:
    """A started command (its own session: a timeout kills the whole tree), its output read
    by the probe's thread as it comes."""

    def __init__(self, key: str, record: Json, started: Tuple[int, int, int],
                 timeout: float) -> None:
        self.key = key
        self.record = record
        self.pid, out, err = started
        self.returncode: Optional[int] = None
        self.started = time.monotonic()
        self.deadline = self.started + timeout
        self.killed = False
        self.stdout = out
        self.pipes: List[int] = [out, err]
        self.out: List[bytes] = []
        self.err: List[bytes] = []
        self.kept = {"out": 0, "err": 0}

    def take(self, pipe: int, data: bytes) -> None:
        """Keep up to the record's limit; the rest is read and dropped (a writer blocked on a
        full pipe would never exit)."""
        which = "out" if pipe == self.stdout else "err"
        if self.kept[which] <= MAX_OUTPUT_BYTES:
            (self.out if which == "out" else self.err).append(data)
            self.kept[which] += len(data)

    def poll(self) -> Optional[int]:
        """The exit status once it has ended (-N: killed by signal N), without waiting."""
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                pid, status = self.pid, 0
            if pid:
                self.returncode = (os.WEXITSTATUS(status) if os.WIFEXITED(status)
                                   else -os.WTERMSIG(status) if os.WIFSIGNALED(status)
                                   else status)
        return self.returncode


def _keep_descriptors_home() -> None:
    """Descriptors this process inherited (beyond 0-2) are not passed on to its commands, as
    subprocess's close_fds did: a command left running must not hold a pipe its caller
    waits on. Python's own descriptors are never inherited."""
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        return
    for name in names:
        if name.isdigit() and int(name) > 2:
            try:  # noqa: SIM105 - contextlib costs the probe an import
                os.set_inheritable(int(name), False)
            except OSError:  # the listing's own descriptor, closed by now
                pass


def _start(exe: str, argv: Sequence[str], env: Dict[str, str]) -> Tuple[int, int, int]:
    """Start `argv` in a session of its own with stdin from /dev/null: (pid, stdout, stderr)
    read ends. os.pipe's ends are not inherited; the child gets its two through dup2."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
               (os.POSIX_SPAWN_DUP2, out_w, 1), (os.POSIX_SPAWN_DUP2, err_w, 2)]
    try:
        try:
            pid = os.posix_spawn(exe, list(argv), env, file_actions=actions, setsid=True,
                                 setsigdef=SIGNALS_TO_RESTORE)
        except NotImplementedError:  # a C library without POSIX_SPAWN_SETSID: a group
            pid = os.posix_spawn(exe, list(argv), env, file_actions=actions, setpgroup=0,
                                 setsigdef=SIGNALS_TO_RESTORE)
    except BaseException:
        for fd in (out_r, err_r):
            os.close(fd)
        raise
    finally:
        os.close(out_w)
        os.close(err_w)
    return pid, out_r, err_r


def _has_magic(pattern: str) -> bool:
    return any(c in pattern for c in "*?[")


def _matches(name: str, pattern: str) -> bool:
    """fnmatch's `*`, `?` and `[...]` (ranges, `!`) for one path component, as glob matches
    them: a leading dot only by a leading dot."""
    if name.startswith(".") and not pattern.startswith("."):
        return False
    return _match_from(name, 0, pattern, 0)


def _match_from(name: str, i: int, pattern: str, j: int) -> bool:
    while j < len(pattern):
        c = pattern[j]
        if c == "*":
            rest = j + 1
            return any(_match_from(name, k, pattern, rest) for k in range(i, len(name) + 1))
        if i >= len(name):
            return False
        if c == "[":
            end = pattern.find("]", j + 2 if pattern[j + 1:j + 2] != "!" else j + 3)
            if end > 0:
                inner = pattern[j + 1:end]
                negate = inner.startswith("!")
                inner = inner[1:] if negate else inner
                hit, k = False, 0
                while k < len(inner):
                    if k + 2 < len(inner) and inner[k + 1] == "-":
                        hit = hit or inner[k] <= name[i] <= inner[k + 2]
                        k += 3
                    else:
                        hit = hit or inner[k] == name[i]
                        k += 1
                if hit == negate:
                    return False
                i, j = i + 1, end + 1
                continue
        if c != "?" and c != name[i]:
            return False
        i, j = i + 1, j + 1
    return i == len(name)


class Probe:
    """One capture: reads files under `root`, runs commands, fills the document."""

    def __init__(self, *, root: str, install_path: str, python: str, timeout: float,
                 commands: bool, jobs: int, users: Sequence[str]) -> None:
        self.root = root.rstrip("/") if root not in ("", "/") else ""
        self.install_path = install_path
        self.python = python
        self.timeout = timeout
        self.commands_enabled = commands
        self.jobs = max(1, jobs)
        self.users = list(users)
        self.files: Dict[str, str] = {}
        self.commands: Dict[str, Json] = {}
        self.paths: Dict[str, Json] = {}
        self.listings: Dict[str, List[str]] = {}
        self.filters: Dict[str, str] = {}
        self.errors: List[Json] = []
        self.queue: List[Job] = []
        self.running: List[_Running] = []
        self.selector = selectors.DefaultSelector()
        if commands:
            _keep_descriptors_home()
        path_dirs = os.environ.get("PATH", "").split(os.pathsep)
        # Non-root PATHs lack the sbin folders where ldconfig, lspci and getenforce live.
        extra = ["/usr/local/bin", "/usr/local/sbin", "/usr/sbin", "/sbin", "/usr/bin", "/bin"]
        self.search_path = os.pathsep.join([d for d in path_dirs if d]
                                           + [d for d in extra if d not in path_dirs])
        self.command_env = dict(os.environ)
        self.command_env["LC_ALL"] = "C"  # outputs in the layouts the parsers know

    # -- filesystem ---------------------------------------------------------------------------

    def real(self, path: str) -> str:
        return self.root + path

    def glob(self, pattern: str) -> List[str]:
        """Logical paths (without the root prefix) matching the absolute `pattern`, sorted;
        a component without `*?[` is taken as it is, as glob.glob does."""
        found = [""]
        for part in pattern.strip("/").split("/"):
            if not _has_magic(part):
                found = [path + "/" + part for path in found]
                continue
            matched = []
            for path in found:
                try:
                    names = os.listdir(self.real(path) or "/")
                except OSError:
                    continue
                matched += [path + "/" + name for name in names if _matches(name, part)]
            found = matched
        return sorted(path for path in found if os.path.lexists(self.real(path)))

    def read(self, path: str, limit: int = MAX_FILE_BYTES,
             keep: Optional[Callable[[str], bool]] = None, why: str = "") -> Optional[str]:
        """Record the text of `path` (absent files are simply not recorded)."""
        real = self.real(path)
        try:
            if not stat.S_ISREG(os.stat(real).st_mode):
                return None  # a FIFO or device would block or stream forever
            with open(real, "rb") as fh:
                data = fh.read(limit + 1)
        except FileNotFoundError:
            return None
        except OSError as exc:
            self.error(path, exc)
            return None
        if len(data) > limit:
            self.filters[path] = "truncated to %d bytes" % limit
        text = _decode(data, limit)
        if keep is not None:
            text = "".join(line for line in text.splitlines(True) if keep(line))
            self.filters[path] = why
        self.files[path] = text
        return text

    def read_all(self, patterns: Iterable[str], limit: int = MAX_FILE_BYTES) -> None:
        for pattern in patterns:
            paths = self.glob(pattern) if _has_magic(pattern) else [pattern]
            for path in paths:
                if path not in self.files:
                    self.read(path, limit)

    def stat(self, path: str) -> Json:
        """Record what `path` is: type, mode, owner, link target, SELinux label."""
        real = self.real(path)
        info: Json = {"type": "missing"}
        try:
            st = os.lstat(real)
        except FileNotFoundError:
            self.paths[path] = info
            return info
        except OSError as exc:
            self.error(path, exc)
            info = {"type": "unknown"}
            self.paths[path] = info
            return info
        mode = st.st_mode
        kind = ("link" if stat.S_ISLNK(mode) else "dir" if stat.S_ISDIR(mode)
                else "file" if stat.S_ISREG(mode) else "char" if stat.S_ISCHR(mode)
                else "block" if stat.S_ISBLK(mode) else "fifo" if stat.S_ISFIFO(mode)
                else "socket" if stat.S_ISSOCK(mode) else "unknown")
        info = {"type": kind, "mode": "%04o" % stat.S_IMODE(mode), "uid": st.st_uid,
                "gid": st.st_gid, "owner": _user_name(st.st_uid), "group": _group_name(st.st_gid),
                "size": st.st_size}
        if kind in ("char", "block"):
            info["rdev"] = "%d:%d" % (os.major(st.st_rdev), os.minor(st.st_rdev))
        if kind == "link":
            try:
                target = os.readlink(real)
            except OSError as exc:
                self.error(path, exc)
                target = ""
            info["target"] = target
            resolved = self.resolve(path)
            info["resolved"] = resolved
            info["broken"] = resolved is None or not os.path.exists(self.real(resolved))
        label = self.label(real)
        if label is not None:
            info["label"] = label
        self.paths[path] = info
        return info

    def resolve(self, path: str, depth: int = 0) -> Optional[str]:
        """Follow links inside the root (an absolute target is read relative to it)."""
        if depth > 16:
            return None
        real = self.real(path)
        if not os.path.islink(real):
            return os.path.normpath(path)
        target = os.readlink(real)
        joined = target if target.startswith("/") else os.path.join(os.path.dirname(path), target)
        return self.resolve(os.path.normpath(joined), depth + 1)

    @staticmethod
    def label(real: str) -> Optional[str]:
        getxattr = getattr(os, "getxattr", None)
        if getxattr is None:
            return None
        try:
            raw = getxattr(real, "security.selinux", follow_symlinks=False)
        except OSError:
            return None
        return _decode(raw).rstrip("\x00")

    def listdir(self, path: str, keep: Optional[Callable[[str], bool]] = None,
                why: str = "") -> List[str]:
        try:
            names = sorted(os.listdir(self.real(path)))
        except FileNotFoundError:
            return []
        except OSError as exc:
            self.error(path, exc)
            return []
        if keep is not None:
            names = [n for n in names if keep(n)]
            self.filters["listing:" + path] = why
        self.listings[path] = names
        return names

    def error(self, where: str, exc: BaseException) -> None:
        self.errors.append({"where": where, "error": "%s: %s" % (type(exc).__name__, exc)})

    # -- commands -----------------------------------------------------------------------------

    def which(self, name: str) -> Optional[str]:
        if "/" in name:
            return name if os.access(name, os.X_OK) else None
        for folder in self.search_path.split(os.pathsep):
            path = os.path.join(folder, name)
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return path
        return None

    def start(self, jobs: Iterable[Job]) -> None:
        """Queue independent commands: up to `jobs` run at once, a fleet check waits for the
        slowest only. Nothing waits here; `finish` (and `poll`, between the file reads)
        collect their output and start the queued ones."""
        if not self.commands_enabled:
            return
        self.queue += [job for job in jobs if job[0] not in self.commands]
        self._spawn()

    def poll(self) -> None:
        """Take what the commands printed so far, without waiting: a pipe's buffer is 64 KB
        (`ldconfig -p` on a big host writes more), and a finished command frees a slot."""
        self._step(0.0)

    def finish(self, keys: Optional[Sequence[str]] = None) -> None:
        """Wait until the commands named (all, by default) are recorded."""
        def waiting() -> bool:
            names = [job[0] for job in self.queue] + [c.key for c in self.running]
            return any(keys is None or name in keys for name in names)

        while waiting():
            self._step(None)

    def run(self, argv: Sequence[str], env: Optional[Dict[str, str]] = None) -> Json:
        """One command on its own, to its end (a missing tool is rc 127, never an error)."""
        key = "run: " + " ".join(argv)
        self.commands.pop(key, None)
        self.start([(key, list(argv), env)])
        self.finish([key])
        return self.commands.pop(key)

    def _spawn(self) -> None:
        while self.queue and len(self.running) < self.jobs:
            key, argv, env = self.queue.pop(0)
            record: Json = {"argv": list(argv), "rc": 127, "stdout": "", "stderr": "",
                            "duration_s": 0.0}
            exe = self.which(argv[0])
            if exe is None:
                record["stderr"] = "%s: command not found" % argv[0]
                self._record(key, record)
                continue
            try:
                # A session of its own lets a timeout kill the whole tree (npu-smi can hang
                # inside the driver).
                started = _start(exe, [exe, *argv[1:]], env or self.command_env)
            except OSError as exc:
                record.update(rc=126, stderr="%s: %s" % (type(exc).__name__, exc))
                self._record(key, record)
                continue
            command = _Running(key, record, started, self.timeout)
            for pipe in command.pipes:
                self.selector.register(pipe, selectors.EVENT_READ, command)
            self.running.append(command)

    def _step(self, wait: Optional[float]) -> None:
        """Read what is ready (waiting at most `wait` s, None: until something happens or a
        deadline passes), then settle the commands that ended or ran out of time."""
        self._spawn()
        if not self.running:
            return
        now = time.monotonic()
        if wait is None:
            # A command whose pipes are closed but which has not exited yet is polled.
            soonest = min(0.005 if not c.pipes else c.deadline - now for c in self.running)
            wait = max(0.0, soonest)
        if self.selector.get_map():
            for ready, _ in self.selector.select(wait):
                command = ready.data
                data = os.read(ready.fd, 65536)
                if data:
                    command.take(ready.fd, data)
                else:
                    self._close(command, ready.fd)
        elif wait:
            time.sleep(wait)
        now = time.monotonic()
        for command in list(self.running):
            if not command.pipes and command.poll() is not None:
                self._settle(command)
            elif now >= command.deadline:
                if command.killed:  # a grandchild outside the group keeps the pipes open
                    for pipe in list(command.pipes):
                        self._close(command, pipe)
                    command.poll()  # no wait: a child stuck in the driver never ends
                    self._settle(command)
                else:
                    try:  # noqa: SIM105 - contextlib costs the probe an import
                        os.killpg(command.pid, SIGKILL)
                    except OSError:  # it ended meanwhile
                        pass
                    command.killed = True
                    command.deadline = now + 2.0

    def _close(self, command: _Running, pipe: int) -> None:
        self.selector.unregister(pipe)
        os.close(pipe)
        command.pipes.remove(pipe)

    def _settle(self, command: _Running) -> None:
        self.running.remove(command)
        record = command.record
        record.update(rc=command.returncode, stdout=_decode(b"".join(command.out)),
                      stderr=_decode(b"".join(command.err)),
                      duration_s=round(time.monotonic() - command.started, 3))
        if command.killed:
            record.update(rc=124, stderr=record["stderr"] + "\ntimed out after %gs"
                          % self.timeout)
        self._record(command.key, record)

    def _record(self, key: str, record: Json) -> None:
        """Keep a command's record, less what must not leave the host."""
        if key == LDCONFIG:
            # The cache lists every library on the host; keep the header and ours.
            lines = record["stdout"].splitlines(True)
            record["stdout"] = "".join(
                line for i, line in enumerate(lines)
                if i == 0 or line.strip().split(" ", 1)[0].split(".so")[0] + ".so"
                in ASCEND_SONAMES)
            self.filters["command:" + key] = "only the Ascend sonames (ascend-facts §9)"
        elif key == LOGIN_ENV:
            # The same allow-list as `env`: a login environment holds tokens too.
            record["stdout"] = "".join(
                item + "\0" for item in record["stdout"].split("\0")
                if _env_wanted(item.partition("=")[0]))
            self.filters["command:" + key] = "only the variables `env` keeps"
        self.commands[key] = record

    # -- what to capture ----------------------------------------------------------------------

    def install_paths(self) -> List[str]:
        """--install-path, plus any other path the install records or environment name."""
        found = [self.install_path]
        for path, keys in (("/etc/ascend_install.info",
                            ("Driver_Install_Path_Param", "Firmware_Install_Path_Param")),
                           ("/etc/Ascend/ascend_cann_install.info", ("Install_Path",))):
            text = self.read(path)
            for key, value in _kv(text or "").items():
                if key in keys and value.startswith("/"):
                    found.append(value.rstrip("/") or "/")
        home = os.path.expanduser("~")
        if home.startswith("/") and os.path.isdir(self.real(home + "/Ascend")):
            found.append(home + "/Ascend")  # non-root CANN installs (ascend-facts §1.1)
        unique: List[str] = []
        for path in found:
            if path not in unique:
                unique.append(path)
        return unique

    def cann_homes(self, base: str) -> List[str]:
        homes = self.glob(base + "/ascend-toolkit/*") + self.glob(base + "/cann-*")
        homes += [base + "/cann"]
        for name in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_TOOLKIT_LATEST_HOME"):
            value = os.environ.get(name, "")
            if value.startswith("/"):
                homes.append(value.rstrip("/"))
        return [h for h in dict.fromkeys(homes) if os.path.isdir(self.real(h))]

    def capture_install(self, base: str) -> None:
        for path in (base, base + "/driver", base + "/driver/tools/upgrade-tool",
                     base + "/driver/lib64", base + "/driver/lib64/common",
                     base + "/driver/lib64/driver", base + "/firmware", base + "/ascend-toolkit",
                     base + "/ascend-toolkit/latest", base + "/ascend-toolkit/set_env.sh",
                     base + "/cann", base + "/cann/set_env.sh", base + "/nnal",
                     base + "/nnal/atb/latest", base + "/nnal/atb/set_env.sh",
                     base + "/nnae/latest", base + "/nnrt/latest", base + "/toolbox/latest"):
            self.stat(path)
        self.listdir(base)
        self.listdir(base + "/ascend-toolkit")
        self.listdir(base + "/nnal/atb")
        for path in self.glob(base + "/cann-*") + self.glob(base + "/ascend-toolkit/*"):
            self.stat(path)
        self.read_all([base + "/driver/version.info", base + "/firmware/version.info"])
        for home in self.cann_homes(base):
            self.stat(home)
            self.read_all([home + "/version.cfg", home + "/ascend_*_install.info",
                           home + "/*/ascend_*_install.info", home + "/compiler/version.info",
                           home + "/runtime/version.info", home + "/opp/version.info",
                           home + "/set_env.sh"])
            kernels = home + "/opp/built-in/op_impl/ai_core/tbe/kernel"
            self.listdir(kernels)
        self.read_all([base + "/ascend-toolkit/set_env.sh", base + "/cann/set_env.sh",
                       base + "/nnae/*/ascend_nnae_install.info", base + "/nnae/*/version.cfg",
                       base + "/nnae/set_env.sh", base + "/nnrt/*/*/ascend_nnrt_install.info",
                       base + "/tfplugin/*/ascend_tfplugin_install.info",
                       base + "/nnal/atb/set_env.sh", base + "/nnal/atb/*/atb/version.info",
                       base + "/toolbox/*/ascend_tool_box_install.info",
                       base + "/toolbox/*/*/ascend_tool_box_install.info",
                       base + "/toolbox/set_env.sh"])

    def capture_libraries(self, bases: Sequence[str]) -> None:
        """Where the Ascend sonames are on disk: the library search path and known folders."""
        dirs = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d.startswith("/")]
        for base in bases:
            dirs += [base + "/driver/lib64", base + "/driver/lib64/common",
                     base + "/driver/lib64/driver", base + "/ascend-toolkit/latest/lib64",
                     base + "/cann/lib64", base + "/nnal/atb/latest/atb/cxx_abi_0/lib",
                     base + "/nnal/atb/latest/atb/cxx_abi_1/lib"]
        dirs.append("/usr/local/dcmi")
        why = "only the Ascend sonames (ascend-facts §9)"
        for d in dict.fromkeys(os.path.normpath(d) for d in dirs):
            self.listdir(d, keep=lambda n: n.split(".so")[0] + ".so" in ASCEND_SONAMES, why=why)
        self.read_all(["/etc/ld.so.conf", "/etc/ld.so.conf.d/*.conf"])

    def capture_pci(self) -> bool:
        """Huawei's PCI functions from sysfs (a server has a hundred others); False if none.

        That is what `lspci -n` prints, read where lspci reads it: lspci runs (~5 ms) only
        when sysfs shows none, to tell an absent card from a sysfs the probe cannot see."""
        found = False
        for vendor_file in self.glob("/sys/bus/pci/devices/*/vendor"):
            try:
                with open(self.real(vendor_file)) as fh:
                    vendor = fh.read().strip().lower()
            except OSError:
                continue
            if vendor != HUAWEI_PCI_VENDOR:
                continue
            found = True
            device = os.path.dirname(vendor_file)
            for attr in PCI_ATTRS:
                self.read(device + "/" + attr)
            self.stat(device + "/driver")
        return found

    def capture_cpu(self) -> None:
        self.read_all(["/sys/devices/system/cpu/online", "/sys/devices/system/cpu/present",
                       "/sys/devices/system/cpu/possible",
                       "/sys/devices/system/cpu/cpu*/topology/core_id",
                       "/sys/devices/system/cpu/cpu*/topology/physical_package_id",
                       "/sys/devices/system/node/online",
                       "/sys/devices/system/node/node*/cpulist",
                       "/sys/fs/cgroup/cpu.max", "/sys/fs/cgroup/cpuset.cpus.effective"])

    def capture_devices(self) -> None:
        for node in self.glob("/dev/davinci[0-9]*") + self.glob("/dev/vdavinci[0-9]*"):
            self.stat(node)
        for name in DEVICE_NODES:
            self.stat("/dev/" + name)
        for path in ("/usr/local/dcmi", "/usr/local/dcmi/libdcmi.so", "/usr/local/bin/npu-smi",
                     "/usr/local/sbin/npu-smi", "/etc/ascend_install.info", "/etc/Ascend",
                     "/.dockerenv", "/run/.containerenv", "/var/log/npu/slog"):
            self.stat(path)

    def capture_files(self) -> None:
        self.read_all(["/etc/os-release", "/proc/modules", "/proc/sys/kernel/osrelease",
                       "/proc/1/cgroup", "/proc/self/cgroup", "/etc/selinux/config",
                       "/sys/fs/selinux/enforce", "/etc/hccn.conf", "/etc/profile.d/*scend*"])
        if "/etc/os-release" not in self.files:
            self.read("/usr/lib/os-release")
        self.read("/proc/self/mountinfo", keep=lambda line: any(w in line for w in MOUNT_WORDS),
                  why="lines mentioning " + ", ".join(MOUNT_WORDS))
        self.listdir("/sys/module")
        self.listdir("/etc/profile.d")

    def first_jobs(self, bases: Sequence[str]) -> List[Job]:
        jobs: List[Job] = [
            (key, _argv(key), None)
            for key in (NPU_SMI_INFO, NPU_SMI_LIST, LSMOD, LDCONFIG, LSCPU, GETENFORCE, SESTATUS,
                        LOGIN_ENV)]
        users = [DRIVER_USER]
        groups = [DRIVER_USER]
        record = _kv(self.files.get("/etc/ascend_install.info", ""))
        users.append(record.get("UserName", DRIVER_USER))
        groups.append(record.get("UserGroup", DRIVER_USER))
        for user in dict.fromkeys(users):
            jobs.append((GETENT_PASSWD.format(user=user), ["getent", "passwd", user], None))
        for group in dict.fromkeys(groups):
            jobs.append((GETENT_GROUP.format(group=group), ["getent", "group", group], None))
        for user in self.users:
            jobs.append((ID_USER.format(user=user), ["id", user], None))
        if os.path.exists(self.real("/sys/fs/selinux/enforce")):
            wanted = [*bases, "/dev/davinci_manager", "/usr/local/dcmi",
                      "/usr/local/bin/npu-smi", *self.glob("/dev/davinci[0-9]*")]
            labelled = [self.real(p) for p in wanted if os.path.lexists(self.real(p))]
            if labelled:
                jobs.append((LS_LABELS, ["ls", "-Zd", *labelled], None))
        if not self.own_interpreter():
            env = dict(self.command_env)
            env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
            jobs.append((FRAMEWORK_PYTHON, [self.python, "-c", DISTRIBUTIONS_SNIPPET], env))
        return jobs

    def own_interpreter(self) -> bool:
        """The framework Python is the interpreter running this probe, started as `python3 -c`
        (a target's probe) without the options that change what it sees (-S, -I, -E, -s):
        it lists the same distributions, from the same sys.path."""
        flags = sys.flags
        return self.python == sys.executable and sys.argv[0] == "-c" and not (
            flags.no_site or flags.isolated or flags.ignore_environment or flags.no_user_site)

    def distributions_here(self) -> Json:
        """The distributions snippet run in this interpreter (a framework in the system
        Python, as in the vendor's images): the record a second start (~20 ms) would give."""
        started = time.monotonic()
        space: Json = {"__name__": "distributions"}
        try:
            exec(DISTRIBUTIONS_CODE, space)
            rc, out, err = 0, _json(space["out"]) + "\n", ""
        except Exception as exc:  # reported as the interpreter would have, never fatal
            rc, out, err = 1, "", "%s: %s" % (type(exc).__name__, exc)
        return {"argv": [self.python, "-c", DISTRIBUTIONS_SNIPPET], "rc": rc,
                "stdout": out, "stderr": err,
                "duration_s": round(time.monotonic() - started, 3)}

    def npu_jobs(self) -> List[Job]:
        """Per-device queries, for the IDs `npu-smi info -l` lists (they need not be 0..N-1)."""
        listing = self.commands.get(NPU_SMI_LIST)
        if not listing or listing["rc"] != 0:
            return []
        # The health pages only add error codes to what the `info` table already says; when
        # every NPU there is OK they are skipped (two npu-smi starts fewer per device).
        table = self.commands.get(NPU_SMI_INFO)
        all_ok = bool(table and table["rc"] == 0 and not _words(table["stdout"]) & UNHEALTHY)
        jobs: List[Job] = []
        for npu, chips in _npu_ids(listing["stdout"]):
            keys = [NPU_SMI_BOARD.format(npu=npu)]
            if not all_ok:
                keys.append(NPU_SMI_HEALTH.format(npu=npu))
                keys += [NPU_SMI_CHIP_HEALTH.format(npu=npu, chip=chip) for chip in range(chips)]
            jobs += [(key, _argv(key), None) for key in keys]
        return jobs

    def capture(self) -> Json:
        started = time.monotonic()
        bases = self.install_paths()
        # Commands first: they mostly wait (npu-smi on the driver, interpreters starting)
        # while the files are read here.
        self.start(self.first_jobs(bases))
        for base in bases:
            self.capture_install(base)
            self.poll()
        self.capture_libraries(bases)
        self.poll()
        if not self.capture_pci():
            self.start([(LSPCI, _argv(LSPCI), None)])
        for step in (self.capture_cpu, self.capture_devices, self.capture_files):
            self.poll()
            step()
        if self.commands_enabled and self.own_interpreter():
            self.commands[FRAMEWORK_PYTHON] = self.distributions_here()
        # The per-device queries need the IDs `npu-smi info -l` lists; they start as soon as
        # it (and the table) are in, beside the first commands still running.
        self.finish([NPU_SMI_INFO, NPU_SMI_LIST])
        self.start(self.npu_jobs())
        self.finish()
        uname = os.uname()
        doc: Json = {
            "schema": SCHEMA,
            "host": uname.nodename,  # what gethostname() returns
            "captured_at": _now(),
            "probe_version": PROBE_VERSION,
            "root": self.root or "/",
            "options": {"install_path": self.install_path, "install_paths": bases,
                        "python": self.python, "commands": self.commands_enabled,
                        "timeout_s": self.timeout},
            "process": _process_info(),
            "uname": {"sysname": uname.sysname, "release": uname.release,
                      "version": uname.version, "machine": uname.machine},
            "files": self.files,
            "commands": self.commands,
            "env": _environment(),
            "paths": self.paths,
            "listings": self.listings,
            "filters": self.filters,
            "errors": self.errors,
        }
        doc["duration_s"] = round(time.monotonic() - started, 3)
        return doc


# ASCII characters that end a word (anything but letters, digits and _), for _words.
NON_WORD = {c: " " for c in range(128) if not (chr(c).isalnum() or chr(c) == "_")}


def _words(text: str) -> Set[str]:
    """The words of `text`, lower-cased (what a regex's \\b...\\b would find in npu-smi's
    ASCII tables)."""
    return set(text.lower().translate(NON_WORD).split())


def _kv(text: str) -> Dict[str, str]:
    pairs = (line.split("=", 1) for line in text.splitlines() if "=" in line)
    return {key.strip(): value.strip() for key, value in pairs}


def _npu_ids(text: str) -> List[Tuple[str, int]]:
    """(NPU ID, chip count) pairs of `npu-smi info -l`; the probe needs them for its next step."""
    found: List[Tuple[str, int]] = []
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            continue
        key, value = key.strip(), value.strip()
        if key == "NPU ID" and value.isdigit():
            found.append((value, 1))
        elif key == "Chip Count" and value.isdigit() and found:
            found[-1] = (found[-1][0], min(int(value), 8))
    return found


# Names by id, looked up once each: a lookup reads /etc/passwd or /etc/group again, and the
# ~50 paths the probe stats have two or three owners.
_NAMES: Dict[Tuple[str, int], Optional[str]] = {}


def _name(kind: str, number: int) -> Optional[str]:
    key = (kind, number)
    if key not in _NAMES:
        try:
            _NAMES[key] = (pwd.getpwuid(number).pw_name if kind == "user"
                           else grp.getgrgid(number).gr_name)
        except KeyError:
            _NAMES[key] = None
    return _NAMES[key]


def _user_name(uid: int) -> Optional[str]:
    return _name("user", uid)


def _group_name(gid: int) -> Optional[str]:
    return _name("group", gid)


def _env_wanted(name: str) -> bool:
    return name in ENV_NAMES or name.startswith(ENV_PREFIXES)


def _environment() -> Dict[str, str]:
    return {name: value for name, value in sorted(os.environ.items()) if _env_wanted(name)}


def _process_info() -> Json:
    gid, groups = os.getgid(), sorted(os.getgroups())
    names = {str(g): _group_name(g) for g in dict.fromkeys([gid, *groups])}
    info: Json = {"uid": os.getuid(), "euid": os.geteuid(), "gid": gid,
                  "groups": groups, "user": _user_name(os.geteuid()),
                  # What `id` prints beside the numbers (read in this process: no `id` to run).
                  "group_names": {g: name for g, name in names.items() if name is not None},
                  "cpu_count": os.cpu_count(), "python": sys.version.split()[0],
                  "executable": sys.executable}
    affinity = getattr(os, "sched_getaffinity", None)
    if affinity is not None:
        info["affinity"] = sorted(affinity(0))
    return info


USAGE = """usage: probe.py [--install-path P] [--python PY] [--root DIR] [--no-commands]
                [--timeout S] [--jobs N] [--user USER ...] [-o FILE]

  --install-path P  where the driver and CANN are installed (default /usr/local/Ascend)
  --python PY       interpreter whose installed frameworks are reported (default: this one)
  --root DIR        read files, sysfs and /dev under DIR (tests on a fake tree)
  --no-commands     run no command at all
  --timeout S       seconds each command may take (default 15)
  --jobs N          commands run at once (default 16)
  --user USER       also record `id USER` (the account that runs jobs); repeatable
  -o, --output F    write the JSON here instead of stdout
"""
# Option -> (name, converter); None: a flag. argparse alone costs the probe ~7 ms a start.
OPTIONS: Dict[str, Tuple[str, Optional[Callable[[str], Any]]]] = {
    "--install-path": ("install_path", str), "--python": ("python", str),
    "--root": ("root", str), "--no-commands": ("no_commands", None),
    "--timeout": ("timeout", float), "--jobs": ("jobs", int), "--user": ("user", str),
    "-o": ("output", str), "--output": ("output", str),
}


class UsageError(Exception):
    pass


def parse_args(argv: Sequence[str]) -> Dict[str, Any]:
    """The options, as `--name value`, `--name=value` or `-o value`."""
    args: Dict[str, Any] = {"install_path": DEFAULT_INSTALL_PATH, "python": sys.executable,
                            "root": "/", "no_commands": False, "timeout": DEFAULT_TIMEOUT_S,
                            "jobs": 16, "user": [], "output": None}
    rest = list(argv)
    while rest:
        word = rest.pop(0)
        option, has_value, value = word.partition("=") if word.startswith("--") else (
            word, "", "")
        if option not in OPTIONS:
            raise UsageError("unrecognized argument: %s" % word)
        name, convert = OPTIONS[option]
        if convert is None:
            if has_value:
                raise UsageError("%s takes no value" % option)
            args[name] = True
            continue
        if not has_value:
            if not rest:
                raise UsageError("%s needs a value" % option)
            value = rest.pop(0)
        try:
            converted = convert(value)
        except ValueError:
            raise UsageError("%s: invalid value %r" % (option, value)) from None
        if name == "user":
            args["user"].append(converted)
        else:
            args[name] = converted
    return args


def main(argv: Optional[Sequence[str]] = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    if "-h" in words or "--help" in words:
        sys.stdout.write(__doc__.splitlines()[0] + "\n\n" + USAGE)
        return 0
    try:
        args = parse_args(words)
    except UsageError as exc:
        sys.stderr.write(USAGE + "probe.py: error: %s\n" % exc)
        return 2
    probe = Probe(root=args["root"], install_path=args["install_path"].rstrip("/") or "/",
                  python=args["python"], timeout=args["timeout"],
                  commands=not args["no_commands"], jobs=args["jobs"], users=args["user"])
    text = _json(probe.capture(), indent=1, sort_keys=True)
    if args["output"]:
        with open(args["output"], "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    else:
        sys.stdout.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
