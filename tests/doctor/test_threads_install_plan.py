"""Install's thread settings are the doctor's plan for the host, from the same capture."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ascend_env.core.resources import remote_source
from ascend_env.doctor.threads import install_plan, plan_threads
from ascend_env.facts.assemble import facts_from_capture
from ascend_env.facts.capture import parse_capture
from ascend_env.spec.envspec import Threads


@pytest.fixture(scope="module")
def probe_output() -> str:
    """This machine's capture, as preflight's `python3 -c PROBE` prints it."""
    return subprocess.run([sys.executable, "-I", "-S", "-c", remote_source("probe")],
                          capture_output=True, text=True, check=True, timeout=300).stdout


@pytest.mark.parametrize(("threads", "devices"), [
    ({}, 8), ({"aicpu_per_core": 1}, 2), ({"omp_num_threads": 6}, 8), ({}, None)])
def test_install_writes_what_the_doctor_expects(probe_output: str, threads: dict[str, int],
                                                devices: int | None) -> None:
    facts = facts_from_capture(parse_capture(probe_output))
    expected = plan_threads(facts, Threads(**threads), devices)
    got = install_plan(probe_output, {"spec": threads, "devices": devices})
    assert got["omp_num_threads"] == expected.omp_num_threads
    assert got["basis"] == expected.basis
    # Only the mode: the NUMA ranges need the driver's view of the NPUs (threads.py).
    assert got["cpu_affinity_conf"] == "1"
    assert expected.cpu_affinity_conf.split(",", 1)[0] == "1"
    if "omp_num_threads" in threads:
        assert got["omp_num_threads"] == threads["omp_num_threads"]


def test_a_spec_value_the_doctor_would_refuse_is_refused(probe_output: str) -> None:
    with pytest.raises(ValueError, match="aicpu_per_core"):
        install_plan(probe_output, {"spec": {"aicpu_per_core": 0}, "devices": 8})
