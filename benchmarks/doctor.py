"""Time a level-1 `ascend-env doctor` on one host and on 8, beside `torch.utils.collect_env`.

Usage (root, for the simulated hosts):
    .venv/bin/python benchmarks/doctor.py [--hosts 8] [--repeat 3]

Every figure is the whole command as an operator runs it (a fresh process: interpreter start,
imports, inventory, ssh, probe, facts, checks, rendering), the median of --repeat runs.
The reference is `python -m torch.utils.collect_env` (torch 2.13.0 CPU) measured in the same
run on the same machine. Goals (issue 5): one host under a quarter of collect_env (fast
enough for a container health check), 8 hosts under twice one host.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.sim import fleet

FLEET = f"bench-doctor-{os.getpid()}"
BIN = Path(sys.executable).parent


def timed(command: list[str], repeat: int, ok: tuple[int, ...] = (0, 1)) -> float:
    """Median wall time of `command`; it must end with an exit code in `ok`."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        times.append(time.perf_counter() - start)
        if done.returncode not in ok:
            raise SystemExit(f"{' '.join(command)} exited {done.returncode}:\n"
                             f"{done.stdout[-1500:]}{done.stderr[-1500:]}")
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--hosts", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("needs root (simulated hosts)", file=sys.stderr)
        return 2
    doctor = [str(BIN / "ascend-env"), "doctor"]
    sim = fleet.up(name=FLEET, hosts=args.hosts, state="provisioned", devices=8)
    try:
        inventory = str(sim.inventory)
        timed([*doctor, "--inventory", inventory], 1)  # warm ssh master connections
        rows = [
            ("doctor, this machine (local, in-process probe)", timed(doctor, args.repeat)),
            ("doctor, 1 host over ssh (inventory --limit sim1)",
             timed([*doctor, "--inventory", inventory, "--limit", "sim1"], args.repeat)),
            (f"doctor, {args.hosts} hosts over ssh (inventory)",
             timed([*doctor, "--inventory", inventory], args.repeat)),
            ("python -m torch.utils.collect_env",
             timed([sys.executable, "-m", "torch.utils.collect_env"], args.repeat, (0,))),
        ]
    finally:
        fleet.down(FLEET)
    width = max(len(name) for name, _ in rows)
    for name, seconds in rows:
        print(f"{name:<{width}}  {seconds:6.2f} s")
    local, one, many, reference = (s for _, s in rows)
    print(f"one host / collect_env:   {one / reference:.2f} (goal < 0.25)")
    print(f"local / collect_env:      {local / reference:.2f} (goal < 0.25)")
    print(f"{args.hosts} hosts / one host:     {many / one:.2f} (goal < 2)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
