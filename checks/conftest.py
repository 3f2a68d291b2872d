"""Fixtures of the check suite: `facts`, `spec`, `matrix`, `host` and the skips checks share.

`ascend-env doctor` runs this suite with its plugin, which parametrises every check by
target. Run directly (`pytest checks/`), the suite checks this machine without a spec.

A check that depends on something absent skips with the reason through these fixtures
(`driver`, `cann`, `npu_smi`...), so a host without a driver reports one failure, not twenty.
"""

from __future__ import annotations

from typing import Any

import pytest

from ascend_env.doctor.suite import PLUGIN_NAME, DoctorContext, DoctorPlugin, Target
from ascend_env.facts.model import CannFacts, DriverFacts, Facts, NetworkFacts, NpuDevice
from ascend_env.spec.envspec import EnvSpec
from ascend_env.spec.matrix import Chip, Matrix, load_chips

NO_DRIVER = "the NPU driver is not installed (see driver.installed)"


def _plugin(config: pytest.Config) -> DoctorPlugin | None:
    found = [p for p in config.pluginmanager.get_plugins() if isinstance(p, DoctorPlugin)]
    return found[0] if found else None


def pytest_configure(config: pytest.Config) -> None:
    if _plugin(config) is None:
        # `pytest checks/` without the doctor: this machine, no spec.
        from ascend_env.facts.assemble import facts_from_capture  # noqa: PLC0415
        from ascend_env.targets.collect import ProbeOptions, capture_local  # noqa: PLC0415

        captured = capture_local(ProbeOptions())
        if captured.capture is None:
            raise pytest.UsageError(f"cannot probe this machine: {captured.error}")
        target = Target(name=captured.name, facts=facts_from_capture(captured.capture))
        config.pluginmanager.register(DoctorPlugin(DoctorContext(targets=[target])),
                                      PLUGIN_NAME)


def _context(config: pytest.Config) -> DoctorContext:
    plugin = _plugin(config)
    assert plugin is not None
    return plugin.context


# `target` is a parameter the doctor's plugin gives every check (a Target: the host, its
# facts), at session scope: the fixtures below are session-scoped, so each is made once per
# host (a skip too: every check that takes `driver` skips with the same reason) instead of
# once per check and host.

@pytest.fixture(scope="session")
def facts(target: Target) -> Facts:
    return target.facts


@pytest.fixture(scope="session")
def spec(pytestconfig: pytest.Config) -> EnvSpec | None:
    """The spec given with --profile/--spec, or None (consistency checks only)."""
    return _context(pytestconfig).spec


@pytest.fixture(scope="session")
def with_spec(spec: EnvSpec | None) -> EnvSpec:
    """The spec, for checks that compare with it; they skip without one."""
    if spec is None:
        pytest.skip("no spec given (--profile or --spec compares the host with one)")
    return spec


@pytest.fixture(scope="session")
def matrix(pytestconfig: pytest.Config) -> Matrix:
    return _context(pytestconfig).matrix


@pytest.fixture(scope="session")
def run_users(pytestconfig: pytest.Config) -> tuple[str, ...]:
    """Accounts named with --run-user: the users that run jobs on the host."""
    return _context(pytestconfig).run_users


@pytest.fixture(scope="session")
def host(target: Target) -> Any:
    """The testinfra Host of a live target (smoke checks); skips on a saved capture."""
    if target.host is None:
        pytest.skip("no live connection to the host (evaluating a saved capture)")
    return target.host


@pytest.fixture(scope="session")
def driver(facts: Facts) -> DriverFacts:
    if facts.driver is None:
        pytest.skip(NO_DRIVER)
    return facts.driver


@pytest.fixture(scope="session")
def cann(facts: Facts, driver: DriverFacts) -> CannFacts:
    """The installed CANN; checks of it skip when there is no driver to run it on."""
    del driver
    if facts.cann is None:
        pytest.skip("CANN is not installed (see cann.installed)")
    return facts.cann


@pytest.fixture(scope="session")
def devices(facts: Facts, driver: DriverFacts) -> list[NpuDevice]:
    """The chips npu-smi reports; skips when npu-smi cannot say."""
    del driver
    if not facts.npu_smi.available:
        pytest.skip("npu-smi is not installed (it comes with the driver)")
    if facts.npu_smi.error and not facts.devices:
        pytest.skip(f"npu-smi does not answer (see driver.npu-smi): {facts.npu_smi.error}")
    if not facts.devices and facts.npu_smi.tool_version is None:
        # Nothing of its table was read: "no device" would be a guess (see driver.npu-smi).
        pytest.skip("npu-smi's device table could not be read (see driver.npu-smi)")
    return facts.devices


@pytest.fixture(scope="session")
def chip(facts: Facts, spec: EnvSpec | None) -> Chip | None:
    """The chip family: the spec's, else the one the cards show."""
    name = spec.hardware.chip if spec else facts.chip
    return load_chips().get(name) if name else None


@pytest.fixture(scope="session")
def expected_devices(facts: Facts, spec: EnvSpec | None, chip: Chip | None) -> int | None:
    """NPU devices (davinci nodes) the host should have: the spec's, else what PCI shows."""
    if spec is not None:
        return spec.hardware.devices or (chip.devices.default if chip else None)
    cards = [c for c in facts.pci if c.chip]
    if not cards or chip is None:
        return None
    return len(cards) * chip.chips_per_card


# -- the NPU network (checks/test_network.py, checks/test_fleet_network.py) ---------------------

@pytest.fixture(scope="session")
def fleet(pytestconfig: pytest.Config) -> list[Target]:
    """Every target at once, for the checks marked `scope("fleet")` (they take this, not
    `target`): run once per doctor run, their findings name the hosts and devices involved."""
    return _context(pytestconfig).targets


@pytest.fixture(scope="session")
def context(pytestconfig: pytest.Config) -> DoctorContext:
    return _context(pytestconfig)


@pytest.fixture(scope="session")
def network(facts: Facts, driver: DriverFacts, chip: Chip | None) -> NetworkFacts:
    """The NPUs' network ports; skips where the host has none to judge."""
    del driver
    if chip is not None and not chip.roce:  # chips.yaml: the 300I Duo's 310P talks over PCIe
        pytest.skip(f"{chip.name} NPUs have no RoCE network port")
    if not facts.network.captured:
        pytest.skip("the capture holds no NPU network (a probe from before it read hccn_tool)")
    if not facts.network.hccn_tool:
        pytest.skip("hccn_tool is not installed (it comes with the driver, in driver/tools)")
    return facts.network


@pytest.fixture(scope="session")
def network_needed(context: DoctorContext) -> bool:
    """Whether device addresses must be there: the spec has a network plan (the hosts are
    meant to run jobs across hosts). Without one a missing address warns: a host that only
    runs single-host jobs needs none, and a fresh `install` sets none."""
    return context.spec is not None and context.spec.network is not None
