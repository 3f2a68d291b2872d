"""Fresh-install and no-change re-run times of `install`, on 1 and 4 simulated hosts.

The whole 910b profile, frameworks included: the python component installs stand-in torch,
torch_npu and MindSpore wheels with their dependency closure (tests/wheels.py) offline from
the repository, so the re-run's check of the venv (its distributions against the closure) is
part of it. Each is printed beside a bare `ansible all -m setup` against the same hosts,
measured in the same run; the goals: a no-change re-run costs at most 3x that reference on
one host, 4x on four.
The playbook run is what is timed: the post-install doctor is switched off here (its own
cost is measured by benchmarks/doctor.py).
Needs root (the simulated hosts of tests/sim). Exit status 1 when a goal is missed.
"""

from __future__ import annotations

import argparse
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from ascend_env.install.provision import InstallOptions, install
from ascend_env.repository.fetch import Source, fetch
from ascend_env.spec.envspec import EnvSpec, build_spec
from ascend_env.spec.plan import Plan, resolve
from tests.sim import fleet, packages
from tests.sim.reboot import FAKE_REBOOT_VARS, prepare_reboots
from tests.wheels import catalogue_with_frameworks, fill_wheels

# No-change re-run / `ansible all -m setup`, at most: on one host, and on the four-host fleet.
GOALS = {1: 3.0, 4: 4.0}
ARCH = platform.machine()


def _spec() -> EnvSpec:
    return build_spec({"extends": "910b", "name": "bench", "hardware": {"arch": ARCH},
                       "os": {"family": "debian", "version": "12"},
                       "python": {"version": "3.11"}}, "benchmark")


def _timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def _repo(work: Path) -> tuple[Path, Plan]:
    vendor = work / "vendor"
    packages.build_repo(vendor, chip="910b", cann="8.5.0", hdk="25.5.0", arch=ARCH)
    plan = resolve(_spec(), catalogue_with_frameworks(vendor, _spec()))
    result = fetch(plan, work / "repo", Source(from_dir=vendor))
    if not result.complete:
        sys.exit(f"could not build the benchmark repository: {result}")
    fill_wheels(work / "repo")
    return work / "repo", plan


def measure(hosts: int, repo: Path, plan: Plan, work: Path, runs: int) -> dict[str, float]:
    """Times for one fleet size: setup reference, fresh install, median no-change re-run."""
    name = f"bench-install-{hosts}"
    fleet.down(name)
    sim = fleet.up(name=name, hosts=hosts, state="bare")
    try:
        for host in sim.hosts:
            prepare_reboots(Path(host.root))
        options = InstallOptions(repo=repo, inventory=sim.inventory, allow_reboot=True,
                                 components=["user", "driver", "firmware", "cann", "python",
                                             "env"],
                                 log_dir=work / "logs", extra_vars=FAKE_REBOOT_VARS)
        ansible = str(Path(sys.executable).with_name("ansible"))
        setup = statistics.median(_timed(lambda: subprocess.run(
            [ansible, "all", "-i", str(sim.inventory), "-m", "setup"], check=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL)) for _ in range(runs))
        spec = _spec()
        fresh = _timed(lambda: install(spec, plan, options))
        rerun = statistics.median(_timed(lambda: install(spec, plan, options))
                                  for _ in range(runs))
        return {"setup": setup, "fresh": fresh, "rerun": rerun}
    finally:
        fleet.down(name)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ascend-env-bench-"))
    try:
        repo, plan = _repo(work)
        rows = {hosts: measure(hosts, repo, plan, work, args.runs) for hosts in (1, 4)}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{'hosts':>5} {'ansible -m setup':>17} {'fresh install':>14} {'no-change rerun':>16}"
          f" {'rerun/setup':>12}")
    for hosts, row in rows.items():
        print(f"{hosts:>5} {row['setup']:>16.2f}s {row['fresh']:>13.2f}s {row['rerun']:>15.2f}s"
              f" {row['rerun'] / row['setup']:>12.2f}")
    missed = 0
    for hosts, goal in GOALS.items():
        ratio = rows[hosts]["rerun"] / rows[hosts]["setup"]
        verdict = "ok" if ratio <= goal else "TOO SLOW"
        missed += ratio > goal
        print(f"{hosts} host(s): no-change re-run = {ratio:.2f} x ansible -m setup "
              f"(goal <= {goal}): {verdict}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
