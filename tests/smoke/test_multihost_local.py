"""The all-reduce across hosts for real on this machine: two inventory hosts with Ansible's
local connection at 127.0.0.1 and 127.0.0.2 (both this machine's loopback), CPU torch, gloo
bound to each host's own address. The simulated fleet (tests/sim_tests/test_multihost_smoke.py)
runs the same over ssh; this one needs no root and no fleet."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cli_invoke import invoke
from tests.smoke.conftest import needs_torch

pytestmark = [needs_torch, pytest.mark.slow]


def smoke(tmp_path: Path, second_address: str, *extra: str) -> tuple[int, dict[str, Any]]:
    inventory = tmp_path / "hosts.ini"
    inventory.write_text("[all]\nh1 ansible_connection=local ansible_host=127.0.0.1\n"
                         f"h2 ansible_connection=local ansible_host={second_address}\n")
    result = invoke("smoke", "--framework", "hccl", "--inventory", str(inventory),
                    "--device", "cpu", "--python", sys.executable, "--steps", "3", "--json",
                    *extra)
    assert "Traceback" not in result.out + result.err, result.err
    assert result.out.startswith("{"), (result.code, result.out[-1500:], result.err[-1500:])
    return result.code, json.loads(result.out)


def test_two_hosts_all_reduce_correctly_and_report_busbw(tmp_path: Path) -> None:
    code, document = smoke(tmp_path, "127.0.0.2", "--timeout", "180")
    assert code == 0, document["problems"]
    assert document["master"].startswith("127.0.0.1:")
    assert document["world_size"] == 4 and document["backend"] == "gloo"
    assert len(document["results"]) == 3  # the CPU sizes 64K, 1M, 4M
    for row in document["results"]:
        assert row["correct"] and row["ranks_reporting"] == 4 and row["wrong_elements"] == 0
        assert row["busbw_gbps"] == pytest.approx(row["algbw_gbps"] * 2 * 3 / 4)
        assert row["busbw_gbps"] > 0


def test_a_host_that_fails_is_named_and_the_run_ends_at_the_limit(tmp_path: Path) -> None:
    # h2's address is none of this machine's: its ranks cannot bind gloo to it and fail at
    # once, while h1's wait in the rendezvous until the time limit stops them.
    code, document = smoke(tmp_path, "192.0.2.1", "--timeout", "30", "--ranks-per-host", "1")
    assert code == 1
    assert document["status"] == "failed"
    assert document["failing_hosts"] == ["h2"]
    assert document["first_failure"].startswith("h2 rank 1")
    assert "192.0.2.1" in document["first_failure"]
    assert document["per_host"]["h1"]["status"] == "failed"
