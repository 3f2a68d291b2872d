"""`perf -- CMD`: run a job here with a profiler switched on, keep its raw output, summarise it.

Python jobs get the hook in perf/child/sitecustomize.py (torch_npu's profiler where torch_npu
is installed, torch's otherwise); anything else runs under CANN's `msprof --application`
where msprof is on PATH. The job's output is shown as it runs and kept in run.log beside the
profiler's files; torch_npu's CPU-fallback warnings are picked out of it per rank.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from ascend_env.core import children
from ascend_env.core.errors import UsageError
from ascend_env.core.outputs import output_folder

CHILD = Path(__file__).resolve().parent / "child"
MAX_LOG_BYTES = 64 * 1024 * 1024  # run.log stops growing here; the job's output still shows
# torch_npu's warning for an operator with no NPU kernel, in its C++ and Python forms:
# "... CAUTION: The operator 'aten::isin.Tensor_Tensor_out' is not currently supported on the
# NPU backend and will fall back to run on the CPU. ..." (function npu_cpu_fallback).
FALLBACK = re.compile(r"CAUTION: The operator '([^']+)' is not currently supported on the NPU "
                      r"backend and will fall back to run on the CPU")
# torchrun prefixes each worker's lines with its rank: "[rank3]:" (also "[default3]:").
RANK_PREFIX = re.compile(r"^\[(?:rank|default)(\d+)\]:")
# Variables that keep torch_npu's warnings from the log: the old and the new name
# (https://www.hiascend.com/document/detail/zh/Pytorch/600/apiref/Envvariables/Envir_029.html;
# torch_npu also prints its own warnings on rank 0 only, torch_npu/utils/utils.py
# _should_print_warning; the fallback warning is raised from the job's frame, so it passes).
SILENCERS = ("TORCH_NPU_DISABLED_WARNING", "TORCH_NPU_WARNING_DISABLE")


@dataclass
class RunResult:
    """How the job ended and what it left."""

    command: list[str]
    returncode: int | None
    seconds: float
    raw: Path
    log: Path
    profiler: str
    timed_out: bool = False
    fallbacks: dict[str, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    environment: dict[str, str] = field(default_factory=dict)


def _is_python(command: list[str]) -> bool:
    program = Path(command[0]).name
    return program.startswith(("python", "torchrun")) or program in ("accelerate", "deepspeed")


def plan(command: list[str]) -> tuple[list[str], str]:
    """The command line to start and the profiler it uses; a UsageError when none fits."""
    if not command:
        raise UsageError("perf: give a command after `--` (perf -- python train.py) or --from")
    if shutil.which(command[0]) is None and not Path(command[0]).is_file():
        raise UsageError(f"perf: {command[0]}: command not found")
    if _is_python(command):
        return command, "python hook (torch_npu.profiler, else torch.profiler)"
    msprof = shutil.which("msprof")
    if msprof is None:
        raise UsageError(f"perf: {command[0]} is not a Python job and msprof (CANN's profiler) "
                         "is not on PATH: source CANN's set_env.sh, or run the Python "
                         "interpreter yourself (perf -- python script.py)")
    # msprof takes the application as one string and runs it through a shell: quote it so.
    return [msprof, "--output={raw}", "--application=" + shlex.join(command)], "msprof"


def environment(raw: Path, skip: int, steps: int) -> dict[str, str]:
    """The job's environment: the hook first on PYTHONPATH, every rank's warnings kept."""
    env = {k: v for k, v in os.environ.items() if k not in SILENCERS}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(CHILD), env.get("PYTHONPATH", "")) if p)
    env["ASCEND_ENV_PERF_DIR"] = str(raw)
    env["ASCEND_ENV_PERF_SKIP"] = str(skip)
    env["ASCEND_ENV_PERF_STEPS"] = str(steps)
    return env


def run_job(command: list[str], out: Path, *, skip: int, steps: int, timeout_s: float,
            echo: IO[str] | None = None) -> RunResult:
    """Run COMMAND with profiling into OUT (absent or empty); the job's lines go to ECHO."""
    argv, profiler = plan(command)
    folder = output_folder(out, what="--out")
    raw = folder / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    argv = [a.replace("{raw}", str(raw)) for a in argv]
    env = environment(raw, skip, steps)
    result = RunResult(command=command, returncode=None, seconds=0.0, raw=raw,
                       log=folder / "run.log", profiler=profiler,
                       environment={k: env[k] for k in env if k.startswith(("ASCEND_", "HCCL_",
                                                                             "TASK_QUEUE"))})
    started = time.monotonic()
    try:
        # Tethered: the job (and every process it starts) ends with ascend-env, even killed.
        child = children.spawn(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    except OSError as exc:
        raise UsageError(f"perf: cannot start {command[0]}: {exc.strerror or exc}") from exc
    # A job that hangs without a word never ends the read loop below: a timer ends it.
    def expire() -> None:
        result.timed_out = True
        children.stop(child)

    timer = threading.Timer(timeout_s, expire)
    timer.daemon = True
    timer.start()
    written = 0
    try:
        assert child.stdout is not None
        with result.log.open("wb") as log:
            for line in iter(child.stdout.readline, b""):
                if written < MAX_LOG_BYTES:
                    log.write(line)
                    written += len(line)
                text = line.decode("utf-8", errors="replace")
                if echo is not None:
                    echo.write(text)
                    echo.flush()
                note_fallbacks(text, result.fallbacks)
    except BaseException:
        children.stop(child)
        raise
    finally:
        timer.cancel()
        children.wait(child)
        if child.stdout is not None:
            child.stdout.close()
    children.raise_if_interrupted()
    result.returncode = child.returncode
    result.seconds = time.monotonic() - started
    for notes in sorted(raw.glob("perf-notes-rank*.txt")):
        rank = notes.stem.removeprefix("perf-notes-rank")
        text = notes.read_text(errors="replace")[:4000]
        result.notes.extend(f"rank {rank}: {line}" for line in text.splitlines() if line)
    return result


def note_fallbacks(line: str, found: dict[str, list[str]]) -> None:
    """Add the operator a CAUTION line names to FOUND, under the rank that printed it."""
    match = FALLBACK.search(line)
    if match is None:
        return
    prefix = RANK_PREFIX.match(line)
    rank = prefix.group(1) if prefix else "job"
    ranks = found.setdefault(match.group(1), [])
    if rank not in ranks:
        ranks.append(rank)


def default_out() -> Path:
    """./ascend-env-perf-YYYYmmdd-HHMMSS: a new folder per run."""
    return Path.cwd() / time.strftime("ascend-env-perf-%Y%m%d-%H%M%S")


def stderr() -> IO[str]:
    """Where the job's own output goes: stderr, so that --json keeps stdout clean."""
    return sys.stderr
