"""The health gate between a roll's batches: the doctor, at the gate's level, on the hosts of
the batch that just changed; a host with a failed check stops the roll.

Levels (`--gate`): 1 is the post-install doctor (what install controls: hardware, driver,
firmware, devices with their health, CANN, env, permissions); 2 adds the NPUs' network (HCCL
links, ports, and the pings between the batch's hosts); 3 adds the smoke workloads (a model
trained on the NPUs, an all-reduce). A host that answers the probe with an NPU in Alarm after
its driver's hot reset fails `devices.health` at every level.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ascend_env.doctor.report import FleetReport
from ascend_env.doctor.run import DoctorOptions, doctor
from ascend_env.spec.envspec import EnvSpec

# What install controls: also the post-install doctor's categories (workflows/install_checked.py).
INSTALL_CATEGORIES = ("hardware", "driver", "firmware", "devices", "cann", "env",
                      "permissions")
GATE_CATEGORIES: dict[int, tuple[str, ...]] = {
    1: INSTALL_CATEGORIES,
    2: (*INSTALL_CATEGORIES, "network"),
    3: (*INSTALL_CATEGORIES, "network", "smoke", "frameworks", "python"),
}


@dataclass
class GateResult:
    """What the gate found: per host, the checks that failed (`id: message`)."""

    level: int
    hosts: list[str]
    failed: dict[str, list[str]] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return not self.failed

    def describe(self) -> str:
        """`node1: devices.health: NPU 0 ...; node2: unreachable: ...`."""
        return "; ".join(f"{host}: {'; '.join(checks)}" for host, checks in self.failed.items())


def run_gate(spec: EnvSpec, hosts: list[str], level: int, *, inventory: Path | None,
             target: str | None) -> GateResult:
    """The doctor at `level` on `hosts` (of the inventory, or the one --host / this machine)."""
    document = doctor(DoctorOptions(
        spec=spec, inventory=inventory, target=target,
        limit=",".join(hosts) if inventory is not None else None,
        level=level, only=GATE_CATEGORIES[level]))
    reports = document.hosts if isinstance(document, FleetReport) else [document]
    result = GateResult(level=level, hosts=list(hosts))
    for report in reports:
        # Ansible names this machine `localhost`; the doctor uses its host name.
        name = report.host if report.host in hosts or len(hosts) != 1 else hosts[0]
        if not report.reachable:
            result.failed[name] = [f"unreachable: {report.error}"]
            continue
        failed = [f"{check.id}: {check.message}" for check in report.checks
                  if check.status in ("fail", "error")]
        if failed:
            result.failed[name] = failed
    if isinstance(document, FleetReport):
        for check in document.fleet_failed:
            # `involved` names hosts and devices (`node1 npu 3`); one naming none is all's.
            named = [host for host in hosts if any(
                item == host or item.startswith((f"{host} ", f"{host}:"))
                for item in check.involved)]
            for host in named or hosts:
                result.failed.setdefault(host, []).append(f"{check.id}: {check.message}")
    return result
