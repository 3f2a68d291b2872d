"""Version facts the fake packages write into their files (tests/data/real samples, matrix.yaml).

Where a source gives the value it is used; otherwise a placeholder of the right shape is
derived and marked "simulated" in the comment beside the rule.
"""

from __future__ import annotations

import re

from tests.sim.layout import SimError

# HDK release -> firmware version shipped with it (Ascend/docs _static/package_info.js,
# https://github.com/Ascend/docs; ascend-deployer 26.0.0).
FIRMWARE: dict[str, str] = {
    "23.0.7": "7.1.0.11.220",
    "24.1.rc1": "7.1.0.6.220",
    "24.1.rc2": "7.3.0.1.231",
    "25.0.rc1.1": "7.7.0.1.231",
}
# HDK -> (ascendhal_version, Innerversion, compatible_version, compatible_version_fw)
# (https://github.com/vllm-project/vllm-ascend/issues/451; the fixture
# component/ascend-faultdiag/test/st_module_testcase/kg_parse/npu_info_after.txt of
# https://github.com/Ascend/mind-cluster).
DRIVER_INFO: dict[str, tuple[str, str, str, str]] = {
    "24.1.rc3": ("7.35.23", "V100R001C19SPC001B124",
                 "[V100R001C13],[V100R001C15],[V100R001C17],[V100R001C18],[V100R001C19]",
                 "[7.0.0,7.5.99]"),
    "23.0.7": ("7.35.19", "V100R001C15SPC012B220",
               "[V100R001C29],[V100R001C30],[V100R001C13],[V100R001C15]", "[7.0.0,7.1.99]"),
}
# CANN -> (innerversion, compatible_version) (https://github.com/vllm-project/vllm-ascend/issues/198,
# https://github.com/vllm-project/vllm-ascend/issues/1047).
CANN_INNER: dict[str, tuple[str, str]] = {
    "8.0.0": ("V100R001C20SPC001B251",
              "[V100R001C15],[V100R001C17],[V100R001C18],[V100R001C19],[V100R001C20]"),
    "8.1.RC1": ("V100R001C21SPC001B238",
                "[V100R001C15],[V100R001C18],[V100R001C19],[V100R001C20],[V100R001C21]"),
    "8.2.RC1": ("V100R001C22SPC001B231",
                "[V100R001C15],[V100R001C18],[V100R001C19],[V100R001C20],[V100R001C21],"
                "[V100R001C23]"),
    "8.5.0": ("V100R001C25SPC001B212",
              "[V100R001C15],[V100R001C18],[V100R001C19],[V100R001C20],[V100R001C21],"
              "[V100R001C23]"),
}

_CANN_RE = re.compile(r"^\d+\.\d+\.(RC\d+|\d+)([.-][0-9A-Za-z.]+)?$")
_HDK_RE = re.compile(r"^\d+\.\d+\.(rc\d+|RC\d+|\d+)(\.\d+)?$")


def check_cann(version: str) -> str:
    if not _CANN_RE.match(version):
        raise SimError(f"CANN version {version!r} is not of the vendor form (8.0.RC1, 8.5.0, "
                       "9.0.0-beta.1, 8.0.RC2.alpha002)")
    return version


def hdk_file_version(hdk: str) -> str:
    """HDK release as spelled in file names: lower case; 25.0.RC1 shipped as 25.0.rc1.1."""
    if not _HDK_RE.match(hdk):
        raise SimError(f"HDK version {hdk!r} is not of the vendor form (25.5.0, 25.0.RC1)")
    low = hdk.lower()
    return "25.0.rc1.1" if low == "25.0.rc1" else low


def firmware_for(hdk_file: str) -> str:
    # simulated: unknown pairings get 7.8.0.<minor>.<patch>-shaped placeholders.
    if hdk_file in FIRMWARE:
        return FIRMWARE[hdk_file]
    nums = [int(x) for x in re.findall(r"\d+", hdk_file)]
    return f"7.8.0.{nums[1] if len(nums) > 1 else 0}.2{nums[0] if nums else 0}"


def driver_version_info(hdk_file: str) -> dict[str, str]:
    # simulated for unlisted releases: a firmware range wide enough for the paired firmware.
    hal, inner, compat, compat_fw = DRIVER_INFO.get(
        hdk_file, ("7.35.23", "V100R001C25SPC001B212",
                   "[V100R001C15],[V100R001C18],[V100R001C19],[V100R001C20],[V100R001C21],"
                   "[V100R001C23],[V100R001C25]", "[7.0.0,7.9.99]"),
    )
    return {
        "Version": hdk_file,
        "ascendhal_version": hal,
        "aicpu_version": "1.0",
        "tdt_version": "1.0",
        "log_version": "1.0",
        "prof_version": "2.0",
        "dvppkernels_version": "1.1",
        "tsfw_version": "1.0",
        "Innerversion": inner,
        "compatible_version": compat,
        "compatible_version_fw": compat_fw,
        "package_version": hdk_file,
    }


def firmware_version_info(firmware: str, hdk_file: str) -> dict[str, str]:
    mm = ".".join(hdk_file.split(".")[:2])
    return {
        "Version": firmware,
        "firmware_version": "1.0",
        "package_version": hdk_file,
        "compatible_version_drv": f"[{mm},{mm}.]",
    }


def cann_inner(cann: str) -> tuple[str, str]:
    # simulated for unlisted releases.
    return CANN_INNER.get(cann, ("V100R001C99SPC001B001", "[V100R001C15],[V100R001C25]"))


def component_build(cann: str) -> str:
    """The `<build>` in version.cfg's `[<build>:<version>]` (e.g. 7.6.0.1.220 for 8.0.0)."""
    return "7.6.0.1.220" if cann == "8.0.0" else "7.8.0.1.212"  # simulated beyond 8.0.0


def cann_key(v: str) -> tuple[int, int, int, int]:
    """Vendor order: X.Y.RCn < X.Y.0 < X.Y.1; community suffixes sit with their base."""
    parts = v.replace("-", ".").split(".")
    third = parts[2].lower()
    if third.startswith("rc"):
        return (int(parts[0]), int(parts[1]), 0, int(third[2:]))
    return (int(parts[0]), int(parts[1]), 1, int(third))


def ops_era(cann: str) -> str:
    """Which ops/kernels file name a CANN version uses (ascend_env/data/packages.yaml)."""
    key = cann_key(cann)
    if key < (8, 0, 0, 3):
        return "kernels-noarch"
    if key < (8, 5, 1, 0) or "alpha" in cann:
        return "kernels"
    return "ops"
