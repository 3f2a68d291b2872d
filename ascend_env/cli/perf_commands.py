"""The perf command: where a job's step time goes, from a profiler's output or a profiled run.

Each command imports what it runs inside itself, so `--help`, `--version` and the
other commands load none of it (benchmarks/startup.py measures what that saves).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ascend_env.cli.options import (
    HostOption,
    InventoryOption,
    JsonFlag,
    LimitOption,
    timeout_option,
)
from ascend_env.core.errors import UsageError


def perf(
    command: Annotated[list[str] | None, typer.Argument(
        help="The job to profile, after `--`: perf -- python train.py ...",
        show_default=False)] = None,
    from_path: Annotated[Path | None, typer.Option(
        "--from", help="Summarise an existing output: a *_ascend_pt/*_ascend_ms folder, its "
        "ASCEND_PROFILER_OUTPUT, a PROF_* folder, a folder of ranks, a trace file.")] = None,
    out: Annotated[Path | None, typer.Option(
        "--out", help="Folder for the run's raw output (new or empty); default "
        "./ascend-env-perf-DATE-TIME.")] = None,
    skip: Annotated[int, typer.Option(
        "--skip", min=0, max=100000, help="Steps (optimizer.step calls) to let pass before "
        "the warm-up step.")] = 1,
    steps: Annotated[int, typer.Option(
        "--steps", min=0, max=100, help="Steps to record after one warm-up step; 0 records "
        "the whole run.")] = 3,
    top: Annotated[int, typer.Option("--top", min=1, max=100,
                                     help="Operators and kernels to list.")] = 10,
    timeout: Annotated[float, timeout_option("Seconds the job may run (then it is stopped).")
                       ] = 3600.0,
    host: HostOption = None,
    inventory: InventoryOption = None,
    limit: LimitOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Where a job's step time goes: profile it (perf -- CMD) or read an output (--from)."""
    from ascend_env.cli.perf_view import render
    from ascend_env.perf.summarize import summarize

    if from_path is not None:
        if command:
            raise UsageError("perf: give either --from PATH or a command after --, not both")
        render(summarize(from_path, top=top), as_json=as_json)
        return
    if host is not None and inventory is not None:
        raise UsageError("perf: name either --inventory or --host, not both")
    if limit is not None and inventory is None:
        raise UsageError("perf: --limit goes with --inventory")
    from ascend_env.perf.run import profile_job, profile_on_targets

    if host is not None or inventory is not None:
        summary, code = profile_on_targets(list(command or []), out, host=host,
                                           inventory=inventory, limit=limit, skip=skip,
                                           steps=steps, top=top, timeout_s=timeout)
    else:
        summary, code = profile_job(list(command or []), out, skip=skip, steps=steps, top=top,
                                    timeout_s=timeout)
    if summary is not None:
        render(summary, as_json=as_json)
    raise typer.Exit(code)
