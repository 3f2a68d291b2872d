"""Threads: OpenMP threads and torch_npu core binding set for the host's topology."""

from __future__ import annotations

import shlex

import pytest

from ascend_env.doctor.findings import fail, observe, warn
from ascend_env.doctor.threads import AFFINITY_MODES, ThreadPlan, plan_threads
from ascend_env.facts.model import DriverFacts, Facts
from ascend_env.spec.envspec import EnvSpec, Threads

pytestmark = [pytest.mark.category("threads"), pytest.mark.level(1)]

MANAGED = "/etc/profile.d/ascend-env-threads.sh"


@pytest.fixture(scope="session")
def plan(facts: Facts, spec: EnvSpec | None) -> ThreadPlan:
    devices = spec.hardware.devices if spec else None
    return plan_threads(facts, spec.threads if spec else Threads(), devices)


def _value(facts: Facts, name: str) -> str | None:
    """What a job gets: the login shell's value where captured, else the probe's own."""
    login = facts.env.login_vars
    source = login if login is not None else facts.env.vars
    return source.get(name)


def _verdict(spec: EnvSpec | None, **details: str) -> None:
    """Drift from a spec fails; without one it is advice."""
    if spec is None:
        warn(fix="aicpu-threads", **details)
    fail(fix="aicpu-threads", **details)


def test_omp_num_threads(facts: Facts, driver: DriverFacts, spec: EnvSpec | None,
                         plan: ThreadPlan) -> None:
    """threads.omp: OMP_NUM_THREADS is set for one process per NPU."""
    del driver
    value = _value(facts, "OMP_NUM_THREADS")
    line = f"export OMP_NUM_THREADS={plan.omp_num_threads}"
    if value is None or not value.strip().isdigit() or int(value) != plan.omp_num_threads:
        _verdict(spec,
                 message=("OMP_NUM_THREADS is unset" if value is None else
                          f"OMP_NUM_THREADS is {value}, {plan.omp_num_threads} fits this host"),
                 observed=f"OMP_NUM_THREADS={value}" if value is not None else "unset",
                 expected=f"{plan.omp_num_threads} ({plan.basis})",
                 why="unset, every process of an 8-NPU job starts one OpenMP thread per CPU: "
                     "the host thrashes and the NPUs wait for data",
                 manual=f"echo {shlex.quote(line)} >> {shlex.quote(MANAGED)}")
    observe(f"OMP_NUM_THREADS={value}", str(plan.omp_num_threads))


def test_cpu_affinity(facts: Facts, spec: EnvSpec | None, plan: ThreadPlan) -> None:
    """threads.cpu-affinity: torch_npu binds each NPU's threads to its own cores."""
    if facts.frameworks.torch_npu is None:
        pytest.skip("torch_npu is not installed (CPU_AFFINITY_CONF is its setting)")
    value = _value(facts, "CPU_AFFINITY_CONF")
    mode = (value or "").split(",", 1)[0].strip()
    if mode not in AFFINITY_MODES:
        _verdict(spec,
                 message="torch_npu core binding is off (CPU_AFFINITY_CONF "
                         + ("unset)" if value is None else f"={value})"),
                 observed=f"CPU_AFFINITY_CONF={value}" if value is not None else "unset",
                 expected=f"CPU_AFFINITY_CONF={plan.cpu_affinity_conf}",
                 why="without binding the host threads of all NPUs share every core and cross "
                     "NUMA nodes; slow task dispatch starves the NPUs",
                 manual=shlex.join(["echo", "export CPU_AFFINITY_CONF="
                                    + shlex.quote(plan.cpu_affinity_conf)])
                 + f" >> {shlex.quote(MANAGED)}")
    observe(f"CPU_AFFINITY_CONF={value}")
