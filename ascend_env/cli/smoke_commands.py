"""The smoke command: run a workload on a device and judge its evidence.

Each command imports what it runs inside itself, so `--help`, `--version` and the
other commands load none of it (benchmarks/startup.py measures what that saves).
"""

from __future__ import annotations

import re
from enum import Enum
from typing import Annotated

import typer

from ascend_env.cli.options import (
    HostOption,
    InventoryOption,
    JsonFlag,
    LimitOption,
    ProfileOption,
    SpecOption,
    finite,
    timeout_option,
)
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
    host: HostOption = None,
    inventory: InventoryOption = None,
    limit: LimitOption = None,
    profile: ProfileOption = None,
    spec: SpecOption = None,
    pairwise: Annotated[bool, typer.Option(
        "--pairwise", help="hccl with --inventory: every host pair on its own; names the "
        "slowest and any failing pair.")] = False,
    ranks_per_host: Annotated[int | None, typer.Option(
        "--ranks-per-host", min=1, max=64,
        help="hccl across hosts: ranks on each host; default its devices (cpu: 2).")] = None,
    parity: Annotated[bool, typer.Option(
        "--parity", help="Also compare a fixed model layer by layer, forward and backward, "
        "with float64 on the CPU; fails on the first layer out of tolerance or any CPU "
        "fallback (torch; MindSpore: forward only).")] = False,
    as_json: JsonFlag = False,
) -> None:
    """Prove a device computes: run a workload there and judge its evidence."""
    from ascend_env.cli.smoke_view import render_collective, render_fleet, render_verdict
    from ascend_env.smoke.command import SmokeOptions, run_command

    if device is not None:
        check_device(device)
    outcome = run_command(SmokeOptions(
        framework=framework.value, device=device, steps=steps, timeout_s=timeout,
        python=python, chip=chip, peak_tflops=peak_tflops, host=host, inventory=inventory,
        limit=limit, profile=profile, spec=spec, pairwise=pairwise,
        ranks_per_host=ranks_per_host, parity=parity))
    if outcome.verdict is not None:
        render_verdict(outcome.verdict, as_json=as_json)
        raise typer.Exit(outcome.verdict.exit_code)
    if outcome.collective is not None:
        raise typer.Exit(render_collective(outcome.collective, as_json=as_json))
    raise typer.Exit(render_fleet(outcome.fleet or {}, as_json=as_json))
