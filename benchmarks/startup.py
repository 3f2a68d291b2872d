"""Start-up cost of `ascend-env --version` next to `python -c "import typer, pydantic"`.

Issue #2's goal: the command takes no more than 1.5x the reference. Both are timed in the same
run, interleaved, and compared by medians (these machines are noisy; the ratio is the figure).
Exit status 1 when the ratio is above the goal.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time

GOAL = 1.5


def _time(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    script = shutil.which("ascend-env")
    tool = [script, "--version"] if script else [sys.executable, "-m", "ascend_env", "--version"]
    reference = [sys.executable, "-c", "import typer, pydantic"]
    for command in (tool, reference):  # warm the page cache
        _time(command)
    tool_times, reference_times = [], []
    for _ in range(args.runs):
        tool_times.append(_time(tool))
        reference_times.append(_time(reference))
    tool_s, reference_s = statistics.median(tool_times), statistics.median(reference_times)
    ratio = tool_s / reference_s
    print(f"{'command':<44}{'median ms':>10}")
    print(f"{' '.join(tool[-2:]):<44}{tool_s * 1000:>10.1f}")
    print(f"{'python -c import typer, pydantic':<44}{reference_s * 1000:>10.1f}")
    verdict = "ok" if ratio <= GOAL else "TOO SLOW"
    print(f"ratio {ratio:.2f} (goal <= {GOAL}): {verdict}")
    return 0 if ratio <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
