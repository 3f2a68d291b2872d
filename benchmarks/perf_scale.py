"""Does `perf --from` stay fast and small on a large run? The kernels of a real run (the
vendor's kernel_details.csv test data, CANN 8's full 46-column header) are replicated to
10^3 ... 10^6 rows in a torch_npu output folder; perf and msprof-analyze's advisor (the
vendor's own analysis, `msprof-analyze advisor all`) read the same folder, one after the other.

Usage: .venv/bin/python benchmarks/perf_scale.py [--max 1000000] [--no-advisor]

Printed per size: perf's wall time (the best of three runs, the least disturbed by other jobs
on the machine) and peak memory, the advisor's (one run), and perf / advisor; then perf's
cost per added kernel between sizes. Goals, at the largest size: perf wall / advisor wall at
most 0.05, perf's peak memory at most 400 MB, and wall linear in kernels: the cost per added
kernel from the second-largest size to the largest at most twice the one before (a quadratic
reader would show ten times). Exit 1 when a goal is missed, 2 when the data or a tool is
missing.

Each command runs in a fresh interpreter that reports its children's peak resident memory
(getrusage RUSAGE_CHILDREN: the largest of the command's processes), so the figures are
whole-process ones, start-up included. perf runs from this checkout (`python -m`).
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "../shared/fixtures/profiler/ut__advisor__compute_advice__data__kernel_details.csv"
ADVISOR = Path(sys.executable).with_name("msprof-analyze")
SIZES = (1_000, 10_000, 100_000, 1_000_000)
RATIO_GOAL = 0.05
MEMORY_GOAL_MB = 400.0
LINEAR_FACTOR = 2.0
PERF_RUNS = 3
# Runs argv (JSON in argv[1]) and prints the peak resident memory of its process tree, in KB.
PEAK = ("import json, resource, subprocess, sys; "
        "done = subprocess.run(json.loads(sys.argv[1]), stdout=subprocess.DEVNULL, "
        "stderr=subprocess.DEVNULL); "
        "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")


def replicate(rows: int, folder: Path) -> Path:
    """A torch_npu output folder whose kernel_details.csv holds ROWS real kernels."""
    header, *body = SOURCE.read_text().splitlines()
    output = folder / f"node1_{rows}_20260101000000000_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    output.mkdir(parents=True)
    with (output / "kernel_details.csv").open("w") as handle:
        handle.write(header + "\n")
        whole, rest = divmod(rows, len(body))
        block = "\n".join(body) + "\n"
        for _ in range(whole):
            handle.write(block)
        handle.write("".join(line + "\n" for line in body[:rest]))
    return output.parent


def measure(argv: list[str], cwd: Path) -> tuple[float, float, int]:
    """Wall seconds, peak resident MB and exit code of ARGV."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", PEAK, json.dumps(argv)], cwd=cwd,
                          capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    code, peak_kb = done.stdout.split()
    return wall, int(peak_kb) / 1024, int(code)


def perf_agrees(folder: Path, rows: int) -> bool:
    """perf's kernel count is the table's: the benchmark times a summary that is right."""
    done = subprocess.run([sys.executable, "-m", "ascend_env", "perf", "--from",
                           str(folder), "--json"], cwd=ROOT, capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        return False
    document = json.loads(done.stdout)
    return bool(sum(c["count"] for c in document["core_types"]) == rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--max", type=int, default=SIZES[-1], help="largest size to run")
    parser.add_argument("--no-advisor", action="store_true",
                        help="perf alone (no ratio goal is checked)")
    args = parser.parse_args()
    if not SOURCE.is_file():
        print(f"perf_scale: needs the vendor's kernel table at {SOURCE.resolve()}")
        return 2
    if not args.no_advisor and not ADVISOR.is_file():
        print(f"perf_scale: needs msprof-analyze (the dev extra) at {ADVISOR}")
        return 2
    sizes = [s for s in SIZES if s <= args.max]
    results: list[tuple[int, float, float, float | None, float | None]] = []
    print(f"{'kernels':>9} {'perf s':>8} {'perf MB':>8} {'advisor s':>10} {'advisor MB':>11} "
          f"{'perf/advisor':>13}")
    with tempfile.TemporaryDirectory(prefix="perf-scale-") as scratch:
        for rows in sizes:
            folder = replicate(rows, Path(scratch) / str(rows))
            if not perf_agrees(folder, rows):
                print(f"perf_scale: perf's summary of {rows} kernels is wrong or failed")
                return 1
            runs = [measure([sys.executable, "-m", "ascend_env", "perf", "--from", str(folder),
                             "--json"], ROOT) for _ in range(PERF_RUNS)]
            wall = min(r[0] for r in runs)
            peak = max(r[1] for r in runs)
            code = max(r[2] for r in runs)
            advisor_wall = advisor_peak = None
            if not args.no_advisor:
                out = Path(scratch) / f"advisor-{rows}"
                out.mkdir()
                advisor_wall, advisor_peak, advisor_code = measure(
                    [str(ADVISOR), "advisor", "all", "-d", str(folder), "-o", str(out),
                     "--force", "-l", "en"], Path(scratch))
                if advisor_code != 0:
                    print(f"perf_scale: msprof-analyze advisor failed on {rows} kernels")
                    return 2
            shutil.rmtree(folder)
            results.append((rows, wall, peak, advisor_wall, advisor_peak))
            ratio = f"{wall / advisor_wall:13.4f}" if advisor_wall else f"{'-':>13}"
            print(f"{rows:>9} {wall:8.2f} {peak:8.1f} "
                  f"{advisor_wall if advisor_wall is not None else float('nan'):10.2f} "
                  f"{advisor_peak if advisor_peak is not None else float('nan'):11.1f} {ratio}",
                  flush=True)
            if code != 0:
                print(f"perf_scale: perf exited {code} on {rows} kernels")
                return 1
    return verdict(results, advisor=not args.no_advisor)


def verdict(results: list[tuple[int, float, float, float | None, float | None]], *,
            advisor: bool) -> int:
    pairs = list(itertools.pairwise(results))
    costs = [(b[1] - a[1]) / (b[0] - a[0]) * 1e6 for a, b in pairs]
    for (a, b), cost in zip(pairs, costs, strict=True):
        print(f"perf cost per added kernel, {a[0]} -> {b[0]}: {cost:.2f} us")
    rows, wall, peak, advisor_wall, _ = results[-1]
    ok = True
    if advisor and advisor_wall:
        ratio = wall / advisor_wall
        ok &= ratio <= RATIO_GOAL
        print(f"at {rows} kernels: perf wall / advisor wall = {ratio:.4f} "
              f"(goal: at most {RATIO_GOAL})")
    ok &= peak <= MEMORY_GOAL_MB
    print(f"at {rows} kernels: perf peak memory {peak:.1f} MB (goal: at most "
          f"{MEMORY_GOAL_MB:.0f} MB)")
    if len(costs) >= 2:
        factor = costs[-1] / costs[-2] if costs[-2] > 0 else float("inf")
        linear = factor <= LINEAR_FACTOR
        ok &= linear
        print(f"linear in kernels: cost per added kernel {costs[-2]:.2f} then {costs[-1]:.2f} "
              f"us (x{factor:.2f}; goal: at most x{LINEAR_FACTOR:g}): {'yes' if linear else 'no'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
