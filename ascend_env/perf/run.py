"""A profiled run's verdict: the summary of what it recorded and the exit code.

Exit codes (DESIGN.md): 0 the job ran and its profile is summarised (findings are advice);
1 the job itself failed or was stopped at --timeout (the summary of what it recorded, if
anything, is still shown); 2 nothing could be profiled (no command, no profiler for it, no
output recorded).
"""

from __future__ import annotations

from pathlib import Path

from ascend_env.core.errors import EXIT_NOT_RIGHT, UsageError
from ascend_env.core.inputs import InputError
from ascend_env.core.outputs import output_folder
from ascend_env.perf.collect import default_out, plan, run_job, stderr
from ascend_env.perf.model import Summary
from ascend_env.perf.on_targets import label, run_on_hosts
from ascend_env.perf.summarize import summarize
from ascend_env.targets.collect import resolve_hosts


def profile_job(command: list[str], out: Path | None, *, skip: int, steps: int, top: int,
                timeout_s: float) -> tuple[Summary | None, int]:
    """Run COMMAND profiled; its summary (None when nothing was recorded) and exit code."""
    result = run_job(command, out or default_out(), skip=skip, steps=steps,
                     timeout_s=timeout_s, echo=stderr())
    failed = result.timed_out or result.returncode != 0
    run = {"command": command, "returncode": result.returncode, "timed_out": result.timed_out,
           "seconds": round(result.seconds, 3), "profiler": result.profiler,
           "log": str(result.log), "notes": result.notes}
    try:
        summary = summarize(result.raw, top=top, environment=result.environment,
                            fallbacks=result.fallbacks)
    except InputError:
        why = "; ".join(result.notes) or "the job wrote no profiler output"
        ended = "timed out" if result.timed_out else f"exited {result.returncode}"
        if failed:
            stderr().write(f"ascend-env: perf: the job {ended}; nothing was profiled ({why})\n")
            return None, EXIT_NOT_RIGHT
        hint = "" if steps == 0 else " (steps are optimizer.step() calls: --steps 0 records " \
                                     "the whole run)"
        raise UsageError(f"perf: the job {ended} but no profile was recorded: {why}{hint}") \
            from None
    summary.raw_output = str(result.raw)
    summary.run = run
    return summary, EXIT_NOT_RIGHT if failed else 0



def profile_on_targets(command: list[str], out: Path | None, *, host: str | None,
                       inventory: Path | None, limit: str | None, skip: int, steps: int,
                       top: int, timeout_s: float) -> tuple[Summary | None, int]:
    """Run COMMAND profiled on the --host or every --inventory host; one summary of all."""

    if not command:
        plan(command)  # the usage error that names what is missing
    hosts = resolve_hosts(inventory=inventory, limit=limit, target=host)
    if not hosts:
        raise UsageError(f"perf: no host in {inventory} matches --limit {limit}")
    folder = output_folder(out or default_out(), what="--out")
    folder.mkdir(parents=True, exist_ok=True)
    runs = run_on_hosts(hosts, command, folder, skip=skip, steps=steps, timeout_s=timeout_s)
    for run in runs:
        state = run.error or ("timed out" if run.timed_out else f"exited {run.returncode}")
        stderr().write(f"ascend-env: perf: {run.name}: {state}; output in {run.folder}\n")
    reached = [r for r in runs if r.error is None]
    if not reached:
        raise UsageError("perf: no host could run the job: " + "; ".join(
            f"{r.name}: {r.error}" for r in runs))
    fallbacks: dict[str, list[str]] = {}
    environment: dict[str, str] = {}
    for run in reached:
        for op, ranks in run.fallbacks.items():
            fallbacks.setdefault(op, []).extend(f"{label(run.name)}/{r}" for r in ranks)
        environment.update(run.environment)
    failed = len(reached) < len(runs) or any(r.timed_out or r.returncode != 0 for r in reached)
    try:
        summary = summarize(folder, top=top, environment=environment, fallbacks=fallbacks)
    except InputError:
        if failed:
            stderr().write("ascend-env: perf: nothing was profiled\n")
            return None, EXIT_NOT_RIGHT
        raise UsageError("perf: the job ran on every host but recorded no profile (steps "
                         "are optimizer.step() calls: --steps 0 records the whole run)") \
            from None
    summary.raw_output = str(folder)
    summary.run = {"command": command, "hosts": {
        r.name: {"returncode": r.returncode, "timed_out": r.timed_out, "error": r.error,
                 "output": str(r.folder)} for r in runs}}
    return summary, EXIT_NOT_RIGHT if failed else 0
