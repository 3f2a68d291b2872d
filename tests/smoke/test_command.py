"""The smoke command's routing decisions, made in ascend_env/smoke/command.py (not the CLI)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascend_env.core.errors import UsageError
from ascend_env.smoke.command import SmokeOptions, ranks_per_host, run_command
from ascend_env.smoke.runner import SmokeRequest, request_from_options


def request(device: str = "all") -> SmokeRequest:
    return request_from_options(framework="hccl", device=device, steps=None, timeout_s=None,
                                python=None, chip=None, peak_tflops=None, host="inventory",
                                profile=None, spec=None)


@pytest.mark.parametrize(("options", "message"), [
    (SmokeOptions(framework="torch", host="ssh://node1", inventory=Path("hosts.ini")),
     "either --inventory or --host"),
    (SmokeOptions(framework="torch", device="cpu", pairwise=True), "--pairwise goes with"),
    (SmokeOptions(framework="hccl", device="cpu", parity=True), "--parity: the parity model"),
])
def test_conflicting_options_are_refused_before_anything_runs(options: SmokeOptions,
                                                              message: str) -> None:
    with pytest.raises(UsageError, match=message):
        run_command(options)


def test_ranks_per_host_given_cpu_spec_or_refused() -> None:
    given = SmokeOptions(framework="hccl", ranks_per_host=3)
    assert ranks_per_host(request(), given) == 3
    assert ranks_per_host(request("cpu"), SmokeOptions(framework="hccl")) == 2
    from_profile = ranks_per_host(request(), SmokeOptions(framework="hccl", profile="910b"))
    assert from_profile == 8  # an Atlas 800T A2: eight 910B chips
    with pytest.raises(UsageError, match="--ranks-per-host"):
        ranks_per_host(request(), SmokeOptions(framework="hccl"))
