"""The raw capture document that probe.py prints: model, load/save, redaction.

A capture is evidence, so the model keeps everything it is given (unknown keys from a newer
probe survive a load and a save) and every section defaults to empty, so an old capture or
one from a host where nothing could be read still loads.
"""

from __future__ import annotations

import gzip
import hashlib
import ipaddress
import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ascend_env.core.errors import EXIT_CANNOT_RUN, AscendEnvError
from ascend_env.core.inputs import MAX_CAPTURE_BYTES, InputError, gunzip_bounded, read_bounded
from ascend_env.core.outputs import write_output
from ascend_env.remote.probe import SCHEMA

PathType = Literal["file", "dir", "link", "char", "block", "fifo", "socket", "missing", "unknown"]


class _Raw(BaseModel):
    model_config = ConfigDict(extra="allow")


class CommandResult(_Raw):
    """One command as it ran: exit status 127 = not found, 124 = timed out."""

    argv: list[str] = Field(default_factory=list)
    rc: int
    stdout: str = ""
    stderr: str = ""
    duration_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.rc == 0

    @property
    def missing(self) -> bool:
        """The program itself was not there (as opposed to failing)."""
        return self.rc == 127


class PathInfo(_Raw):
    """lstat of one path: type, permission bits as octal text, owner, link target, label."""

    type: PathType
    mode: str | None = None
    uid: int | None = None
    gid: int | None = None
    owner: str | None = None
    group: str | None = None
    size: int | None = None
    rdev: str | None = None
    target: str | None = None
    resolved: str | None = None
    broken: bool | None = None
    label: str | None = None

    @property
    def exists(self) -> bool:
        return self.type not in ("missing", "unknown")


class ProcessInfo(_Raw):
    """The probe's own process: who ran it and on which CPUs it may run."""

    uid: int | None = None
    euid: int | None = None
    gid: int | None = None
    groups: list[int] = Field(default_factory=list)
    group_names: dict[str, str] = Field(default_factory=dict)  # gid -> name, as `id` shows
    user: str | None = None
    cpu_count: int | None = None
    affinity: list[int] | None = None
    python: str | None = None
    executable: str | None = None


class ProbeError(_Raw):
    """Something the probe could not read (permission denied, I/O error)."""

    where: str
    error: str


class Capture(_Raw):
    """One host's raw capture (schema ascend-env/capture/v1)."""

    schema_: str = Field(SCHEMA, alias="schema")
    host: str = ""
    captured_at: str = ""
    probe_version: str = ""
    root: str = "/"
    duration_s: float | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    process: ProcessInfo = Field(default_factory=ProcessInfo)
    uname: dict[str, str] = Field(default_factory=dict)
    files: dict[str, str] = Field(default_factory=dict)
    commands: dict[str, CommandResult] = Field(default_factory=dict)
    env: dict[str, str] = Field(default_factory=dict)
    paths: dict[str, PathInfo] = Field(default_factory=dict)
    listings: dict[str, list[str]] = Field(default_factory=dict)
    filters: dict[str, str] = Field(default_factory=dict)
    errors: list[ProbeError] = Field(default_factory=list)

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    def file(self, path: str) -> str | None:
        return self.files.get(path)

    def command(self, key: str) -> CommandResult | None:
        return self.commands.get(key)

    def output(self, key: str) -> str | None:
        """stdout of a command that ran and succeeded, else None."""
        result = self.commands.get(key)
        return result.stdout if result is not None and result.ok else None

    def path(self, path: str) -> PathInfo | None:
        return self.paths.get(path)

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class CaptureError(AscendEnvError):
    """A capture file that cannot be read or is not a capture."""


def parse_capture(data: str | bytes | dict[str, Any], where: str = "capture") -> Capture:
    """One capture from probe output (text) or an already decoded document."""
    try:
        doc = json.loads(data) if isinstance(data, str | bytes) else data
    except ValueError as exc:
        raise CaptureError(f"{where}: not JSON ({exc})") from exc
    except RecursionError as exc:
        raise CaptureError(f"{where}: nested too deeply to be a capture") from exc
    return _validate(doc, where)


def _validate(doc: object, where: str) -> Capture:
    if not isinstance(doc, dict):
        raise CaptureError(f"{where}: expected a capture object, found {type(doc).__name__}")
    schema = doc.get("schema")
    if schema != SCHEMA:
        raise CaptureError(f"{where}: schema is {schema!r}, expected {SCHEMA!r} "
                           "(a file written by `ascend-env collect` or probe.py)")
    try:
        return Capture.model_validate(doc)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise CaptureError(f"{where}: {loc}: {first['msg']}") from exc


def load_capture(path: Path | str) -> list[Capture]:
    """The captures in a file: one capture or a list of them (a fleet); `.gz` is read too."""
    p = Path(path)
    try:
        raw = read_bounded(p, what="capture", limit=MAX_CAPTURE_BYTES)
        if raw[:2] == b"\x1f\x8b":
            raw = gunzip_bounded(raw, what=f"capture {p}", limit=MAX_CAPTURE_BYTES)
    except InputError as exc:
        raise CaptureError(str(exc)) from exc
    try:
        doc = json.loads(raw)
    except ValueError as exc:
        raise CaptureError(f"{p}: not JSON ({exc})") from exc
    except RecursionError as exc:  # json nests by recursion: `[[[[...` past the stack's depth
        raise CaptureError(f"{p}: nested too deeply to be a capture") from exc
    if isinstance(doc, list):
        if not doc:
            raise CaptureError(f"{p}: an empty list holds no capture")
        return [_validate(item, f"{p}[{i}]") for i, item in enumerate(doc)]
    return [_validate(doc, str(p))]


def save_captures(path: Path | str, captures: Iterable[Capture]) -> Path:
    """Write one capture as an object, several as a list; `.gz` compresses."""
    items = [c.to_json() for c in captures]
    doc: object = items[0] if len(items) == 1 else items
    text = json.dumps(doc, indent=1, sort_keys=True) + "\n"

    p = Path(path)
    data = gzip.compress(text.encode()) if p.suffix == ".gz" else text.encode()
    write_output(p, data, what="--output")  # atomic; never over a device or a folder
    return p


def save_capture(path: Path | str, capture: Capture) -> Path:
    return save_captures(path, [capture])


# -- redaction ------------------------------------------------------------------------------

_IPV4 = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w]|\.\d)")
_IPV6 = re.compile(r"(?<![\w:.])[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?![\w:.])")
_MAC = re.compile(r"(?<![\w:])[0-9A-Fa-f]{2}(?::[0-9A-Fa-f]{2}){5}(?![\w:])")
# Within one line only ([^\S\n], white space but a line break): a pattern free to cross lines
# rescans every blank line from each line start, and would eat the breaks after a serial.
_SERIAL = re.compile(r"(?im)^([^\S\n]*(?:Serial Number|SN|Serial)[^\S\n]*[:=][^\S\n]*)"
                     r"(?!NA[^\S\n]*$)(\S(?:.*\S)?)[^\S\n]*$")
# A dotted quad right after these words is a version (npu-smi prints `Version: 24.1.0.3`).
_VERSION_CONTEXT = re.compile(r"(?i)(version|npu-smi|_version\s*=\s*\[?)\W*$")


def _not_an_address(text: str) -> bool:
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return True
    # Loopback, unspecified and netmask-like values identify nobody and help diagnosis.
    return address.is_loopback or address.is_unspecified or text.startswith("255.")


class Redactor:
    """Consistent replacements across one fleet: the same IP gets the same token everywhere."""

    def __init__(self) -> None:
        self.tokens: dict[str, str] = {}

    def token(self, kind: str, value: str) -> str:
        key = f"{kind}:{value}"
        if key not in self.tokens:
            count = sum(1 for k in self.tokens if k.startswith(kind + ":")) + 1
            self.tokens[key] = f"<{kind}-{count}>"
        return self.tokens[key]

    def text(self, text: str, hostnames: Iterable[str]) -> str:
        for name in sorted({h for h in hostnames if len(h) > 2}, key=len, reverse=True):
            text = re.sub(rf"(?<![\w-]){re.escape(name)}(?![\w-])",
                          self.token("host", name.lower()), text)
        text = _SERIAL.sub(lambda m: m.group(1) + self.token("serial", m.group(2)), text)
        text = _MAC.sub(lambda m: self.token("mac", m.group(0).lower()), text)

        def ipv4(match: re.Match[str]) -> str:
            value = match.group(0)
            before = match.string[max(0, match.start() - 24):match.start()]
            if _VERSION_CONTEXT.search(before) or _not_an_address(value):
                return value
            return self.token("ip", value)

        text = _IPV4.sub(ipv4, text)
        text = _IPV6.sub(lambda m: m.group(0) if _not_an_address(m.group(0))
                         else self.token("ip", m.group(0).lower()), text)
        return text

    def capture(self, capture: Capture) -> Capture:
        names = {capture.host, capture.host.split(".")[0]} if capture.host else set()
        doc = capture.to_json()
        redacted = _walk(doc, lambda s: self.text(s, names))
        if capture.host:
            redacted["host"] = self.token("host", capture.host.lower())
        redacted["redacted"] = True
        return Capture.model_validate(redacted)


def _walk(value: Any, change: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return change(value)
    if isinstance(value, list):
        return [_walk(v, change) for v in value]
    if isinstance(value, dict):
        return {change(k) if isinstance(k, str) else k: _walk(v, change)
                for k, v in value.items()}
    return value


def redact(captures: Iterable[Capture]) -> list[Capture]:
    """Captures without hostnames, IP and MAC addresses or serial numbers (`collect --redact`).

    Tokens are consistent across the fleet, so two hosts that share an address still do.
    """
    redactor = Redactor()
    return [redactor.capture(c) for c in captures]


def digest(capture: Capture) -> str:
    """A short content digest, to tell two captures apart in reports."""
    text = json.dumps(capture.to_json(), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


class CollectedHost(BaseModel):
    """One host of `ascend-env collect`: captured, or why not."""

    name: str
    captured: bool
    error: str | None = None


class CollectResult(BaseModel):
    """What `ascend-env collect` wrote."""

    model_config = ConfigDict(populate_by_name=True)

    schema_: str = Field("ascend-env/collect/v1", alias="schema")
    output: str
    redacted: bool
    hosts: list[CollectedHost]

    def exit_code(self) -> int:
        return 0 if all(h.captured for h in self.hosts) else EXIT_CANNOT_RUN
