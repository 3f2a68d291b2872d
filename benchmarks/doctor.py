"""What a level-1 `ascend-env doctor` costs its controller per host, on 1 and on N hosts.

Usage (root, for the simulated hosts):
    .venv/bin/python benchmarks/doctor.py [--hosts 32] [--repeat 3]

Every row is the whole command as an operator runs it (a fresh process: interpreter start,
imports, inventory, ssh, probe, facts, checks, rendering), the median of --repeat rounds, the
rows interleaved within each round so that a noisy moment hits them alike. Our bytecode is
compiled first, as pip does when it installs the package (this machine sets
PYTHONDONTWRITEBYTECODE=1).

Four measures per run, each from the kernel's own accounting:
- controller CPU: the doctor's process tree on this side, its ssh clients and the ssh master
  connections it leaves behind (Ansible's ControlPersist; this process adopts them as a
  child subreaper, so their CPU is read from /proc like the rest);
- hosts' CPU: every simulated host's sshd and all it started (sessions, the probe, the fake
  npu-smi and hccn_tool), read from /proc: each live process's own and reaped children's
  time, summed over the tree under the host's sshd, before and after the run;
- peak memory: the doctor's largest resident set (wait4's ru_maxrss);
- CPU others: what the rest of this machine used meanwhile (/proc/stat's busy time less the
  two above), the noise under the wall figures.

The simulated hosts run on this machine, so their probes share its cores with the doctor.
The wall figure is therefore set against a floor that no controller could beat: the larger of
the slowest single host (a one-host doctor on the first and on the last host) and the CPU the
N hosts used during the N-host run divided by this machine's cores. On a real fleet each host
brings its own CPUs and only the controller's cost remains: the CPU ratio.
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.sim import fleet, sshd
from tests.sim.layout import FleetPaths

# Short: the doctor's ssh master sockets live in the fleet's folder, and a socket path over
# 90 characters makes ssh go without a master (ascend_env/targets/collect.py, MAX_SOCKET_PATH).
FLEET = f"bd-{os.getpid()}"
ROOT = Path(__file__).resolve().parents[1]
TICK = os.sysconf("SC_CLK_TCK")
PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h


def tree_cpu(roots: set[int], reaped_only: bool = False) -> float:
    """CPU seconds of the processes under `roots`: each one's own time and that of the
    children it reaped (/proc/PID/stat utime, stime, cutime, cstime); `reaped_only`: of the
    roots themselves, only their reaped children's."""
    children: dict[int, list[int]] = {}
    times: dict[int, tuple[int, int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_bytes()
        except OSError:  # gone meanwhile: its time is in its parent's reaped children
            continue
        fields = stat.rsplit(b")", 1)[1].split()
        pid = int(entry.name)
        children.setdefault(int(fields[1]), []).append(pid)
        times[pid] = (int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14]))
    total, todo, seen = 0, list(roots), set()
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        own, reaped = times.get(pid, (0, 0))
        total += reaped + (0 if reaped_only and pid in roots else own)
        todo += children.get(pid, [])
    return total / TICK


def machine_cpu() -> float:
    """CPU seconds this machine's cores have been busy (/proc/stat: all but idle and iowait)."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(v) for v in fields)
    return (user + nice + system + irq + softirq + steal) / TICK


def reap() -> None:
    """Reap the adopted processes that ended (ssh masters): their time joins this process's
    reaped children's."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


@dataclass
class Row:
    """One measured command: medians of wall seconds, controller and hosts' CPU seconds,
    and the doctor's peak resident memory."""

    name: str
    command: list[str]
    hosts: Callable[[], set[int]] = set
    reports: int = 0  # hosts the doctor's --json report must hold, each reached and checked
    before: Callable[[], None] | None = None
    after: Callable[[], None] | None = None
    ok: tuple[int, ...] = (0, 1)
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    host_cpus: list[float] = field(default_factory=list)
    other_cpus: list[float] = field(default_factory=list)
    peaks: list[int] = field(default_factory=list)

    def run(self) -> None:
        if self.before is not None:
            self.before()
        me = {os.getpid()}
        sshds = self.hosts()
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        with tempfile.TemporaryFile() as out:
            reap()
            # This process's own time stays out: it only waits and reads /proc.
            mine, hosts = tree_cpu(me, reaped_only=True), tree_cpu(sshds)
            busy = machine_cpu()
            start = time.perf_counter()
            process = subprocess.Popen(self.command, stdout=out, stderr=out, env=env)
            _, status, used = os.wait4(process.pid, 0)
            wall = time.perf_counter() - start
            busy = machine_cpu() - busy
            process.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
            hosts = tree_cpu(sshds) - hosts
            reap()
            mine = tree_cpu(me, reaped_only=True) - mine
            out.seek(0)
            text = out.read().decode(errors="replace")
        if process.returncode not in self.ok or not checked(text, self.reports):
            raise SystemExit(f"{' '.join(self.command)} exited {process.returncode}:\n"
                             f"{text[-3000:]}")
        self.walls.append(wall)
        self.cpus.append(mine)
        self.host_cpus.append(hosts)
        # Whatever else ran meanwhile (other users of this machine): the wall figure's noise.
        self.other_cpus.append(max(0.0, busy - mine - hosts))
        self.peaks.append(used.ru_maxrss)
        if self.after is not None:
            self.after()

    @property
    def wall(self) -> float:
        return statistics.median(self.walls)

    @property
    def cpu(self) -> float:
        return statistics.median(self.cpus)

    @property
    def host_cpu(self) -> float:
        return statistics.median(self.host_cpus)

    @property
    def other_cpu(self) -> float:
        return statistics.median(self.other_cpus)

    @property
    def peak_mib(self) -> float:
        return max(self.peaks) / 1024


def checked(text: str, hosts: int) -> bool:
    """Whether a doctor's --json report holds `hosts` hosts, each reached and checked (a
    fleet report), or one checked host (a report); any text when `hosts` is 0."""
    if hosts == 0:
        return True
    try:
        document = json.loads(text)
    except ValueError:
        return False
    reports = document.get("hosts", [document]) if isinstance(document, dict) else []
    return len(reports) == hosts and all(
        isinstance(r, dict) and r.get("reachable") and r.get("checks") for r in reports)


def cold() -> None:
    """The first doctor of a session: no ssh master connection."""
    sshd.close_masters(FleetPaths.for_fleet(FLEET).control_dir)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("needs root (simulated hosts)", file=sys.stderr)
        return 2
    if args.hosts < 2:
        print("--hosts: at least 2", file=sys.stderr)
        return 2
    # An installed package has its bytecode compiled (pip does it); this machine sets
    # PYTHONDONTWRITEBYTECODE=1, which would recompile ours on every run, not torch's.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "ascend_env"),
                    str(ROOT / "checks")], check=True)
    doctor = [sys.executable, "-m", "ascend_env", "doctor", "--json"]
    sim = fleet.up(name=FLEET, hosts=args.hosts, state="provisioned", devices=8)
    # After the hosts' sshd daemonised (they stay init's): the ssh masters the doctor leaves
    # behind become this process's, so their CPU is counted and they are reaped here.
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise SystemExit(f"prctl(PR_SET_CHILD_SUBREAPER): {os.strerror(ctypes.get_errno())}")
    try:
        inventory = str(sim.inventory)
        first, last = sim.hosts[0], sim.hosts[-1]

        def sshd_of(*names: str) -> Callable[[], set[int]]:
            return lambda: {h.pid for h in sim.hosts if h.name in names}

        every = sshd_of(*(h.name for h in sim.hosts))
        one_host = [*doctor, "--inventory", inventory, "--limit", first.name]
        rows = [
            Row("doctor, this machine (local probe)", doctor, reports=1),
            Row(f"doctor, 1 host over ssh ({first.name})", one_host, sshd_of(first.name), 1),
            Row(f"doctor, 1 host over ssh ({last.name})",
                [*doctor, "--inventory", inventory, "--limit", last.name], sshd_of(last.name),
                1),
            Row(f"doctor, {args.hosts} hosts over ssh (inventory)",
                [*doctor, "--inventory", inventory], every, args.hosts),
            Row("python -m torch.utils.collect_env",
                [sys.executable, "-m", "torch.utils.collect_env"], ok=(0,)),
        ]
        many = rows[3]

        def rewarm() -> None:  # the other rows are timed warm: masters open
            subprocess.run(many.command, capture_output=True, check=False,
                           env={**os.environ, "PYTHONPATH": str(ROOT)})

        rows.append(Row("doctor, 1 host, cold (no ssh master)", one_host, sshd_of(first.name),
                        1, before=cold, after=rewarm))
        rewarm()
        for _ in range(args.repeat):  # interleaved: a noisy moment hits every row alike
            for row in rows:
                row.run()
    finally:
        fleet.down(FLEET)
        reap()
    local, one, one_last, many, reference, first_run = rows
    cores = len(os.sched_getaffinity(0))
    width = max(len(row.name) for row in rows) + 2
    print(f"{'':<{width}}{'wall':>8}{'CPU here':>10}{'CPU hosts':>11}{'CPU others':>12}"
          f"{'peak':>10}")
    for row in rows:
        hosts = f"{row.host_cpu:10.2f}s" if row is not local and row is not reference else " " * 11
        print(f"{row.name:<{width}}{row.wall:7.2f}s{row.cpu:9.2f}s{hosts}{row.other_cpu:11.2f}s"
              f"{row.peak_mib:6.0f} MiB")
    slowest = max(one.wall, one_last.wall)
    floor = max(slowest, many.host_cpu / cores)
    print(f"floor: max(slowest single host {slowest:.2f}s, hosts' CPU {many.host_cpu:.2f}s / "
          f"{cores} cores = {many.host_cpu / cores:.2f}s) = {floor:.2f}s")
    print(f"controller CPU, {args.hosts} hosts / one host: {many.cpu / one.cpu:.2f}")
    print(f"wall, {args.hosts} hosts / floor: {many.wall / floor:.2f}")
    print(f"controller peak memory, 1 host: {one.peak_mib:.0f} MiB; {args.hosts} hosts: "
          f"{many.peak_mib:.0f} MiB")
    print("goals: controller CPU ratio <= 4 (each extra host under a tenth of a one-host run); "
          "wall / floor <= 1.3")
    print(f"one host / collect_env:        {one.wall / reference.wall:.2f} (goal <= 0.5)")
    print(f"local / collect_env:           {local.wall / reference.wall:.2f}")
    print(f"one host cold / collect_env:   {first_run.wall / reference.wall:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
