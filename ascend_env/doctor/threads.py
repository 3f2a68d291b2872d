"""Host-side thread settings for Ascend jobs, derived from the CPU topology and the spec.

The knobs (checked by checks/test_threads.py, written by the aicpu-threads fix):
- `OMP_NUM_THREADS`: OpenMP threads of each training process (one process per NPU), at most
  the CPUs that process has: its share of the physical cores times the spec's
  `threads.aicpu_per_core` (default 2), capped at its share of the logical CPUs, or
  `threads.omp_num_threads` when the spec sets it.
- `CPU_AFFINITY_CONF`: torch_npu's core binding, `<mode>[,npu<id>:<first>-<last>...]`;
  mode 1 = coarse (each NPU's threads on its share of the cores), 2 = fine-grained; unset or
  0 = no binding. Coarse binding from Ascend Extension for PyTorch 6.0.RC2, fine from 6.0.0
  (https://www.hiascend.com/doc_center/source/zh/Pytorch/700/ptmoddevg/Frameworkfeatures/featuresguide_00010.html;
  https://www.hiascend.com/document/detail/en/mindstudio/830/practicalcases/GeneralPerformanceIssue/toolsample6_058.html).
  Where the PCI NUMA node of every NPU is known, the ranges pin each NPU to CPUs of its own
  NUMA node, which is what the vendor recommends when the default split crosses nodes.
  Install writes the mode alone (`1`): before the driver is loaded, npu-smi does not say
  which NPU sits on which PCI bus, and a value that changed once the driver is up would make
  every later install report a change; the aicpu-threads fix adds the ranges.
- MindSpore binds cores through its API (`mindspore.runtime.set_cpu_affinity`), not through
  the environment (https://www.mindspore.cn/docs/en/master/api_python/runtime/mindspore.runtime.set_cpu_affinity.html),
  so there is nothing to write for it.
- The device's own AI CPU count (`npu-smi set -t cpu-num-cfg -i ID -c CHIP -v ai:ctrl:data`,
  then a system reset) is documented only for Atlas 200I A2 / 500 A2 (310B)
  (https://www.hiascend.com/document/detail/zh/Atlas%20200I%20A2/2520/re/npu/npusmi_093.html);
  the fix applies it only where `fix_aicpu_threads_device_config` is turned on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ascend_env.facts.assemble import facts_from_capture
from ascend_env.facts.capture import parse_capture
from ascend_env.facts.model import Facts
from ascend_env.spec.envspec import Threads

AFFINITY_MODES = ("1", "2")


@dataclass(frozen=True)
class ThreadPlan:
    """What the managed thread settings of a host should be, and how that was worked out."""

    omp_num_threads: int
    cpu_affinity_conf: str
    basis: str


def _physical_cores(facts: Facts) -> tuple[int, int]:
    """(physical cores, logical CPUs) the host's jobs may use."""
    cpu = facts.cpu
    logical = (len(cpu.affinity) if cpu.affinity else None) or cpu.logical_cpus or \
        len(cpu.online) or 1
    if cpu.cgroup_cpus:
        logical = max(1, min(logical, int(cpu.cgroup_cpus)))
    physical = cpu.physical_cores or max(1, logical // max(1, cpu.threads_per_core or 1))
    return min(physical, logical), logical


def _numa_ranges(facts: Facts) -> str | None:
    """`npu<id>:<first>-<last>` per NPU on its PCI NUMA node, when every NPU's node is known."""
    nodes = facts.cpu.numa_nodes
    by_bus = {card.address.lower(): card.numa_node for card in facts.pci}
    placed: dict[int, list[int]] = {}
    for device in facts.devices:
        node = by_bus.get((device.bus_id or "").lower())
        if node is None or node not in nodes:
            return None
        placed.setdefault(node, []).append(device.npu_id)
    parts = []
    for node, npus in sorted(placed.items()):
        cpus = sorted(nodes[node])
        share = len(cpus) // len(npus)
        if share < 1:
            return None
        for index, npu in enumerate(sorted(set(npus))):
            chunk = cpus[index * share:(index + 1) * share]
            parts.append(f"npu{npu}:{chunk[0]}-{chunk[-1]}")
    return ",".join(parts) if parts else None


def plan_threads(facts: Facts, threads: Threads, devices: int | None = None, *,
                 numa: bool = True) -> ThreadPlan:
    """The thread settings for this host: one process per NPU, CPUs shared out evenly.

    One computation for the three that need it: the doctor's expectation (threads.omp), the
    install's env role and the aicpu-threads fix; `numa=False` leaves out the NUMA ranges."""
    physical, logical = _physical_cores(facts)
    count = max(1, devices or len({d.npu_id for d in facts.devices}) or 1)
    if threads.omp_num_threads is not None:
        omp = threads.omp_num_threads
        basis = "threads.omp_num_threads in the spec"
    else:
        per_device = max(1, physical // count)
        omp = max(1, min(per_device * threads.aicpu_per_core, logical // count or 1))
        basis = (f"{physical} physical core(s) / {count} NPU(s) x {threads.aicpu_per_core} "
                 f"(threads.aicpu_per_core), at most {logical} CPU(s) / {count}")
    ranges = _numa_ranges(facts) if numa else None
    affinity = f"1,{ranges}" if ranges else "1"
    return ThreadPlan(omp_num_threads=omp, cpu_affinity_conf=affinity, basis=basis)


def install_plan(probe_output: str, wanted: dict[str, Any]) -> dict[str, Any]:
    """The plan for the install's env role, from preflight's capture (the doctor's probe)
    and `ascend_threads` ({"spec": the spec's threads section, "devices": NPUs per host}):
    what `doctor --profile` then expects."""
    facts = facts_from_capture(parse_capture(probe_output, where="preflight's probe"))
    devices = wanted.get("devices")
    plan = plan_threads(facts, Threads.model_validate(wanted.get("spec") or {}),
                        int(devices) if devices else None, numa=False)
    return {"omp_num_threads": plan.omp_num_threads,
            "cpu_affinity_conf": plan.cpu_affinity_conf, "basis": plan.basis}
