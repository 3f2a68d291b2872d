"""The host itself: os-release, kernel and arch, kernel modules, device nodes, container."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ascend_env.facts.capture import PathInfo
from ascend_env.facts.model import ContainerFacts, DeviceNode, ModuleFacts, OsFacts
from ascend_env.facts.reader import CaptureReader
from ascend_env.facts.values import to_int
from ascend_env.remote import probe

# What probes before os.uname() ran (capture "uname" holds the same now): older captures
# still carry them.
UNAME_R = "uname -r"
UNAME_M = "uname -m"


@dataclass(kw_only=True, slots=True)
class OsRelease:
    id: str | None = None
    id_like: list[str] = field(default_factory=list)
    version_id: str | None = None
    version_codename: str | None = None
    name: str | None = None
    pretty_name: str | None = None
    # VERSION tells openEuler's and Kylin's service packs apart, PLATFORM_ID UOS's editions.
    version: str | None = None
    platform_id: str | None = None
    values: dict[str, str] = field(default_factory=dict)


# The characters that end a run of plain text in a shell word, and inside double quotes.
_PLAIN_END = re.compile(r"[\s'\"\\]")
_DOUBLE_END = re.compile(r'["\\]')
# Inside double quotes a backslash escapes only these (POSIX shell, 2.2.3).
_DOUBLE_ESCAPES = frozenset('$`"\\\n')


def shell_words(text: str) -> list[str] | None:
    """The words a POSIX shell reads from one assignment value (quotes and backslashes
    removed, no expansion), or None where a quote is left open. Linear in the text: it jumps
    from one special character to the next (shlex is quadratic in a token's length)."""
    words: list[str] = []
    word: list[str] = []
    started = False
    at, end = 0, len(text)
    while at < end:
        stop = _PLAIN_END.search(text, at)
        cut = stop.start() if stop else end
        if cut > at:
            word.append(text[at:cut])
            started = True
        if stop is None:
            break
        char, at = text[cut], cut + 1
        if char == "'":
            close = text.find("'", at)
            if close < 0:
                return None
            word.append(text[at:close])
            at, started = close + 1, True
        elif char == '"':
            while True:
                inner = _DOUBLE_END.search(text, at)
                if inner is None:
                    return None
                word.append(text[at:inner.start()])
                at = inner.end()
                if text[inner.start()] == '"':
                    break
                if at < end:  # a backslash: it escapes only some characters
                    word.append(text[at] if text[at] in _DOUBLE_ESCAPES else "\\" + text[at])
                    at += 1
            started = True
        elif char == "\\":
            if at == end:  # a line continuation: the value goes on in a line not given
                return None
            word.append(text[at])
            at, started = at + 1, True
        elif started:  # whitespace ends a word
            words.append("".join(word))
            word, started = [], False
    if started:
        words.append("".join(word))
    return words


def parse_os_release(text: str) -> OsRelease:
    """os-release(5): shell-quoted KEY=VALUE."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        if "=" not in line or line.lstrip().startswith("#"):
            continue
        key, value = line.split("=", 1)
        words = shell_words(value)
        values[key.strip()] = " ".join(words) if words is not None \
            else value.strip().strip("\"'")
    return OsRelease(
        id=values.get("ID") or None, id_like=values.get("ID_LIKE", "").split(),
        version_id=values.get("VERSION_ID") or None,
        version_codename=values.get("VERSION_CODENAME") or None,
        name=values.get("NAME") or None, pretty_name=values.get("PRETTY_NAME") or None,
        version=values.get("VERSION") or None, platform_id=values.get("PLATFORM_ID") or None,
        values=values)


@dataclass(kw_only=True, slots=True)
class KernelModule:
    name: str
    size: int | None = None
    refcount: int | None = None
    used_by: list[str] = field(default_factory=list)
    state: str | None = None


def parse_proc_modules(text: str) -> list[KernelModule]:
    """/proc/modules: `name size refcount deps state address`."""
    out: list[KernelModule] = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 3 or not parts[1].isdigit():
            continue
        deps = parts[3] if len(parts) > 3 else "-"
        out.append(KernelModule(
            name=parts[0], size=to_int(parts[1]), refcount=to_int(parts[2]),
            used_by=[d for d in deps.split(",") if d and d != "-"],
            state=parts[4] if len(parts) > 4 else None))
    return out


def parse_lsmod(text: str) -> list[KernelModule]:
    """lsmod: `Module Size Used by` header, then `name size count [users]`."""
    out: list[KernelModule] = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 3 or not parts[1].isdigit():
            continue
        users = parts[3].split(",") if len(parts) > 3 else []
        out.append(KernelModule(name=parts[0], size=to_int(parts[1]), refcount=to_int(parts[2]),
                                used_by=[u for u in users if u]))
    return out


def read_os(r: CaptureReader) -> OsFacts | None:
    """The distribution from os-release and the running kernel; None when neither is known."""
    text = r.file("/etc/os-release") or r.file("/usr/lib/os-release")
    kernel = ((r.output(UNAME_R) or "").strip()
              or (r.file("/proc/sys/kernel/osrelease") or "").strip()
              or r.capture.uname.get("release"))
    if text is None and not kernel:
        return None
    rel = parse_os_release(text or "")
    return OsFacts(id=rel.id, id_like=rel.id_like, version_id=rel.version_id,
                   pretty_name=rel.pretty_name, kernel=kernel or None, release=rel.values)


def read_arch(r: CaptureReader) -> str | None:
    """The machine architecture (`uname -m`, else the probe's own uname)."""
    return ((r.output(UNAME_M) or "").strip() or r.capture.uname.get("machine")
            or None)


def read_modules(r: CaptureReader) -> ModuleFacts:
    """The Ascend driver's kernel modules that are loaded, and where that was read."""
    text = r.file("/proc/modules")
    names: list[str]
    if text:
        names, source = [m.name for m in parse_proc_modules(text)], "/proc/modules"
    elif r.output(probe.LSMOD):
        names, source = [m.name for m in parse_lsmod(r.output(probe.LSMOD) or "")], "lsmod"
    elif "/sys/module" in r.capture.listings:
        # Without /proc/modules (some containers, chroots) /sys/module still names them,
        # though built-in modules are listed there too.
        names, source = r.capture.listings["/sys/module"], "/sys/module"
    else:
        return ModuleFacts()
    loaded = sorted(n for n in names if n.startswith(("drv_", "ascend")) or "davinci" in n)
    return ModuleFacts(source=source, loaded=loaded, driver_loaded=bool(loaded))


def read_device_nodes(r: CaptureReader) -> list[DeviceNode]:
    """The davinci and driver device nodes that exist, in natural order."""
    nodes = []
    for path, info in sorted(r.capture.paths.items(), key=lambda kv: _natural(kv[0])):
        name = posixpath.basename(path)
        if not path.startswith("/dev/") or not info.exists:
            continue
        if re.fullmatch(r"v?davinci\d+", name) or name in probe.DEVICE_NODES:
            nodes.append(_node(path, info))
    return nodes


def _node(path: str, info: PathInfo) -> DeviceNode:
    return DeviceNode(path=path, type=info.type, mode=info.mode, owner=info.owner,
                      group=info.group, uid=info.uid, gid=info.gid, rdev=info.rdev,
                      label=info.label)


def _natural(text: str) -> list[Any]:
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text)]


def read_container(r: CaptureReader) -> ContainerFacts:
    """Whether the probe ran in a container (docker, podman, kubernetes), and its mounts."""
    env_kind = r.capture.env.get("container")
    kind = ("docker" if r.exists("/.dockerenv") else
            "podman" if r.exists("/run/.containerenv") else env_kind or None)
    cgroup = r.file("/proc/1/cgroup") or ""
    if kind is None and re.search(r"docker|kubepods|containerd|libpod", cgroup):
        kind = "kubernetes" if "kubepods" in cgroup else "container"
    mounts = []
    for line in (r.file("/proc/self/mountinfo") or "").splitlines():
        parts = line.split()
        if len(parts) > 4:
            mounts.append(parts[4])
    return ContainerFacts(in_container=kind is not None, kind=kind, mounts=mounts)


# Parsers by the folder name of their samples under tests/data/.
PARSERS: dict[str, Callable[[Any], Any]] = {
    "os_release": parse_os_release,
    "proc_modules": parse_proc_modules,
    "lsmod": parse_lsmod,
}
