"""The environment: the probe's variables, a login shell's, set_env.sh and profile.d exports,
and where the loader finds the Ascend libraries (ldconfig -p, LD_LIBRARY_PATH)."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ascend_env.facts.model import EnvFacts, LibraryFacts
from ascend_env.facts.reader import CaptureReader
from ascend_env.remote import probe


def parse_set_env(text: str) -> dict[str, str]:
    """Variables a set_env.sh (or profile.d file) exports, values as written (unexpanded)."""
    out: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line.startswith("export "):
            continue
        assignment = line[len("export "):].strip()
        name, sep, value = assignment.partition("=")
        if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            continue
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        out[name] = value
    return out


def parse_env0(text: str) -> dict[str, str]:
    """`env -0` output: NAME=value items separated by NUL bytes (values may span lines)."""
    out: dict[str, str] = {}
    for item in text.split("\0"):
        name, sep, value = item.partition("=")
        name = name.strip("\n")
        if sep and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            out[name] = value
    return out


@dataclass(kw_only=True, slots=True)
class LdconfigEntry:
    soname: str
    flags: str | None = None
    path: str


def parse_ldconfig(text: str) -> list[LdconfigEntry]:
    """`ldconfig -p` lines: `<soname> (<flags>) => <path>`."""
    out: list[LdconfigEntry] = []
    pattern = re.compile(r"^\s*(\S+)\s+\(([^)]*)\)\s+=>\s+(\S.*?)\s*$")
    for line in text.splitlines():
        match = pattern.match(line)
        if match:
            out.append(LdconfigEntry(soname=match.group(1), flags=match.group(2),
                                     path=match.group(3)))
    return out


def read_env(r: CaptureReader) -> EnvFacts:
    """Paths, Ascend and thread variables of the probe's environment and of a login shell."""
    env = dict(r.capture.env)

    def split(name: str) -> list[str]:
        return [p for p in env.get(name, "").split(":") if p]

    threads = {k: v for k, v in env.items()
               if k.startswith(("OMP_", "KMP_", "GOMP_", "MKL_", "OPENBLAS_"))
               or k in ("TASK_QUEUE_ENABLE", "CPU_AFFINITY_CONF", "NUMEXPR_NUM_THREADS")}
    profile = {p: parse_set_env(t) for p, t in r.capture.files.items()
               if p.startswith("/etc/profile.d/")}
    scripts = {p: parse_set_env(t) for p, t in r.capture.files.items()
               if p.endswith("/set_env.sh")}
    home = env.get("ASCEND_HOME_PATH") or None
    toolkit = env.get("ASCEND_TOOLKIT_HOME") or None
    login_text = r.output(probe.LOGIN_ENV)
    login = parse_env0(login_text) if login_text is not None else None
    return EnvFacts(vars=env, ld_library_path=split("LD_LIBRARY_PATH"),
                    login_vars=login,
                    login_sourced=None if login is None else bool(
                        login.get("ASCEND_HOME_PATH") or login.get("ASCEND_TOOLKIT_HOME")),
                    pythonpath=split("PYTHONPATH"), path=split("PATH"),
                    ascend_home_path=home, toolkit_home=toolkit,
                    opp_path=env.get("ASCEND_OPP_PATH") or None,
                    sourced=bool(home or toolkit), threads=threads,
                    profile_files=profile, set_env_scripts=scripts)


def read_libraries(r: CaptureReader, ld_path: list[str]) -> dict[str, LibraryFacts]:
    """Each Ascend soname in the loader cache, on LD_LIBRARY_PATH and in listed folders."""
    result = r.capture.commands.get(probe.LDCONFIG)
    cache = parse_ldconfig(result.stdout) if result and result.ok else []
    out: dict[str, LibraryFacts] = {}
    ld_dirs = [posixpath.normpath(d) for d in ld_path if d.startswith("/")]
    for soname in probe.ASCEND_SONAMES:
        lib = LibraryFacts(soname=soname)
        lib.ldconfig = [e.path for e in cache if e.soname.split(".so")[0] + ".so" == soname]
        for folder, names in r.capture.listings.items():
            hits = [f"{folder}/{n}" for n in names if n.split(".so")[0] + ".so" == soname]
            lib.on_disk += hits
            if folder in ld_dirs:
                lib.ld_library_path += hits
        lib.resolvable = bool(lib.ldconfig or lib.ld_library_path)
        out[soname] = lib
    return out


# Parsers by the folder name of their samples under tests/data/.
PARSERS: dict[str, Callable[[Any], Any]] = {
    "set_env": parse_set_env,
    "env0": parse_env0,
    "ldconfig": parse_ldconfig,
}
