"""`perf --host/--inventory -- CMD`: the job run profiled on each target, its output brought back.

Per host, over the same testinfra transport the doctor uses: a temporary folder (mktemp -d),
the profiling hook written into it (base64 through the shell, no scp), the command run there
under coreutils `timeout` with the hook on PYTHONPATH, then the folder's raw output and log
brought back as one gzip'd tar through base64, and the folder removed. The command runs in
the login user's home with the non-interactive ssh environment: `bash -lc '...'` gives it a
login shell (CANN's set_env.sh from /etc/profile.d).
"""

from __future__ import annotations

import base64
import binascii
import io
import re
import shlex
import tarfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ascend_env.core.errors import UsageError
from ascend_env.core.inputs import InputError, gunzip_bounded
from ascend_env.perf.collect import CHILD, SILENCERS, note_fallbacks
from ascend_env.targets.collect import transport_reason

HOOK = CHILD / "sitecustomize.py"
MAX_BROUGHT_BYTES = 512 * 1024 * 1024  # the output of a few steps; more stays on the host
MAX_WORKERS = 32
_RC = re.compile(r"^ascend-env-perf-rc=(\d+)$", re.MULTILINE)


@dataclass
class HostRun:
    """One target's run: how it ended and where its output now lies."""

    name: str
    folder: Path
    returncode: int | None = None
    timed_out: bool = False
    error: str | None = None
    fallbacks: dict[str, list[str]] = field(default_factory=dict)
    environment: dict[str, str] = field(default_factory=dict)


def label(name: str) -> str:
    """A host name as it can stand in a file name (the ranks' worker names carry it)."""
    # No leading dot: "." or ".." would name a folder outside --out.
    return re.sub(r"[^A-Za-z0-9_.-]", "-", name).lstrip(".")[:64] or "host"


def _shell(host: Any, name: str, command: str) -> Any:
    try:
        return host.run(command)
    except Exception as exc:  # testinfra's backends raise what they like

        raise UsageError(f"cannot reach {name}: {transport_reason(exc)}") from exc


def job_script(command: list[str], folder: str, name: str, *, skip: int, steps: int,
               timeout_s: float) -> str:
    """The shell text run on the target: hook on PYTHONPATH, warnings kept, bounded by timeout,
    output to run.log, the exit status printed last."""
    q = shlex.quote
    return "; ".join([
        "cd ~ 2>/dev/null || cd /",
        f"unset {' '.join(SILENCERS)}",
        f"export PYTHONPATH={q(folder + '/child')}${{PYTHONPATH:+:$PYTHONPATH}}",
        f"export ASCEND_ENV_PERF_DIR={q(folder + '/raw')} ASCEND_ENV_PERF_SKIP={skip} "
        f"ASCEND_ENV_PERF_STEPS={steps} ASCEND_ENV_PERF_LABEL={q(label(name))}",
        f"env | grep -E '^(ASCEND_|HCCL_|TASK_QUEUE)' > {q(folder + '/perf-env.txt')}",
        f"timeout -k 10 {int(timeout_s) + 1} {shlex.join(command)} "
        f"> {q(folder + '/run.log')} 2>&1 < /dev/null",
        "echo ascend-env-perf-rc=$?",
    ])


def run_on_host(name: str, host: Any, command: list[str], out: Path, *, skip: int,
                steps: int, timeout_s: float) -> HostRun:
    """Run COMMAND profiled on one host; its output lands in OUT/<host>."""
    run = HostRun(name=name, folder=out / label(name))
    made = _shell(host, name, "mktemp -d /tmp/ascend-env-perf.XXXXXX")
    folder = str(made.stdout).strip()
    if made.rc != 0 or not folder.startswith("/tmp/ascend-env-perf."):
        raise UsageError(f"{name}: cannot create a folder: {str(made.stderr).strip()[-300:]}")
    q = shlex.quote
    try:
        payload = base64.b64encode(HOOK.read_bytes()).decode("ascii")
        written = _shell(host, name, f"mkdir -p {q(folder + '/child')} {q(folder + '/raw')} && "
                         f"printf %s {payload} | base64 -d > {q(folder + '/child/' + HOOK.name)}")
        if written.rc != 0:
            raise UsageError(f"{name}: cannot write the profiling hook: {written.stderr}")
        done = _shell(host, name, job_script(command, folder, name, skip=skip, steps=steps,
                                             timeout_s=timeout_s))
        status = _RC.findall(str(done.stdout))
        run.returncode = int(status[-1]) if status else None
        run.timed_out = run.returncode in (124, 137)
        _bring_back(host, name, folder, run.folder)
    finally:
        _shell(host, name, f"rm -rf {q(folder)}")
    log = run.folder / "run.log"
    if log.is_file():
        for line in log.read_text(errors="replace").splitlines():
            note_fallbacks(line, run.fallbacks)
    env_file = run.folder / "perf-env.txt"
    if env_file.is_file():
        for line in env_file.read_text(errors="replace").splitlines():
            key, _, value = line.partition("=")
            run.environment[key] = value
    return run


def _bring_back(host: Any, name: str, folder: str, dest: Path) -> None:
    q = shlex.quote
    size = _shell(host, name, f"du -sb {q(folder)} | cut -f1")
    try:
        total = int(str(size.stdout).strip() or "0")
    except ValueError:
        total = 0
    if total > MAX_BROUGHT_BYTES:
        raise UsageError(f"{name}: the output is {total} bytes, more than the "
                         f"{MAX_BROUGHT_BYTES} perf brings back; record fewer --steps")
    packed = _shell(host, name, f"tar -C {q(folder)} -cf - raw run.log perf-env.txt "
                                "| gzip -c | base64 -w0")
    if packed.rc != 0:
        raise UsageError(f"{name}: cannot pack the output: {str(packed.stderr)[-300:]}")
    try:
        raw = base64.b64decode(str(packed.stdout).strip(), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise UsageError(f"{name}: the output came back damaged ({exc})") from exc
    data = gunzip_bounded(raw, what=f"{name}'s output", limit=MAX_BROUGHT_BYTES)
    dest.mkdir(parents=True)
    try:
        with tarfile.open(fileobj=io.BytesIO(data)) as archive:
            # The data filter refuses absolute paths, links out of DEST and device nodes.
            archive.extractall(dest, filter="data")
    except (tarfile.TarError, OSError) as exc:
        raise InputError(f"{name}: cannot unpack the output: {exc}") from exc


def run_on_hosts(hosts: list[tuple[str, Any]], command: list[str], out: Path, *, skip: int,
                 steps: int, timeout_s: float) -> list[HostRun]:
    """Every host's run, in parallel; a host that cannot be reached gets its error."""
    def one(entry: tuple[str, Any]) -> HostRun:
        name, host = entry
        try:
            return run_on_host(name, host, command, out, skip=skip, steps=steps,
                               timeout_s=timeout_s)
        except UsageError as exc:
            return HostRun(name=name, folder=out / label(name), error=str(exc))

    with ThreadPoolExecutor(max_workers=min(MAX_WORKERS, max(len(hosts), 1))) as pool:
        return list(pool.map(one, hosts))
