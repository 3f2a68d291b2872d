"""How the probe reads a target: files and paths under a root, and commands run in parallel,
each bounded in size and time. What to read is probe.py's.

Standard library only, Python 3.8+, as every program in ascend_env/remote. probe.py imports
it; on a target both run as one text (`python3 -c`, this module's source first: see
ascend_env.core.resources.remote_source), so probe.py's source holds no `from __future__`.
"""

from __future__ import annotations

import contextlib
import functools
import glob
import grp
import os
import pwd
import selectors
import shutil
import signal
import stat
import subprocess
import sys
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

Json = Dict[str, Any]
Job = Tuple[str, List[str], Optional[Dict[str, str]]]  # (record key, argv, environment)

DEFAULT_JOBS = 16
MAX_FILE_BYTES = 256 * 1024
MAX_OUTPUT_BYTES = 1024 * 1024
KILL_GRACE_S = 2.0  # after a timeout's SIGKILL (a child stuck in the driver never ends)


def _decode(data: bytes, limit: int = MAX_OUTPUT_BYTES) -> str:
    return data[:limit].decode("utf-8", errors="replace")


# -- files ------------------------------------------------------------------------------------

# stat.filemode's first letter -> the capture's path type.
KINDS = {"l": "link", "d": "dir", "-": "file", "c": "char", "b": "block", "p": "fifo",
         "s": "socket"}


class Tree:
    """The target's file system, read under `root`; records keep the logical paths."""

    def __init__(self, root: str) -> None:
        self.root = root.rstrip("/") if root not in ("", "/") else ""
        self.files: Dict[str, str] = {}
        self.paths: Dict[str, Json] = {}
        self.listings: Dict[str, List[str]] = {}
        self.filters: Dict[str, str] = {}
        self.errors: List[Json] = []

    def real(self, path: str) -> str:
        return self.root + path

    def glob(self, pattern: str) -> List[str]:
        """Logical paths matching the absolute `pattern`, sorted (broken links included)."""
        found = glob.glob(glob.escape(self.root) + pattern)
        return sorted(path[len(self.root):] for path in found)

    def read(self, path: str, keep: Optional[Callable[[str], bool]] = None,
             why: str = "") -> Optional[str]:
        """Record the text of `path` (absent files are simply not recorded)."""
        real = self.real(path)
        try:
            if not stat.S_ISREG(os.stat(real).st_mode):
                return None  # a FIFO or device would block or stream forever
            with open(real, "rb") as fh:
                data = fh.read(MAX_FILE_BYTES + 1)
        except FileNotFoundError:
            return None
        except OSError as exc:
            self.error(path, exc)
            return None
        if len(data) > MAX_FILE_BYTES:
            self.filters[path] = "truncated to %d bytes" % MAX_FILE_BYTES
        text = _decode(data, MAX_FILE_BYTES)
        if keep is not None:
            text = "".join(line for line in text.splitlines(True) if keep(line))
            self.filters[path] = why
        self.files[path] = text
        return text

    def expand(self, pattern: str) -> List[str]:
        """The paths a glob pattern matches; a plain path as it is (present or not)."""
        return self.glob(pattern) if any(c in pattern for c in "*?[") else [pattern]

    def stat(self, path: str) -> None:
        """Record what `path` is: type, mode, owner, link target, SELinux label."""
        real = self.real(path)
        try:
            st = os.lstat(real)
        except FileNotFoundError:
            self.paths[path] = {"type": "missing"}
            return
        except OSError as exc:
            self.error(path, exc)
            self.paths[path] = {"type": "unknown"}
            return
        kind = KINDS.get(stat.filemode(st.st_mode)[0], "unknown")
        info: Json = {"type": kind, "mode": "%04o" % stat.S_IMODE(st.st_mode), "uid": st.st_uid,
                      "gid": st.st_gid, "owner": id_name("user", st.st_uid),
                      "group": id_name("group", st.st_gid), "size": st.st_size}
        if kind in ("char", "block"):
            info["rdev"] = "%d:%d" % (os.major(st.st_rdev), os.minor(st.st_rdev))
        if kind == "link":
            try:
                info["target"] = os.readlink(real)
            except OSError as exc:
                self.error(path, exc)
                info["target"] = ""
            resolved = self.resolve(path)
            info["resolved"] = resolved
            info["broken"] = resolved is None or not os.path.exists(self.real(resolved))
        label = _label(real)
        if label is not None:
            info["label"] = label
        self.paths[path] = info

    def resolve(self, path: str, depth: int = 0) -> Optional[str]:
        """Follow links inside the root (an absolute target is read relative to it)."""
        real = self.real(path)
        if depth > 16:
            return None
        if not os.path.islink(real):
            return os.path.normpath(path)
        target = os.readlink(real)
        joined = target if target.startswith("/") else os.path.join(os.path.dirname(path), target)
        return self.resolve(os.path.normpath(joined), depth + 1)

    def listdir(self, path: str, keep: Optional[Callable[[str], bool]] = None,
                why: str = "") -> None:
        try:
            names = sorted(os.listdir(self.real(path)))
        except FileNotFoundError:
            return
        except OSError as exc:
            self.error(path, exc)
            return
        if keep is not None:
            names = [n for n in names if keep(n)]
            self.filters["listing:" + path] = why
        self.listings[path] = names

    def error(self, where: str, exc: BaseException) -> None:
        self.errors.append({"where": where, "error": "%s: %s" % (type(exc).__name__, exc)})


def _label(real: str) -> Optional[str]:
    try:
        raw = os.getxattr(real, "security.selinux", follow_symlinks=False)
    except OSError:
        return None
    return _decode(raw).rstrip("\x00")


# Names by id, looked up once each: a lookup reads /etc/passwd or /etc/group again (or asks
# the directory service), and the paths the probe stats share two or three owners.
@functools.lru_cache(maxsize=None)
def id_name(kind: str, number: int) -> Optional[str]:
    try:
        return pwd.getpwuid(number).pw_name if kind == "user" else grp.getgrgid(number).gr_name
    except KeyError:
        return None


def process_info() -> Json:
    """Who the probe runs as, with group names (what `id` prints), and what it may use."""
    gid, groups = os.getgid(), sorted(os.getgroups())
    names = {str(g): id_name("group", g) for g in dict.fromkeys([gid, *groups])}
    info: Json = {"uid": os.getuid(), "euid": os.geteuid(), "gid": gid, "groups": groups,
                  "user": id_name("user", os.geteuid()),
                  "group_names": {g: name for g, name in names.items() if name is not None},
                  "cpu_count": os.cpu_count(), "python": sys.version.split()[0],
                  "executable": sys.executable}
    if hasattr(os, "sched_getaffinity"):
        info["affinity"] = sorted(os.sched_getaffinity(0))
    return info


# -- commands ---------------------------------------------------------------------------------

def run_command(argv: Sequence[str], env: Dict[str, str], timeout: float,
                search_path: Optional[str] = None) -> Json:
    """One command to its end or its timeout (rc 124; its whole session killed); a missing
    tool is rc 127 and one that cannot start 126, never an exception."""
    record: Json = {"argv": list(argv), "rc": 127, "stdout": "", "stderr": "",
                    "duration_s": 0.0}
    exe = shutil.which(argv[0], path=search_path)
    if exe is None:
        record["stderr"] = "%s: command not found" % argv[0]
        return record
    started = time.monotonic()
    try:
        # A session of its own lets a timeout kill the whole tree (npu-smi can hang inside
        # the driver); stdin is /dev/null so that nothing waits for input.
        proc = subprocess.Popen([exe, *argv[1:]], stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                start_new_session=True)
    except OSError as exc:
        record.update(rc=126, stderr="%s: %s" % (type(exc).__name__, exc))
        return record
    out, err, timed_out = _collect(proc, timeout)
    record.update(rc=proc.returncode, stdout=_decode(out), stderr=_decode(err),
                  duration_s=round(time.monotonic() - started, 3))
    if timed_out:
        record.update(rc=124, stderr=record["stderr"] + "\ntimed out after %gs" % timeout)
    return record


def _collect(proc: subprocess.Popen[bytes], timeout: float) -> Tuple[bytes, bytes, bool]:
    """Read stdout and stderr as they come, keeping the first MAX_OUTPUT_BYTES of each (a
    writer blocked on a full pipe would never exit); True when the command ran out of time."""
    assert proc.stdout is not None and proc.stderr is not None
    out, err = proc.stdout.fileno(), proc.stderr.fileno()
    kept: Dict[int, List[bytes]] = {out: [], err: []}
    sizes = {out: 0, err: 0}
    deadline = time.monotonic() + timeout
    killed = False
    with selectors.DefaultSelector() as selector:
        for fd in kept:
            selector.register(fd, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if selector.get_map() and left > 0:
                for key, _ in selector.select(left):
                    data = os.read(key.fd, 65536)
                    if not data:
                        selector.unregister(key.fd)
                    elif sizes[key.fd] <= MAX_OUTPUT_BYTES:
                        kept[key.fd].append(data)
                        sizes[key.fd] += len(data)
                continue
            if not selector.get_map():  # both pipes closed: wait for the exit
                try:
                    proc.wait(max(left, 0.0))
                    break
                except subprocess.TimeoutExpired:
                    pass
            if killed:  # a grandchild outside the session holds the pipes, or it cannot die
                break
            with contextlib.suppress(OSError):  # it ended meanwhile
                os.killpg(proc.pid, signal.SIGKILL)
            killed = True
            deadline = time.monotonic() + KILL_GRACE_S
    proc.stdout.close()
    proc.stderr.close()
    proc.poll()
    return b"".join(kept[out]), b"".join(kept[err]), killed


# Cuts what must not leave the host out of a command's record, in place; what it kept, for
# the capture's `filters` (None: the record stays whole).
Keep = Callable[[str, Json], Optional[str]]


class Commands:
    """Commands run `jobs` at a time in a thread pool (the probe reads files meanwhile), each
    recorded by key, less what `keep` cuts."""

    def __init__(self, timeout: float, jobs: int = DEFAULT_JOBS, enabled: bool = True,
                 keep: Optional[Keep] = None) -> None:
        self.timeout = timeout
        self.enabled = enabled
        self.keep = keep
        self.records: Dict[str, Json] = {}
        self.filters: Dict[str, str] = {}
        self.pending: Dict[str, Future[Json]] = {}
        self.pool = ThreadPoolExecutor(max_workers=max(1, jobs))
        path_dirs = os.environ.get("PATH", "").split(os.pathsep)
        # Non-root PATHs lack the sbin folders where ldconfig, lspci and getenforce live.
        extra = ["/usr/local/bin", "/usr/local/sbin", "/usr/sbin", "/sbin", "/usr/bin", "/bin"]
        self.search_path = os.pathsep.join([d for d in path_dirs if d]
                                           + [d for d in extra if d not in path_dirs])
        self.env = dict(os.environ)
        self.env["LC_ALL"] = "C"  # outputs in the layouts the parsers know

    def start(self, jobs: Iterable[Job]) -> None:
        """Queue independent commands; `wait` collects their records."""
        if not self.enabled:
            return
        for key, argv, env in jobs:
            if key not in self.records and key not in self.pending:
                self.pending[key] = self.pool.submit(run_command, argv, env or self.env,
                                                     self.timeout, self.search_path)

    def wait(self, keys: Optional[Iterable[str]] = None) -> None:
        """Until the commands named (all, by default) are recorded."""
        for key in list(self.pending) if keys is None else list(keys):
            future = self.pending.pop(key, None)
            if future is not None:
                self._record(key, future.result())

    def close(self) -> None:
        self.wait()
        self.pool.shutdown()

    def _record(self, key: str, record: Json) -> None:
        if self.keep is not None:
            why = self.keep(key, record)
            if why:
                self.filters["command:" + key] = why
        self.records[key] = record
