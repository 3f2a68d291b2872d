"""The vendor's own statement whether an installed driver and CANN work together.

Both sides carry it (https://github.com/vllm-project/vllm-ascend/issues/451,
https://github.com/vllm-project/vllm-ascend/issues/1047): CANN's install info lists the driver inner
codes it runs on (`compatible_version=[V100R001C15],[V100R001C18],...`, ranges allowed) and
the driver's version.info has its own code (`Innerversion=V100R001C15SPC012B220`) and lists
the CANN codes it runs (`compatible_version=[V100R001C13],...`). Either list naming the other
side's code is the vendor saying the pair works: a newer CANN knows which older drivers it
runs on, a newer driver which older CANN. Where neither can be read the statement is absent
and the matrix decides alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from ascend_env.core.versions import InnerVersion, inner_listed
from ascend_env.facts.model import CannFacts, DriverFacts, VersionRange


@dataclass(frozen=True)
class VendorStatement:
    """What the two install records say; `compatible` None = they say nothing usable."""

    compatible: bool | None
    evidence: str


def _pairs(ranges: list[VersionRange]) -> list[tuple[str, str]]:
    return [(r.low, r.high) for r in ranges]


def _listed(ranges: list[VersionRange]) -> str:
    return ",".join(f"[{r.low}]" if r.low == r.high else f"[{r.low},{r.high}]" for r in ranges)


def vendor_statement(driver: DriverFacts, cann: CannFacts, *, known_code: str | None = None,
                     known_from: str = "") -> VendorStatement:
    """The vendor's verdict on this driver with this CANN, from the two install records.

    `known_code` is the driver's inner code as the matrix knows it for the driver's release
    (`known_from` says whence), used only where driver/version.info is not visible (a
    container shows npu-smi's version alone): CANN's own list still makes the verdict.
    """
    driver_code = InnerVersion.parse(driver.inner_version or "")
    whence = ""
    if driver_code is None and known_code:
        driver_code = InnerVersion.parse(known_code)
        whence = f" ({known_from})" if known_from else ""
    cann_code = InnerVersion.parse(cann.inner_version or "")
    said: list[str] = []
    verdicts: list[bool] = []
    if driver_code is not None and cann.compatible_driver:
        listed = inner_listed(driver_code, _pairs(cann.compatible_driver))
        if listed is not None:
            verdicts.append(listed)
            said.append(f"CANN lists driver codes {_listed(cann.compatible_driver)}, the "
                        f"driver is {driver_code}{whence}")
    if cann_code is not None and driver.compatible_cann:
        listed = inner_listed(cann_code, _pairs(driver.compatible_cann))
        if listed is not None:
            verdicts.append(listed)
            said.append(f"the driver lists CANN codes {_listed(driver.compatible_cann)}, "
                        f"CANN is {cann_code}")
    if not verdicts:
        return VendorStatement(None, "no compatibility lists to compare (needs the driver's "
                                     "Innerversion and CANN's compatible_version, or the "
                                     "other way round)")
    return VendorStatement(any(verdicts), "; ".join(said))
