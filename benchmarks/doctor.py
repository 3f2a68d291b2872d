"""Time a level-1 `ascend-env doctor` on one host and on 8, beside `torch.utils.collect_env`.

Usage (root, for the simulated hosts):
    .venv/bin/python benchmarks/doctor.py [--hosts 8] [--repeat 3]

Every figure is the whole command as an operator runs it (a fresh process: interpreter start,
imports, inventory, ssh, probe, facts, checks, rendering), the median of --repeat runs.
The reference is `python -m torch.utils.collect_env` (torch 2.13.0 CPU) measured in the same
run on the same machine. Goals (issue 5): one host under a quarter of collect_env (fast
enough for a container health check), 8 hosts under twice one host.

The doctor keeps one ssh master connection per host for 60 s in Ansible's control_path_dir,
as Ansible does, so the ssh rows are "warm" (a doctor run just before opened the masters).
The "cold" row closes every master before each run: the first doctor of a session, which
pays the ssh handshake. The simulated hosts run on this machine, so their probes (and the
fake npu-smi they start) share its CPUs with the doctor: on a real fleet the 8-host figure
only adds the controller's per-host work. The last two rows time the capture script alone
over ssh on one host and on all hosts at once: their ratio is what this machine's shared
CPUs impose on any tool that runs the same probe, the floor under the doctor's fleet ratio.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.sim import fleet

# Short: the doctor's ssh master sockets live in the fleet's folder, and a socket path over
# 90 characters makes ssh go without a master (ascend_env/collect.py, MAX_SOCKET_PATH).
FLEET = f"bd-{os.getpid()}"
BIN = Path(sys.executable).parent


def timed(command: list[str], repeat: int, ok: tuple[int, ...] = (0, 1),
          before: Callable[[], None] | None = None) -> float:
    """Median wall time of `command` (`before` runs untimed ahead of each run); it must end
    with an exit code in `ok`."""
    times = []
    for _ in range(repeat):
        if before is not None:
            before()
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        times.append(time.perf_counter() - start)
        if done.returncode not in ok:
            raise SystemExit(f"{' '.join(command)} exited {done.returncode}:\n"
                             f"{done.stdout[-1500:]}{done.stderr[-1500:]}")
    return statistics.median(times)


def close_masters(inventory: Path) -> None:
    """End the ssh master connections the doctor keeps for the inventory's hosts."""
    found = re.search(r"ansible_control_path_dir=(\S+)", inventory.read_text())
    folder = Path(found.group(1)) if found else Path.home() / ".ansible" / "cp"
    for socket in folder.glob("ae-*"):
        subprocess.run(["ssh", "-o", f"ControlPath={socket}", "-O", "exit", "sim"],
                       capture_output=True, check=False)


def probe_only(ssh_config: Path, hosts: list[str], repeat: int) -> float:
    """Median wall time of the bare capture script run over ssh on `hosts` at once: the
    remote work alone, without the doctor. Its 8-host / 1-host ratio is the floor this
    machine puts under the doctor's (all simulated hosts share its CPUs)."""
    probe = (Path(__file__).resolve().parents[1] / "ascend_env" / "probe.py").read_bytes()
    ssh = ["ssh", "-F", str(ssh_config), "-o", "ControlMaster=auto", "-o",
           "ControlPath=/tmp/bd-%C", "-o", "ControlPersist=60"]

    def once() -> float:
        start = time.perf_counter()
        running = [subprocess.Popen([*ssh, host, "python3", "-"], stdin=subprocess.PIPE,
                                    stdout=subprocess.DEVNULL) for host in hosts]
        for process in running:
            assert process.stdin is not None
            process.stdin.write(probe)
            process.stdin.close()
        if any(process.wait() != 0 for process in running):
            raise SystemExit("the probe failed over ssh")
        return time.perf_counter() - start

    once()  # open the masters
    return statistics.median(once() for _ in range(repeat))


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
        one_host = [*doctor, "--inventory", inventory, "--limit", "sim1"]
        rows = [
            ("doctor, this machine (local, in-process probe)", timed(doctor, args.repeat)),
            ("doctor, 1 host over ssh (inventory --limit sim1)", timed(one_host, args.repeat)),
            (f"doctor, {args.hosts} hosts over ssh (inventory)",
             timed([*doctor, "--inventory", inventory], args.repeat)),
            ("python -m torch.utils.collect_env",
             timed([sys.executable, "-m", "torch.utils.collect_env"], args.repeat, (0,))),
            ("doctor, 1 host over ssh, cold (no ssh master)",
             timed(one_host, args.repeat, before=lambda: close_masters(sim.inventory))),
            ("probe script alone over ssh, 1 host",
             probe_only(sim.ssh_config, [h.name for h in sim.hosts[:1]], args.repeat)),
            (f"probe script alone over ssh, {args.hosts} hosts at once",
             probe_only(sim.ssh_config, [h.name for h in sim.hosts], args.repeat)),
        ]
    finally:
        fleet.down(FLEET)
    width = max(len(name) for name, _ in rows)
    for name, seconds in rows:
        print(f"{name:<{width}}  {seconds:6.2f} s")
    local, one, many, reference, cold, probe_one, probe_many = (s for _, s in rows)
    print(f"one host / collect_env:   {one / reference:.2f} (goal < 0.25)")
    print(f"local / collect_env:      {local / reference:.2f} (goal < 0.25)")
    print(f"{args.hosts} hosts / one host:     {many / one:.2f} (goal < 2)")
    print(f"one host cold / collect_env: {cold / reference:.2f}")
    print(f"probe alone, {args.hosts} hosts / one host: {probe_many / probe_one:.2f} "
          "(the shared-CPU floor under the doctor's fleet ratio)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
