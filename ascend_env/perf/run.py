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
from ascend_env.perf.collect import default_out, run_job, stderr
from ascend_env.perf.model import Summary
from ascend_env.perf.summarize import summarize


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

