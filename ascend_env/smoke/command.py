"""The smoke command's decisions: which target, transport and devices, one host or a fleet,
one workload or an all-reduce across hosts. The CLI parses, calls `run_command`, renders."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ascend_env.core.errors import UsageError
from ascend_env.smoke.fleet_collective import hosts_of, run_pairwise, run_world
from ascend_env.smoke.runner import (
    Framework,
    SmokeRequest,
    request_from_options,
    run_fleet,
    run_smoke,
    target_for,
)
from ascend_env.smoke.verdict import Verdict
from ascend_env.spec.envspec import load_spec
from ascend_env.spec.matrix import load_chips
from ascend_env.targets.collect import check_target


@dataclass(frozen=True)
class SmokeOptions:
    """The smoke command's options as given (None: not given)."""

    framework: Framework
    device: str | None = None
    steps: int | None = None
    timeout_s: float | None = None
    python: str | None = None
    chip: str | None = None
    peak_tflops: float | None = None
    host: str | None = None
    inventory: Path | None = None
    limit: str | None = None
    profile: str | None = None
    spec: Path | None = None
    pairwise: bool = False
    ranks_per_host: int | None = None
    parity: bool = False


@dataclass(frozen=True)
class SmokeOutcome:
    """What ran: one verdict, one verdict or error per host, or an all-reduce across hosts."""

    verdict: Verdict | None = None
    fleet: dict[str, Any] | None = None
    collective: dict[str, Any] | None = None


def run_command(options: SmokeOptions) -> SmokeOutcome:
    """Check the options against each other, pick the route, run it."""
    if options.inventory is not None and options.host is not None:
        raise UsageError("name either --inventory or --host, not both")
    if options.host is not None:
        check_target(options.host)
    request = request_from_options(
        framework=options.framework, device=options.device, steps=options.steps,
        timeout_s=options.timeout_s, python=options.python, chip=options.chip,
        peak_tflops=options.peak_tflops,
        host=options.host or ("inventory" if options.inventory else None),
        profile=options.profile, spec=options.spec, parity=options.parity)
    if options.pairwise and (options.framework != "hccl" or options.inventory is None):
        raise UsageError("--pairwise goes with --framework hccl --inventory")
    if options.inventory is not None and options.framework == "hccl":
        members = hosts_of(options.inventory, options.limit)
        if len(members) > 1 or options.pairwise:
            return SmokeOutcome(collective=_collective(request, members, options))
    if options.inventory is not None:
        return SmokeOutcome(fleet=dict(run_fleet(request, options.inventory, options.limit)))
    return SmokeOutcome(verdict=run_smoke(request, target_for(options.host)))


def _collective(request: SmokeRequest, members: list[Any],
                options: SmokeOptions) -> dict[str, Any]:
    """The all-reduce across the inventory's hosts, or every pair of them."""

    if len(members) < 2:
        raise UsageError("--pairwise needs at least two hosts")
    nprocs = ranks_per_host(request, options)
    if options.pairwise:
        return run_pairwise(request, members, nprocs)
    return run_world(request, members, nprocs)


def ranks_per_host(request: SmokeRequest, options: SmokeOptions) -> int:
    """--ranks-per-host, else 2 on the CPU, else the spec's devices (or its chip's count)."""
    if options.ranks_per_host is not None:
        return options.ranks_per_host
    if request.device == "cpu":
        return 2
    if options.spec is not None or options.profile is not None:
        loaded = load_spec(profile=options.profile, path=options.spec)
        chip = load_chips().get(loaded.hardware.chip)
        found = loaded.hardware.devices or (chip.devices.default if chip else None)
        if found is not None:
            return int(found)
    raise UsageError("--ranks-per-host: how many devices each host has (or give --spec)")
