"""The smoke command: run a workload on a device and judge its evidence."""

from __future__ import annotations

import re
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from ascend_env.cli.options import JsonFlag, ProfileOption, SpecOption, finite, timeout_option
from ascend_env.core.errors import UsageError


class SmokeFramework(str, Enum):
    """Smoke workloads."""

    torch = "torch"
    mindspore = "mindspore"
    hccl = "hccl"


# npu:N / cuda:N with ASCII digits only, and N below the most devices a host has:
# str.isdigit(), which the workload's parser uses, also takes `٣` and 5000-digit numbers.
_DEVICE = re.compile(r"(?:npu|cuda)(?::(?P<index>[0-9]{1,4}))?|cpu|all", re.ASCII)


def check_device(device: str) -> None:
    """A --device value the workloads can take, or a usage error (exit 2)."""
    from ascend_env.core.numbers import MAX_DEVICES

    match = _DEVICE.fullmatch(device.strip().lower())
    index = match.group("index") if match else None
    if match is None or (index is not None and int(index) >= MAX_DEVICES):
        shown = device if len(device) <= 20 else device[:17] + "..."
        raise UsageError(f"--device {shown!r}: give npu:N or cuda:N (N from 0 to "
                         f"{MAX_DEVICES - 1}), npu, all or cpu")


def smoke(
    framework: Annotated[SmokeFramework, typer.Option(
        "--framework", help="torch, mindspore, or hccl (an all-reduce over every device).")],
    device: Annotated[str | None, typer.Option(
        "--device", help="npu:N, all, cuda:N or cpu; default npu:0 (hccl: all).")] = None,
    steps: Annotated[int | None, typer.Option(
        "--steps", min=2, max=100000,
        help="Training steps (hccl: iterations); default spec or 50.")] = None,
    timeout: Annotated[float | None, timeout_option(
        "Seconds; default spec smoke.timeout_s or 600.")] = None,
    python: Annotated[str | None, typer.Option(
        "--python", help="The framework's Python; default this one (python3 with --host).")
                      ] = None,
    chip: Annotated[str | None, typer.Option(
        "--chip", help="Chip family for the thresholds; default from the spec or device.")
                    ] = None,
    peak_tflops: Annotated[float | None, typer.Option(
        "--peak-tflops", min=0.001, max=1e6, callback=finite,
        help="The chip's fp16 peak, where the data has none.")] = None,
    host: Annotated[str | None, typer.Option(
        "--host", help="testinfra host to run on, e.g. ssh://user@node; default here.")
                    ] = None,
    inventory: Annotated[Path | None, typer.Option(
        "--inventory", "-i", help="Run on every host of this Ansible inventory.")] = None,
    limit: Annotated[str | None, typer.Option("--limit", help="Ansible host pattern.")] = None,
    profile: ProfileOption = None,
    spec: SpecOption = None,
    pairwise: Annotated[bool, typer.Option(
        "--pairwise", help="hccl with --inventory: every host pair on its own; names the "
        "slowest and any failing pair.")] = False,
    ranks_per_host: Annotated[int | None, typer.Option(
        "--ranks-per-host", min=1, max=64,
        help="hccl across hosts: ranks on each host; default its devices (cpu: 2).")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Prove a device computes: run a workload there and judge its evidence."""
    from ascend_env.cli.smoke_view import render_fleet, render_verdict
    from ascend_env.smoke.runner import request_from_options, run_fleet, run_smoke, target_for

    if inventory is not None and host is not None:
        raise UsageError("name either --inventory or --host, not both")
    if host is not None:
        from ascend_env.targets.collect import check_target

        check_target(host)
    if device is not None:
        check_device(device)
    request = request_from_options(
        framework=framework.value, device=device, steps=steps, timeout_s=timeout,
        python=python, chip=chip, peak_tflops=peak_tflops,
        host=host or ("inventory" if inventory else None), profile=profile, spec=spec)
    if pairwise and (framework.value != "hccl" or inventory is None):
        raise UsageError("--pairwise goes with --framework hccl --inventory")
    if inventory is not None and framework.value == "hccl":
        from ascend_env.smoke.fleet_collective import hosts_of

        members = hosts_of(inventory, limit)
        if len(members) > 1 or pairwise:
            raise typer.Exit(_collective(request, members, pairwise, ranks_per_host,
                                         spec, profile, as_json))
    if inventory is not None:
        raise typer.Exit(render_fleet(dict(run_fleet(request, inventory, limit)),
                                      as_json=as_json))
    verdict = run_smoke(request, target_for(host))
    render_verdict(verdict, as_json=as_json)
    raise typer.Exit(verdict.exit_code)


def _collective(request: Any, members: list[Any], pairwise: bool, ranks_per_host: int | None,
                spec: Path | None, profile: str | None, as_json: bool) -> int:
    """The all-reduce across the inventory's hosts, or every pair of them."""
    from ascend_env.cli.smoke_view import render_collective
    from ascend_env.smoke.fleet_collective import run_pairwise, run_world

    if len(members) < 2:
        raise UsageError("--pairwise needs at least two hosts")
    nprocs = ranks_per_host
    if nprocs is None and request.device == "cpu":
        nprocs = 2
    if nprocs is None and (spec is not None or profile is not None):
        from ascend_env.spec.envspec import load_spec
        from ascend_env.spec.matrix import load_chips

        loaded = load_spec(profile=profile, path=spec)
        chip = load_chips().get(loaded.hardware.chip)
        nprocs = loaded.hardware.devices or (chip.devices.default if chip else None)
    if nprocs is None:
        raise UsageError("--ranks-per-host: how many devices each host has (or give --spec)")
    document = run_pairwise(request, members, nprocs) if pairwise else \
        run_world(request, members, nprocs)
    return render_collective(document, as_json=as_json)
