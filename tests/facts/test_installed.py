"""Driver and firmware version.info: compatibility ranges."""

from __future__ import annotations

from ascend_env.facts.installed import parse_version_info
from ascend_env.facts.model import VersionRange, any_range_contains
from tests.facts.captures import sample


def test_driver_firmware_range() -> None:
    driver = parse_version_info(sample("version_info", "driver-24.1.rc3"))
    assert any_range_contains(driver.compatible_firmware, "7.1.0.11.220") is True
    assert any_range_contains(driver.compatible_firmware, "7.5.99.1.220") is True
    assert any_range_contains(driver.compatible_firmware, "7.6.0.1.220") is False
    old = parse_version_info(sample("version_info", "driver-23.0.7"))
    assert any_range_contains(old.compatible_firmware, "7.3.0.1.231") is False


def test_trailing_dot_reads_as_prefix() -> None:
    firmware = parse_version_info(sample("version_info", "firmware-7.1.0.11.220"))
    ranges = firmware.compatible_driver
    assert any_range_contains(ranges, "23.0.rc3") is True
    assert any_range_contains(ranges, "23.0.rc3.1") is True
    assert any_range_contains(ranges, "23.0.0") is True
    assert any_range_contains(ranges, "24.1.rc1") is False
    # inner release codes are not versions: the answer is "cannot tell", never a guess
    assert VersionRange(low="V100R001C13", high="V100R001C15").contains("8.0.0") is None
