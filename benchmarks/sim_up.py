"""Time `up` of N simulated hosts with a warm cache, beside references from the same run.

Usage (root): .venv/bin/python benchmarks/sim_up.py [--hosts 8] [--state bare] [--repeat 3]

References: one `cp -a` of the cached base root (the cost a copy-mode host would pay) and
one bare sshd start+stop. The figure to watch is the ratio, which holds across machines
better than seconds; the issue's target is 8 hosts under 60 s on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.sim import fleet, rootfs
from tests.sim.layout import cache_dir

FLEET = f"bench-{os.getpid()}"


def time_up(hosts: int, state: str, root_mode: str) -> float:
    t0 = time.perf_counter()
    fleet.up(name=FLEET, hosts=hosts, state=state, root_mode=root_mode)
    elapsed = time.perf_counter() - t0
    fleet.down(FLEET)
    return elapsed


def time_copy(base: Path) -> float:
    with tempfile.TemporaryDirectory(dir=cache_dir()) as tmp:
        t0 = time.perf_counter()
        subprocess.run(["cp", "-a", f"{base}/.", tmp], check=True)
        return time.perf_counter() - t0


def time_one_host() -> float:
    return time_up(1, "bare", "overlay")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--hosts", type=int, default=8)
    ap.add_argument("--state", choices=["bare", "provisioned"], default="bare")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("needs root", file=sys.stderr)
        return 2
    base = rootfs.ensure_base()
    time_up(1, args.state, "overlay")  # warm every cache (base, stubs, packages)
    rows: list[tuple[str, float]] = []
    for mode in ("overlay", "copy"):
        runs = [time_up(args.hosts, args.state, mode) for _ in range(args.repeat)]
        rows.append((f"up {args.hosts} hosts ({args.state}, {mode})", statistics.median(runs)))
    copy = statistics.median(time_copy(base) for _ in range(args.repeat))
    one = statistics.median(time_one_host() for _ in range(args.repeat))
    size = sum(f.stat().st_size for f in base.rglob("*") if f.is_file() and not f.is_symlink())
    print(f"base root: {size / 2**20:.0f} MiB, {os.cpu_count()} CPUs, median of {args.repeat}")
    print(f"{'reference: cp -a of the base root':45s} {copy:7.2f} s")
    print(f"{'reference: up of 1 bare host (overlay)':45s} {one:7.2f} s")
    for label, secs in rows:
        print(f"{label:45s} {secs:7.2f} s   = {secs / copy:5.2f} x cp -a, "
              f"{secs / one:5.2f} x one host")
    return 0


if __name__ == "__main__":
    sys.exit(main())
