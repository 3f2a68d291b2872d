"""CPUs: sysfs topology and NUMA node lists, `lscpu -p`, the online list, the cgroup quota."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ascend_env.facts.model import CpuFacts
from ascend_env.facts.reader import CaptureReader
from ascend_env.facts.values import to_float, to_int
from ascend_env.remote import probe


def parse_cpu_list(text: str) -> list[int]:
    """Kernel CPU list syntax: `0-3,8,10-11` -> [0, 1, 2, 3, 8, 10, 11]."""
    cpus: list[int] = []
    for part in text.strip().split(","):
        low, sep, high = part.strip().partition("-")
        if low.isdigit() and (not sep or high.isdigit()):
            stop = int(high) if sep else int(low)
            cpus.extend(range(int(low), min(stop, int(low) + 65536) + 1))
    return sorted(set(cpus))


@dataclass(kw_only=True, slots=True)
class CpuEntry:
    cpu: int
    core: int | None = None
    socket: int | None = None
    node: int | None = None


def parse_lscpu(text: str) -> list[CpuEntry]:
    """`lscpu -p=CPU,CORE,SOCKET,NODE`: one comma line per logical CPU (empty NODE allowed)."""
    out: list[CpuEntry] = []
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        parts = line.strip().split(",")
        if not parts[0].isdigit():
            continue
        fields = [to_int(p) if p else None for p in parts[1:4]] + [None, None, None]
        out.append(CpuEntry(cpu=int(parts[0]), core=fields[0], socket=fields[1], node=fields[2]))
    return out


def read_cpu(r: CaptureReader) -> CpuFacts:
    """Topology from sysfs (lscpu where sysfs is missing), the probe's affinity and quota."""
    # Copied: facts share no list with the capture (pydantic copied them on validation).
    affinity = r.capture.process.affinity
    facts = CpuFacts(affinity=list(affinity) if affinity is not None else None)
    cores: dict[int, tuple[int | None, int | None]] = {}
    nodes: dict[int, list[int]] = {}
    base = "/sys/devices/system/cpu/cpu"
    for path, text in r.capture.files.items():
        match = re.fullmatch(rf"{base}(\d+)/topology/(core_id|physical_package_id)", path)
        if match:
            cpu = int(match.group(1))
            core, pkg = cores.get(cpu, (None, None))
            value = to_int(text)
            cores[cpu] = (value, pkg) if match.group(2) == "core_id" else (core, value)
        node = re.fullmatch(r"/sys/devices/system/node/node(\d+)/cpulist", path)
        if node:
            nodes[int(node.group(1))] = parse_cpu_list(text)
    entries = [CpuEntry(cpu=cpu, core=core, socket=pkg) for cpu, (core, pkg) in cores.items()]
    facts.source = "sysfs" if entries else None
    lscpu = r.output(probe.LSCPU)
    if not entries and lscpu:
        entries, facts.source = parse_lscpu(lscpu), "lscpu"
        if not nodes:  # sysfs node lists, where captured, are the better source
            for e in entries:
                if e.node is not None:
                    nodes.setdefault(e.node, []).append(e.cpu)
    online = r.file("/sys/devices/system/cpu/online")
    facts.online = parse_cpu_list(online) if online else sorted(e.cpu for e in entries)
    if entries:
        facts.logical_cpus = len(entries)
        physical = {(e.socket, e.core) for e in entries}
        facts.physical_cores = len(physical)
        facts.sockets = len({e.socket for e in entries})
        facts.threads_per_core = max(1, round(len(entries) / max(1, len(physical))))
    elif r.capture.process.cpu_count:
        facts.logical_cpus = r.capture.process.cpu_count
    facts.numa_nodes = {n: sorted(set(c)) for n, c in sorted(nodes.items())}
    quota = (r.file("/sys/fs/cgroup/cpu.max") or "").split()
    if len(quota) == 2 and quota[0] != "max" and to_float(quota[1]):
        facts.cgroup_cpus = round((to_float(quota[0]) or 0) / (to_float(quota[1]) or 1), 2)
    return facts


# Parsers by the folder name of their samples under tests/data/.
PARSERS: dict[str, Callable[[Any], Any]] = {
    "lscpu": parse_lscpu,
    "cpu_list": parse_cpu_list,
}
