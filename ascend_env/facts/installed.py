"""Installed driver and firmware: version.info, /etc/ascend_install.info, compatibility ranges.

Also where to look for them: the install paths the probe was given, the record's, the default.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ascend_env.facts.model import (
    AscendInstallRecord,
    DriverFacts,
    FirmwareFacts,
    NpuSmiFacts,
    VersionRange,
)
from ascend_env.facts.reader import CaptureReader
from ascend_env.facts.values import none_if_na, parse_kv
from ascend_env.remote import probe

BRACKETS = re.compile(r"\[([^\[\]]*)\]")


def parse_version_ranges(text: str) -> list[VersionRange]:
    """`[7.0.0,7.5.99]`, `[V100R001C13],[V100R001C15]`, `[23.0.rc3,23.0.rc3.],[23.0.0,23.0.0.]`."""
    ranges: list[VersionRange] = []
    for inner in BRACKETS.findall(text):
        parts = [p.strip() for p in inner.split(",") if p.strip()]
        if len(parts) == 1:
            ranges.append(VersionRange(low=parts[0], high=parts[0]))
        elif len(parts) == 2:
            ranges.append(VersionRange(low=parts[0], high=parts[1]))
    return ranges


@dataclass(kw_only=True, slots=True)
class VersionInfo:
    """driver/version.info or firmware/version.info (samples:
    https://github.com/vllm-project/vllm-ascend/issues/451 and the fixture
    component/ascend-faultdiag/test/st_module_testcase/kg_parse/npu_info_after.txt of
    https://github.com/Ascend/mind-cluster)."""

    version: str | None = None
    package_version: str | None = None
    inner_version: str | None = None
    compatible_version: list[VersionRange] = field(default_factory=list)
    compatible_firmware: list[VersionRange] = field(default_factory=list)
    compatible_driver: list[VersionRange] = field(default_factory=list)
    values: dict[str, str] = field(default_factory=dict)


def parse_version_info(text: str) -> VersionInfo:
    """Key=value lines of a driver/firmware version.info, compatibility lists as ranges."""
    values = parse_kv(text)
    return VersionInfo(
        version=none_if_na(values.get("Version")),
        package_version=none_if_na(values.get("package_version")),
        inner_version=none_if_na(values.get("Innerversion")),
        compatible_version=parse_version_ranges(values.get("compatible_version", "")),
        compatible_firmware=parse_version_ranges(values.get("compatible_version_fw", "")),
        compatible_driver=parse_version_ranges(values.get("compatible_version_drv", "")),
        values=values,
    )


def _yes_no(value: str | None) -> bool | None:
    if value is None:
        return None
    return {"yes": True, "y": True, "true": True, "no": False, "n": False,
            "false": False}.get(value.strip().lower())


def parse_ascend_install_info(text: str) -> AscendInstallRecord:
    """The driver/firmware install record."""
    values = parse_kv(text)
    return AscendInstallRecord(
        user_name=none_if_na(values.get("UserName")),
        user_group=none_if_na(values.get("UserGroup")),
        driver_install_type=none_if_na(values.get("Driver_Install_Type")),
        driver_install_path=none_if_na(values.get("Driver_Install_Path_Param")),
        driver_install_for_all=_yes_no(values.get("Driver_Install_For_All")),
        driver_install_mode=none_if_na(values.get("Driver_Install_Mode")),
        firmware_install_type=none_if_na(values.get("Firmware_Install_Type")),
        firmware_install_path=none_if_na(values.get("Firmware_Install_Path_Param")),
        values=values,
    )


def unique_paths(items: Iterable[str | None]) -> list[str]:
    """Install paths in order, each once, without a trailing slash; empty ones dropped."""
    out: list[str] = []
    for item in items:
        if item and item not in out:
            out.append(item.rstrip("/") or "/")
    return out


def install_paths(r: CaptureReader) -> list[str]:
    """Where Ascend software may be: the probe's options, the driver's record, the default."""
    paths = [p for p in r.capture.options.get("install_paths") or [] if isinstance(p, str)]
    record = parse_ascend_install_info(r.file("/etc/ascend_install.info") or "")
    for extra in (r.capture.options.get("install_path"), record.driver_install_path,
                  probe.DEFAULT_INSTALL_PATH):
        if isinstance(extra, str) and extra not in paths:
            paths.append(extra)
    return paths


def read_install_record(r: CaptureReader) -> AscendInstallRecord | None:
    """/etc/ascend_install.info, None when it was not captured."""
    text = r.file("/etc/ascend_install.info")
    return parse_ascend_install_info(text) if text is not None else None


def _version_info(r: CaptureReader, component: str, recorded: str | None
                  ) -> tuple[str, VersionInfo] | None:
    """The first <base>/<component>/version.info under the record's path or an install path."""
    for base in unique_paths([recorded, *install_paths(r)]):
        text = r.file(f"{base}/{component}/version.info")
        if text is not None:
            return base, parse_version_info(text)
    return None


# What a driver known only from npu-smi does not show (the checks that need them skip).
NOT_VISIBLE_WITHOUT_VERSION_INFO = [
    "driver/version.info (its Innerversion and compatibility lists)",
    "driver/tools/upgrade-tool (whether the install is complete)",
]


def read_driver(r: CaptureReader, record: AscendInstallRecord,
                npu_smi: NpuSmiFacts | None = None, *, chips_listed: bool = False
                ) -> DriverFacts | None:
    """The first driver/version.info under the record's path or an install path.

    Without one, a driver that npu-smi answers for is still there: in a container the
    host's driver libraries and npu-smi are mounted and version.info often is not
    (the run line in the README of https://github.com/Ascend/cann-container-image mounts
    it, many do not). Its version then comes from
    npu-smi's title row (`npu-smi 23.0.7  Version: 23.0.7`), and the facts say so.
    """
    found = _version_info(r, "driver", record.driver_install_path)
    if found is None:
        return _driver_from_npu_smi(r, record, npu_smi, chips_listed)
    base, info = found
    return DriverFacts(
        version=r.version(info.version, f"{base}/driver/version.info Version"),
        version_raw=info.version, package_version=info.package_version,
        inner_version=info.inner_version, install_path=base,
        complete=r.exists(f"{base}/driver/tools/upgrade-tool"),
        compatible_firmware=info.compatible_firmware,
        compatible_cann=info.compatible_version)


def _driver_from_npu_smi(r: CaptureReader, record: AscendInstallRecord,
                         npu_smi: NpuSmiFacts | None, chips_listed: bool) -> DriverFacts | None:
    if npu_smi is None or not npu_smi.available or npu_smi.error is not None:
        return None
    # npu-smi prints its title row with the driver's version. Without one (a cut quote, a
    # garbled table) the driver still answered if chips were listed, since npu-smi cannot
    # list any without it; its version is then not known.
    raw = npu_smi.driver_version or npu_smi.tool_version
    if raw is None and not chips_listed:
        return None
    base = unique_paths([record.driver_install_path, *install_paths(r)])[0]
    not_visible = list(NOT_VISIBLE_WITHOUT_VERSION_INFO)
    if raw is None:
        not_visible.append("the driver's version (npu-smi printed no title row)")
    r.notes.append(f"no {base}/driver/version.info, but npu-smi answers: the driver is "
                   "present (mounted from the host?); "
                   + (f"its version {raw} is npu-smi's; " if raw else "")
                   + "not visible: " + "; ".join(not_visible))
    return DriverFacts(version=r.version(raw, "npu-smi info driver Version") if raw else None,
                       version_raw=raw, install_path=base, complete=False, source="npu-smi",
                       not_visible=not_visible)


def read_firmware(r: CaptureReader, record: AscendInstallRecord) -> FirmwareFacts | None:
    """The first firmware/version.info under the record's path or an install path."""
    found = _version_info(r, "firmware", record.firmware_install_path)
    if found is None:
        return None
    base, info = found
    return FirmwareFacts(
        version=r.version(info.version, f"{base}/firmware/version.info Version"),
        version_raw=info.version, package_version=info.package_version,
        install_path=base, compatible_driver=info.compatible_driver)


# Parsers by the folder name of their samples under tests/data/.
PARSERS: dict[str, Callable[[Any], Any]] = {
    "version_info": parse_version_info,
    "ascend_install_info": parse_ascend_install_info,
    "version_ranges": parse_version_ranges,
}
