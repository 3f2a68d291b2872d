"""Start-up cost of `ascend-env --version`, beside `python -c "import typer, pydantic"` and
beside importing every capability up front.

The command modules (ascend_env/cli/*_commands.py) import what a command runs inside that
command, so `--help`, `--version` and the light commands (profiles, spec, matrix) load none of
the others' dependencies (pytest, ansible, testinfra, the facts models). The last ratio is
what those in-function imports save: the start-up every command would pay if the CLI imported
every capability at module level. Goal: `--version` at most 1.5x the typer+pydantic import.
All rows are timed in the same run, interleaved, and compared by medians (these machines are
noisy; the ratios are the figures). Exit status 1 when the goal is missed.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time

GOAL = 1.5
EVERY_CAPABILITY = ("ascend_env.cli.app", "ascend_env.doctor.run", "ascend_env.doctor.fix",
                    "ascend_env.install.provision", "ascend_env.workflows.install_checked",
                    "ascend_env.image.build", "ascend_env.smoke.command", "ascend_env.perf.run",
                    "ascend_env.explain.match", "ascend_env.cluster.table_of_fleet",
                    "ascend_env.repository.fetch", "ascend_env.targets.inventory")


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
    eager = [sys.executable, "-c", "import " + ", ".join(EVERY_CAPABILITY)]
    rows = {"ascend-env --version": tool, "python -c import typer, pydantic": reference,
            "python -c import every capability": eager}
    for command in rows.values():  # warm the page cache
        _time(command)
    times: dict[str, list[float]] = {name: [] for name in rows}
    for _ in range(args.runs):
        for name, command in rows.items():
            times[name].append(_time(command))
    medians = {name: statistics.median(values) for name, values in times.items()}
    print(f"{'command':<44}{'median s':>10}")
    for name, value in medians.items():
        print(f"{name:<44}{value:>10.3f}")
    ratio = medians["ascend-env --version"] / medians["python -c import typer, pydantic"]
    saved = medians["python -c import every capability"] / medians["ascend-env --version"]
    print(f"every capability imported up front / ascend-env --version: {saved:.2f}")
    verdict = "ok" if ratio <= GOAL else "TOO SLOW"
    print(f"--version / typer+pydantic: {ratio:.2f} (goal <= {GOAL}): {verdict}")
    return 0 if ratio <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
