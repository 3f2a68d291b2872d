"""Capture hosts: probe.py run on each target through a testinfra transport, in parallel.

The local machine is probed by probe.py in a process of its own; a remote target gets the
probe's source inline (`python3 -c SOURCE`), so nothing is copied to it, what runs as root
there is plain text an operator can read, and one round trip per host does the whole
capture. An unreachable host or a failed probe becomes a Captured with an error, never an
exception: the other hosts of a fleet are unaffected.
"""

from __future__ import annotations

import importlib
import os
import shlex
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ascend_env.core.errors import UsageError
from ascend_env.core.host_target import parse_host
from ascend_env.core.resources import remote_source
from ascend_env.facts.capture import Capture, CaptureError, parse_capture
from ascend_env.remote import probe
from ascend_env.targets.inventory import read_inventory

# ssh exits 255 when it could not reach the host (or authenticate); the probe never does.
SSH_FAILED = 255
# Ansible's default folder for ssh master sockets (its `control_path_dir`).
CONTROL_PATH_DIR = "~/.ansible/cp"
# sun_path holds 108 bytes with its NUL; `%C` expands to 40 hex digits, and the master first
# listens on the path plus "." and 16 random characters before renaming it into place.
MAX_SOCKET_PATH = 107 - 17


@dataclass(frozen=True)
class ProbeOptions:
    """What the probe is asked to look at on every target."""

    install_path: str = probe.DEFAULT_INSTALL_PATH
    python: str | None = None  # framework interpreter; None: the venv below, else python3
    venv: str | None = None  # the spec's framework venv, tried first when python is None
    users: tuple[str, ...] = ()  # accounts that run jobs (their groups are recorded)
    timeout_s: float = probe.DEFAULT_TIMEOUT_S


@dataclass
class Captured:
    """One target's capture, or why there is none."""

    name: str
    capture: Capture | None = None
    error: str | None = None
    unreachable: bool = False
    host: Any = None  # the testinfra Host, for checks that run things (level 2+)
    duration_s: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


def _probe_args(options: ProbeOptions, python: str | None) -> list[str]:
    args = ["--install-path", options.install_path, "--timeout", str(options.timeout_s)]
    if python is not None:  # else the probe's own interpreter
        args += ["--python", python]
    for user in options.users:
        args += ["--user", user]
    return args


def _local_python(options: ProbeOptions) -> str:
    if options.python:
        return options.python
    venv_python = Path(options.venv or "") / "bin" / "python"
    if options.venv and os.access(venv_python, os.X_OK):
        return str(venv_python)
    return shutil.which("python3") or sys.executable


def capture_local(options: ProbeOptions, name: str = "localhost") -> Captured:
    """This machine, probed by probe.py in a process of its own, as a target runs it: it
    works beside the doctor's imports, and its commands inherit nothing of this process.
    -I -S: it needs only the standard library, and the user's site hooks stay out of it."""
    started = time.monotonic()
    command = [sys.executable, "-I", "-S", "-c", remote_source("probe"),
               *_probe_args(options, _local_python(options))]
    try:
        # The probe bounds each command by the timeout, 16 at once at most; this bounds the
        # whole, should the probe itself hang.
        done = subprocess.run(command, capture_output=True, text=True, check=False,
                              timeout=options.timeout_s * 8 + 60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Captured(name=name, error=f"the probe did not run: {exc}")
    if done.returncode != 0:
        return Captured(name=name, error=f"the probe failed (exit {done.returncode}): "
                                         f"{done.stderr.strip()[-500:]}")

    try:
        capture = parse_capture(done.stdout, where="local probe")
    except CaptureError as exc:
        return Captured(name=name, error=str(exc))
    return Captured(name=name, capture=_named(capture, name),
                    duration_s=time.monotonic() - started)


def _named(capture: Capture, name: str) -> Capture:
    """Hosts of a fleet are known by their inventory names; keep what the host calls itself."""
    if capture.host and capture.host != name:
        extra = capture.model_extra if capture.model_extra is not None else {}
        extra.setdefault("hostname", capture.host)
    capture.host = name
    return capture


# The most one argument of a command may hold on Linux (MAX_ARG_STRLEN): the shell line
# that carries the probe's source is one, in sshd's `sh -c LINE` and in `sh -c` in an image.
MAX_ARGUMENT = 128 * 1024


def remote_command(options: ProbeOptions) -> str:
    """One shell line that runs the probe on a target: no file is copied there.

    The source travels as `python3 -c`'s argument, not on stdin: testinfra's Host.run gives
    a command no stdin on any transport. It stays plain text, visible in ps and audit logs."""
    code = shlex.quote(remote_source("probe"))
    args = " ".join(shlex.quote(a) for a in _probe_args(options, options.python))
    if options.python or not options.venv:
        return f"exec python3 -c {code} {args}"
    # The framework interpreter is chosen on the target: the spec's venv where it exists,
    # else the probe's own python3 (its sys.executable: never a shim).
    venv = shlex.quote(f"{options.venv}/bin/python")
    return f'[ -x {venv} ] && set -- --python {venv}; exec python3 -c {code} {args} "$@"'


def capture_remote(name: str, host: Any, command: str) -> Captured:
    """Run the probe (`remote_command`) through a testinfra Host; errors become a Captured
    with a message."""
    started = time.monotonic()
    result = Captured(name=name, host=host)
    try:
        out = host.run(command)
    except Exception as exc:  # any transport's failure to connect: testinfra has no base class
        result.error, result.unreachable = f"unreachable: {transport_reason(exc)}", True
        return result
    # Once the answer is in: the import (pydantic) would hold the probe's start back.

    result.duration_s = time.monotonic() - started
    stderr = (out.stderr or "").strip()
    if out.rc == SSH_FAILED:
        result.unreachable = True
        result.error = f"unreachable: {_last_line(stderr) or 'ssh failed (exit 255)'}"
    elif out.rc == 127:
        result.error = "python3 is not installed on the host (the probe needs Python 3.8+)"
    elif out.rc != 0:
        result.error = f"the probe failed (exit {out.rc}): {stderr[-500:]}"
    else:
        try:
            result.capture = _named(parse_capture(out.stdout, where=f"probe on {name}"), name)
        except CaptureError as exc:
            result.error = str(exc)
    return result


# The most of a transport's message a report carries: its reason fits in one line.
MAX_REASON = 300


def _last_line(text: str) -> str:
    """The last non-empty line, bounded: ssh prints its reason last, after any banners."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return _bounded(lines[-1]) if lines else ""


def _bounded(text: str) -> str:
    return text if len(text) <= MAX_REASON else text[:MAX_REASON - 3] + "..."


def transport_reason(exc: BaseException) -> str:
    """The transport's own reason a host could not be reached, in one bounded line.

    testinfra raises RuntimeError(CommandResult) when its first command fails (the encoding
    check ssh runs before ours): its repr holds the whole command, and for the probe that is
    its 70 KB source, so the reason is taken from the result's stderr instead.
    """
    result = exc.args[0] if exc.args else None
    stderr = getattr(result, "stderr", None) if result is not None else None
    if isinstance(stderr, bytes):
        stderr = stderr.decode("utf-8", "replace")
    if isinstance(stderr, str) and stderr.strip():
        return _last_line(stderr)
    status = getattr(result, "exit_status", None)
    if status is not None:
        return f"the transport failed (exit {status}) and gave no reason"
    text = str(exc).strip()
    first = text.splitlines()[0] if text else ""
    return _bounded(f"{type(exc).__name__}: {first}" if first else type(exc).__name__)


def control_path(directory: str | None) -> str | None:
    """An ssh ControlPath in Ansible's control_path_dir, or None where a socket cannot live.

    Ansible keeps one ssh master per host for 60 s (ControlPersist); the doctor reuses the
    same mechanism, so a doctor right after another skips the handshake.
    """
    folder = Path(directory or os.environ.get("ANSIBLE_CONTROL_PATH_DIR")
                  or CONTROL_PATH_DIR).expanduser()
    path = str(folder / "ae-%C")
    if len(path) - 2 + 40 > MAX_SOCKET_PATH:
        return None
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:
        return None
    return path


def _share_connection(host: Any, directory: str | None) -> Any:
    """Give a testinfra ssh backend a ControlPath (testinfra sets ControlMaster=auto and
    ControlPersist but takes the path only from ansible.cfg); a user's own ssh arguments that
    name a ControlMaster or ControlPath win."""
    backend = getattr(host, "backend", None)
    if backend is None or getattr(backend, "NAME", None) not in ("ssh", "safe-ssh") \
            or backend.controlpath or not backend.controlpersist:
        return host
    extra = (backend.ssh_extra_args or "").lower()
    if "controlmaster" in extra or "controlpath" in extra:
        return host
    path = control_path(directory)
    if path is not None:  # testinfra %-formats the command line it builds
        backend.controlpath = path.replace("%", "%%")
    return host


def check_target(target: str) -> None:
    """Refuse a --host that names no host: testinfra would take an empty one for localhost
    over ssh, so `--host ''` would quietly check something else than was meant."""
    parse_host(target)


def _has_control(text: str) -> bool:
    return any(ord(c) < 32 or ord(c) == 127 for c in text)


def resolve_hosts(*, inventory: Path | None = None, limit: str | None = None,
                  target: str | None = None, ssh_config: Path | None = None
                  ) -> list[tuple[str, Any]]:
    """testinfra Hosts by name: an Ansible inventory (with --limit), or one target URL."""
    testinfra = importlib.import_module("testinfra")
    if inventory is not None:
        runner = importlib.import_module("testinfra.utils.ansible_runner")
        found = []
        for name, hostvars in read_inventory(inventory, limit).items():
            address = str(hostvars.get("ansible_host", name))
            if _has_control(name) or _has_control(address):
                # Ansible's ini plugin takes any bytes for a host line (a zip, say); ssh
                # would fail on them later with an unrelated error, if at all.
                raise UsageError(f"{inventory}: host {name[:80]!r}: not a host name or "
                                 "address (it holds control characters)")
            # testinfra's own mapping of Ansible connection variables to a transport, fed
            # from the inventory already read (it would start ansible-inventory again).
            try:
                host = runner.get_ansible_host(runner.get_ansible_config(), {
                    "_meta": {"hostvars": {name: hostvars}}, "all": {"hosts": [name]}}, name)
            except ValueError as exc:  # a name or address urllib cannot read ("[::1")
                raise UsageError(f"{inventory}: host {name[:80]!r}: not a host name or "
                                 f"address ({exc})") from exc
            if host is None:
                raise UsageError(f"{inventory}: {name}: connection "
                                 f"{hostvars.get('ansible_connection')} is not supported")
            found.append((name, _share_connection(host,
                                                  hostvars.get("ansible_control_path_dir"))))
        return found
    assert target is not None
    parsed = parse_host(target)
    spec = parsed.url
    kwargs = {"ssh_config": str(ssh_config)} if ssh_config else {}
    try:
        host = testinfra.get_host(spec, **kwargs)
    except Exception as exc:  # testinfra's parsing and backends raise what they like
        raise UsageError(f"--host {target}: {transport_reason(exc)}") from exc
    return [(parsed.name or "localhost", _share_connection(host, None))]


def capture_hosts(hosts: list[tuple[str, Any]], options: ProbeOptions,
                  timeout_s: float = 300.0) -> list[Captured]:
    """Every host captured in parallel; a host that hangs past `timeout_s` is unreachable."""
    if not hosts:
        return []
    started = time.monotonic()
    command = remote_command(options)
    done: dict[int, Captured] = {}
    pending = list(enumerate(hosts))
    lock = threading.Lock()

    def worker() -> None:
        while True:
            with lock:
                if not pending:
                    return
                index, (name, host) = pending.pop(0)
            done[index] = capture_remote(name, host, command)

    # Daemon threads: one stuck on a host past the timeout must not hold the process at exit
    # (a ThreadPoolExecutor's workers are joined at interpreter shutdown).
    workers = [threading.Thread(target=worker, daemon=True) for _ in range(min(32, len(hosts)))]
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join(max(0.0, timeout_s - (time.monotonic() - started)))
    with lock:
        pending.clear()  # what has not started by now will not be waited for either
    return [done.get(index) or Captured(name=name, host=host, unreachable=True,
                                        error=f"no answer within {timeout_s:.0f}s")
            for index, (name, host) in enumerate(hosts)]

