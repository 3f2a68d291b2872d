"""Time the NPU network checks of `ascend-env doctor` on 8 simulated hosts beside 1 host.

Usage (root, for the simulated hosts):
    .venv/bin/python benchmarks/network.py [--hosts 8] [--repeat 3]

Rows, each the whole command as an operator runs it (a fresh process), the median of --repeat
rounds, interleaved within each round:
- level 1: `doctor --only network` (the probe's per-device hccn_tool queries, the per-host and
  the fleet-wide network checks);
- reference: the same hccn_tool queries run straight over ssh, all hosts at once, without
  the doctor: the ratio the simulated hosts' shared CPUs impose on any tool;
- level 2: `doctor --level 2 --only network.reachability`: the ping matrix, every device to the
  same index on every other host (8 hosts x 8 devices: 448 pings; 1 host: none, so the
  1-host row of level 2 is a 2-host fleet's matrix, the smallest that pings).

The simulated hosts run on this machine: their probes and fake hccn_tool processes (a Python
start for every query) share its CPUs with the doctor, so the N-host / 1-host ratios are set
mostly by the hosts, not by the controller; level 1 on N hosts is also set against the same
queries alone on N hosts (the doctor's whole probe and checks beside those queries). The
fake's pings each wait a constant time (the fabric's ping_delay_s), as a wire would.
benchmarks/doctor.py measures the controller's CPU per host and the wall time against the
hosts' own CPU.
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

BIN = Path(sys.executable).parent


def timed(command: list[str]) -> float:
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    elapsed = time.monotonic() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}: {done.stderr[-500:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("the simulated hosts need root")
    names = {"one": (f"bn1-{os.getpid()}", 1), "two": (f"bn2-{os.getpid()}", 2),
             "many": (f"bn{args.hosts}-{os.getpid()}", args.hosts)}
    fleets = {}
    try:
        for key, (name, hosts) in names.items():
            fleets[key] = fleet.up(name=name, hosts=hosts, state="provisioned")
        def doctor(key: str, *extra: str) -> list[str]:
            return [str(BIN / "ascend-env"), "doctor", "--json", "--inventory",
                    str(fleets[key].inventory), *extra]

        level2 = ("--level", "2", "--only", "network.reachability")
        rows = {
            "level 1, 1 host": doctor("one", "--only", "network"),
            f"level 1, {args.hosts} hosts": doctor("many", "--only", "network"),
            "level 2 pings, 2 hosts": doctor("two", *level2),
            f"level 2 pings, {args.hosts} hosts": doctor("many", *level2),
        }
        # The reference: the same hccn_tool queries without the doctor, every host's at once
        # over ssh. The simulated hosts' fake hccn_tool is a Python process each time, and
        # all hosts share this machine's CPUs: this ratio is what the machine imposes on
        # any tool that asks the same questions.
        queries = " ".join(f"-{q}" for q in ("ip", "link", "link_stat", "net_health",
                                              "netdetect", "gateway", "lldp", "tls"))
        loop = (f"for d in 0 1 2 3 4 5 6 7; do for q in {queries}; do "
                "/usr/local/Ascend/driver/tools/hccn_tool -i $d $q -g >/dev/null & done; "
                "done; wait")

        def raw(key: str) -> list[str]:
            hosts = [h.name for h in fleets[key].hosts]
            script = " & ".join(f"ssh -F {fleets[key].ssh_config} {h} '{loop}'" for h in hosts)
            return ["sh", "-c", script + " & wait"]

        rows["reference: the queries alone, 1 host"] = raw("one")
        rows[f"reference: the queries alone, {args.hosts} hosts"] = raw("many")
        for command in rows.values():  # warm: ssh masters, bytecode
            timed(command)
        times: dict[str, list[float]] = {name: [] for name in rows}
        for _ in range(args.repeat):
            for name, command in rows.items():
                times[name].append(timed(command))
        median = {name: statistics.median(values) for name, values in times.items()}
        for name, value in median.items():
            print(f"{name:<28} {value:8.2f} s")
        level1 = median[f"level 1, {args.hosts} hosts"] / median["level 1, 1 host"]
        pings = median[f"level 2 pings, {args.hosts} hosts"] / median["level 2 pings, 2 hosts"]
        alone = median[f"reference: the queries alone, {args.hosts} hosts"]
        print(f"level 1: {args.hosts} hosts / 1 host = {level1:.2f}x")
        print(f"level 2: {args.hosts} hosts / 2 hosts = {pings:.2f}x")
        floor = alone / median["reference: the queries alone, 1 host"]
        print(f"reference: the same queries alone, {args.hosts} hosts / 1 host = {floor:.2f}x "
              "(this machine's shared CPUs)")
        doctor_over = median[f"level 1, {args.hosts} hosts"] / alone
        print(f"level 1, {args.hosts} hosts / the same queries alone: {doctor_over:.2f}x "
              "(the whole probe and the checks beside the network queries)")
    finally:
        for name, _ in names.values():
            fleet.down(name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
