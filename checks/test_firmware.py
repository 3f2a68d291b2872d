"""Firmware: installed, and paired with the driver (npu-smi's own verdict first)."""

from __future__ import annotations

import pytest

from ascend_env.core.versions import same_release
from ascend_env.doctor.findings import fail, failure, observe
from ascend_env.facts.model import DriverFacts, Facts, any_range_contains
from ascend_env.spec.envspec import EnvSpec
from ascend_env.spec.matrix import Matrix

pytestmark = [pytest.mark.category("firmware"), pytest.mark.level(1)]

INSTALL_FIRMWARE = ("install the firmware of the driver's HDK (firmware first on an installed "
                    "host), then reboot: ascend-env install --components driver,firmware")


def test_installed(facts: Facts, driver: DriverFacts) -> None:
    """firmware.installed: the NPU firmware is installed."""
    if facts.firmware is None and driver.source == "npu-smi":
        pytest.skip("firmware/version.info is not visible (the driver is mounted from the "
                    "host; its firmware is the host's)")
    assert facts.firmware is not None, failure(
        message="the NPU firmware is not installed",
        observed=f"no {driver.install_path}/firmware/version.info",
        expected="firmware/version.info of the HDK's firmware package",
        why="the driver needs the firmware it was released with to bring the NPUs up",
        manual=INSTALL_FIRMWARE)
    observe(f"firmware {facts.firmware.version_raw}")


def test_compatible(facts: Facts, driver: DriverFacts) -> None:
    """firmware.compatible: firmware and driver are a compatible pair."""
    firmware = facts.firmware
    if firmware is None:
        pytest.skip("the firmware is not installed (see firmware.installed)")
    verdicts = {d.npu_id: (d.compatibility or "").upper() for d in facts.devices
                if d.compatibility}
    bad = sorted(n for n, v in verdicts.items() if v in ("NOK", "UNKNOWN"))
    pair = f"driver {driver.version_raw}, firmware {firmware.version_raw}"
    if bad:
        fail(message=f"npu-smi reports driver and firmware incompatible on NPU(s) "
                     f"{', '.join(map(str, bad))} (Compatibility "
                     f"{verdicts[bad[0]]}): {pair}",
             observed=f"npu-smi info -t board: Compatibility {verdicts[bad[0]]}; {pair}",
             expected="Compatibility : OK; firmware in the driver's range "
                      + ", ".join(f"[{r.low},{r.high}]" for r in driver.compatible_firmware),
             why="a mismatched pair (Huawei Cloud's NpuDriverFirmwareMismatch) fails device "
                 "start-up or behaves erratically",
             manual=INSTALL_FIRMWARE)
    if verdicts and all(v == "OK" for v in verdicts.values()):
        observe(f"npu-smi: Compatibility OK on {len(verdicts)} NPU(s); {pair}")
        return
    # No board page (or NOT SUPPORT): the version files' own ranges.
    answer = None
    if firmware.version is not None and driver.compatible_firmware:
        answer = any_range_contains(driver.compatible_firmware, firmware.version)
    if answer is None and driver.version is not None and firmware.compatible_driver:
        answer = any_range_contains(firmware.compatible_driver, driver.version)
    if answer is None:
        pytest.skip("neither npu-smi nor the version files say whether the pair fits")
    assert answer, failure(
        message=f"firmware {firmware.version_raw} is outside the range driver "
                f"{driver.version_raw} accepts",
        observed=pair,
        expected="firmware in " + ", ".join(f"[{r.low},{r.high}]"
                                            for r in driver.compatible_firmware),
        why="a mismatched pair fails device start-up or behaves erratically",
        manual=INSTALL_FIRMWARE)
    observe(pair + " (version.info ranges)")


def test_version(facts: Facts, driver: DriverFacts, with_spec: EnvSpec, matrix: Matrix) -> None:
    """firmware.version: the firmware is the spec's (or the spec driver's HDK) release."""
    del driver
    firmware = facts.firmware
    if firmware is None:
        pytest.skip("the firmware is not installed (see firmware.installed)")
    if with_spec.firmware.version is not None:
        wanted = with_spec.firmware.version
        assert same_release(firmware.version_raw or "", wanted.raw), failure(
            message=f"firmware {firmware.version_raw} is installed, the spec wants {wanted.raw}",
            observed=f"firmware {firmware.version_raw}",
            expected=f"firmware {wanted.raw} (firmware.version)",
            why="the spec pins the firmware", manual=INSTALL_FIRMWARE)
        observe(f"firmware {firmware.version_raw}", wanted.raw)
        return
    hdk = with_spec.driver.version
    shipped = firmware.package_version
    if shipped is None:
        pytest.skip("firmware/version.info names no package_version (HDK release)")
    # One identity with driver.version: the spec's 25.0.RC1 is the 25.0.rc1.1 its files carry.
    assert same_release(shipped, hdk.raw, matrix.hdk()), failure(
        message=f"the firmware comes from HDK {shipped}, the spec's driver is HDK {hdk.raw}",
        observed=f"firmware {firmware.version_raw} (package_version {shipped})",
        expected=f"the firmware of HDK {hdk.raw}",
        why="driver and firmware are released and tested as one HDK",
        manual=INSTALL_FIRMWARE)
    observe(f"firmware {firmware.version_raw} of HDK {shipped}", f"HDK {hdk.raw}")
