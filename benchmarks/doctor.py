"""Time a level-1 `ascend-env doctor` on one host and on 8, beside `torch.utils.collect_env`.

Usage (root, for the simulated hosts):
    .venv/bin/python benchmarks/doctor.py [--hosts 8] [--repeat 5]

Every figure is the whole command as an operator runs it (a fresh process: interpreter start,
imports, inventory, ssh, probe, facts, checks, rendering), the median of --repeat rounds; the
rows run interleaved within each round, so a noisy moment hits them alike. The reference is
`python -m torch.utils.collect_env` (torch 2.13.0 CPU) measured in the same rounds on the same
machine. Goals (issue 14): one host at most half of collect_env, 8 hosts at most twice one
host in wall time and at most 1.5x one host in this side's CPU. Our bytecode is compiled
first, as pip does when it installs the package (this machine sets PYTHONDONTWRITEBYTECODE=1;
torch's is compiled).

"CPU here" is the CPU time of the command's process tree on this side (the doctor and its ssh
clients), not the simulated hosts' sshd and probes: the 8-host / 1-host ratio of that column
is the doctor's own fleet cost, whatever the hosts' CPUs.

The doctor keeps one ssh master connection per host for 60 s in Ansible's control_path_dir,
as Ansible does, so the ssh rows are "warm"; every row reads the inventory through Ansible.
The "cold" row closes every master before each run (the first doctor of a session: ssh
handshake), then opens them again for the other rows. The simulated hosts run on this
machine, so their probes (and the commands a probe starts) share its CPUs with the doctor: on
a real fleet the 8-host figure only adds the controller's per-host work. The last two rows
time the capture script alone over ssh on one host and on all hosts at once: their ratio is
what this machine's shared CPUs impose on any tool that runs the same probe.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ascend_env.targets.collect import ProbeOptions, remote_command
from tests.sim import fleet, sshd
from tests.sim.layout import FleetPaths

# Short: the doctor's ssh master sockets live in the fleet's folder, and a socket path over
# 90 characters makes ssh go without a master (ascend_env/targets/collect.py, MAX_SOCKET_PATH).
FLEET = f"bd-{os.getpid()}"
BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Row:
    """One measured command: wall seconds and the CPU seconds of its process tree on this
    side (the doctor and its ssh clients; not the simulated hosts' sshd and probes)."""

    name: str
    command: list[str]
    before: Callable[[], None] | None = None
    after: Callable[[], None] | None = None
    ok: tuple[int, ...] = (0, 1)
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)

    def run(self) -> None:
        if self.before is not None:
            self.before()
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(self.command, capture_output=True, text=True, check=False)
        self.walls.append(time.perf_counter() - start)
        ended = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.cpus.append(ended.ru_utime + ended.ru_stime - used.ru_utime - used.ru_stime)
        if self.after is not None:
            self.after()
        if done.returncode not in self.ok:
            raise SystemExit(f"{' '.join(self.command)} exited {done.returncode}:\n"
                             f"{done.stdout[-1500:]}{done.stderr[-1500:]}")

    @property
    def wall(self) -> float:
        return statistics.median(self.walls)

    @property
    def cpu(self) -> float:
        return statistics.median(self.cpus)


def cold() -> None:
    """The first doctor of a session: no ssh master connection."""
    sshd.close_masters(FleetPaths.for_fleet(FLEET).control_dir)


def probe_only(ssh_config: Path, hosts: list[str], repeat: int) -> float:
    """Median wall time of the bare capture script run over ssh on `hosts` at once: the
    remote work alone, without the doctor. Its 8-host / 1-host ratio is the floor this
    machine puts under the doctor's (all simulated hosts share its CPUs)."""
    command = remote_command(ProbeOptions())  # what the doctor runs on each host
    ssh = ["ssh", "-F", str(ssh_config), "-o", "ControlMaster=auto", "-o",
           "ControlPath=/tmp/bd-%C", "-o", "ControlPersist=60"]

    def once() -> float:
        start = time.perf_counter()
        running = [subprocess.Popen([*ssh, host, command], stdout=subprocess.DEVNULL)
                   for host in hosts]
        if any(process.wait() != 0 for process in running):
            raise SystemExit("the probe failed over ssh")
        return time.perf_counter() - start

    once()  # open the masters
    return statistics.median(once() for _ in range(repeat))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--hosts", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("needs root (simulated hosts)", file=sys.stderr)
        return 2
    # An installed package has its bytecode compiled (pip does it); this machine sets
    # PYTHONDONTWRITEBYTECODE=1, which would recompile ours on every run, not torch's.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "ascend_env"),
                    str(ROOT / "checks")], check=True)
    doctor = [str(BIN / "ascend-env"), "doctor"]
    sim = fleet.up(name=FLEET, hosts=args.hosts, state="provisioned", devices=8)
    try:
        inventory = str(sim.inventory)
        one_host = [*doctor, "--inventory", inventory, "--limit", "sim1"]
        rows = [
            Row("doctor, this machine (local probe)", doctor),
            Row("doctor, 1 host over ssh (inventory --limit sim1)", one_host),
            Row(f"doctor, {args.hosts} hosts over ssh (inventory)",
                [*doctor, "--inventory", inventory]),
            Row("python -m torch.utils.collect_env",
                [sys.executable, "-m", "torch.utils.collect_env"], ok=(0,)),
        ]
        warm = rows[2].command

        def rewarm() -> None:  # the other rows are timed warm: masters open
            subprocess.run(warm, capture_output=True, check=False)

        rows.append(Row("doctor, 1 host, cold (no ssh master)", one_host,
                        before=cold, after=rewarm))
        rewarm()
        for _ in range(args.repeat):  # interleaved: a noisy moment hits every row alike
            for row in rows:
                row.run()
        probe_one = probe_only(sim.ssh_config, [h.name for h in sim.hosts[:1]], args.repeat)
        probe_many = probe_only(sim.ssh_config, [h.name for h in sim.hosts], args.repeat)
    finally:
        fleet.down(FLEET)
    width = max(len(row.name) for row in rows) + 2
    print(f"{'':<{width}}{'wall':>8}{'CPU here':>10}")
    for row in rows:
        print(f"{row.name:<{width}}{row.wall:7.2f}s{row.cpu:9.2f}s")
    print(f"{'probe script alone over ssh, 1 host':<{width}}{probe_one:7.2f}s")
    print(f"{f'probe script alone over ssh, {args.hosts} hosts at once':<{width}}"
          f"{probe_many:7.2f}s")
    local, one, many, reference, first = rows
    print(f"one host / collect_env:        {one.wall / reference.wall:.2f} (goal <= 0.5)")
    print(f"local / collect_env:           {local.wall / reference.wall:.2f}")
    print(f"{args.hosts} hosts / one host:           {many.wall / one.wall:.2f} (goal <= 2)")
    print(f"{args.hosts} hosts / one host, CPU here: {many.cpu / one.cpu:.2f} (goal <= 1.5: the "
          "doctor's own fleet cost, whatever the hosts' CPUs)")
    print(f"probe alone, {args.hosts} hosts / one host: {probe_many / probe_one:.2f} (what this "
          "machine's shared CPUs impose on any tool running the same probe)")
    print(f"one host cold / collect_env:   {first.wall / reference.wall:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
