"""Driver: installed, complete, loaded, answering, the spec's version, new enough for CANN."""

from __future__ import annotations

import pytest

from ascend_env.core.versions import same_release, try_parse
from ascend_env.doctor.findings import fail, failure, observe, warn
from ascend_env.facts.model import CannFacts, DriverFacts, Facts
from ascend_env.facts.vendor_compat import vendor_statement
from ascend_env.spec.compat import ADD_RELEASE
from ascend_env.spec.envspec import EnvSpec
from ascend_env.spec.matrix import Matrix

pytestmark = [pytest.mark.category("driver"), pytest.mark.level(1)]

INSTALL_DRIVER = ("ascend-env install --profile <profile> --components driver,firmware "
                  "(or Ascend-hdk-<chip>-npu-driver_<ver>_linux-<arch>.run --full "
                  "--install-for-all, then reboot)")


def test_installed(facts: Facts) -> None:
    """driver.installed: the NPU driver is installed."""
    if facts.driver is None:
        record = facts.install_record
        where = record.driver_install_path if record and record.driver_install_path else \
            "/usr/local/Ascend"
        fail(message="the NPU driver is not installed",
             observed=f"no {where}/driver/version.info",
             expected="driver/version.info of an installed HDK driver",
             why="nothing can open the NPUs without it: npu-smi, CANN and every framework "
                 "need the driver",
             manual=INSTALL_DRIVER)
    if facts.driver.source == "npu-smi":
        observe(f"driver {facts.driver.version_raw or '(version not shown)'} from npu-smi "
                "(present, mounted from the host?); not visible: "
                + "; ".join(facts.driver.not_visible))
    else:
        observe(f"driver {facts.driver.version_raw} in {facts.driver.install_path}/driver")


def test_complete(driver: DriverFacts) -> None:
    """driver.complete: the driver install is complete (its tools are there)."""
    if driver.source == "npu-smi":
        pytest.skip("not visible here: " + "; ".join(driver.not_visible))
    assert driver.complete, failure(
        message="the driver install is incomplete: driver/tools/upgrade-tool is missing",
        observed=f"{driver.install_path}/driver/version.info without tools/upgrade-tool",
        expected="version.info and tools/upgrade-tool (ascend-deployer's completeness test)",
        why="an interrupted or partial install leaves libraries or tools missing; upgrades "
            "and firmware installs fail on it",
        manual="reinstall the driver: " + INSTALL_DRIVER)
    observe("tools/upgrade-tool present")


def test_loaded(facts: Facts, driver: DriverFacts) -> None:
    """driver.loaded: the driver's kernel modules are loaded."""
    del driver
    if facts.modules.driver_loaded is None:
        pytest.skip("the loaded kernel modules could not be read")
    assert facts.modules.driver_loaded, failure(
        message="no Ascend kernel module is loaded (drv_*, ascend*)",
        observed=f"modules from {facts.modules.source}: none of the driver's",
        expected="drv_pcie_host, drv_devmng and the other driver modules",
        why="the device nodes and npu-smi only work with the modules loaded; a reboot after "
            "the install is usually what is missing",
        manual="reboot; if they still do not load: dmesg | grep -i -E 'davinci|drv_'; "
               "rebuild with the kernel headers installed (dkms)")
    observe(", ".join(facts.modules.loaded[:4]) + ("..." if len(facts.modules.loaded) > 4
                                                   else ""))


def test_npu_smi(facts: Facts, driver: DriverFacts) -> None:
    """driver.npu-smi: npu-smi runs and answers."""
    del driver
    smi = facts.npu_smi
    assert smi.available, failure(
        message="npu-smi is not installed (it comes with the driver)",
        observed="npu-smi: command not found", expected="/usr/local/bin/npu-smi",
        why="npu-smi is how the driver reports devices, health and versions",
        manual="reinstall the driver: " + INSTALL_DRIVER)
    if smi.error is not None:
        hint = (" (ret -8001: the driver needs an upgrade or a reboot)"
                if "-8001" in smi.error else "")
        fail(message=f"npu-smi fails: {smi.error}{hint}",
             observed=f"npu-smi info: exit {smi.rc}: {smi.error}",
             expected="npu-smi info prints the device table",
             why="when npu-smi cannot talk to the driver, no job can either",
             manual="reboot after a driver install; check dmesg; upgrade the driver with "
                    "--upgrade if the error persists")
    if smi.tool_version is None and not facts.devices:
        shown = "; ".join(smi.unparsed[:3]) or "nothing"
        warn(message="npu-smi answered, but its device table could not be read",
             observed=f"npu-smi info printed: {shown[:300]}",
             expected="npu-smi info's table (version line, one row per NPU)",
             why="devices, health and versions are read from that table; unread, none of "
                 "them can be judged",
             manual="npu-smi info  # compare with the formats in the npu-smi manual; attach "
                    "the output to a report")
    observe(f"npu-smi {smi.tool_version}")


def test_running_version(facts: Facts, driver: DriverFacts, matrix: Matrix) -> None:
    """driver.running: the driver npu-smi reports is the installed one (no reboot pending)."""
    if driver.source == "npu-smi":
        pytest.skip("driver/version.info is not visible (driver mounted from the host): "
                    "npu-smi's version is the only one")
    running = facts.npu_smi.driver_version
    parsed = try_parse(running) if running else None
    if running is None or driver.version is None:
        pytest.skip("npu-smi reports no driver version")
    installed = driver.version_raw or ""
    # npu-smi prints the file version with a build (25.0.rc1.b033) or as the release: one
    # identity; a patch npu-smi prints beyond version.info's (24.1.rc3.7) is the same install.
    same = (parsed is not None and same_release(running, installed, matrix.hdk())) or \
        running.lower().startswith(installed.lower() + ".")
    if not same:
        warn(message=f"npu-smi reports driver {running}, {installed} is installed: a reboot "
                     "is pending",
             observed=f"running {running}", expected=f"installed {installed}",
             why="until the reboot the old driver runs, and CANN may not match it",
             manual="reboot the host")
    observe(f"driver {running} running")


def test_version(driver: DriverFacts, with_spec: EnvSpec, matrix: Matrix) -> None:
    """driver.version: the installed driver is the spec's HDK release."""
    wanted = with_spec.driver.version
    if driver.version is None and driver.source == "npu-smi":
        pytest.skip("npu-smi's driver version is in no known form (see notes) and "
                    "driver/version.info is not visible")
    # One HDK identity: the spec's 25.0.RC1 is the 25.0.rc1.1 its files install.
    assert driver.version is not None and same_release(driver.version.raw, wanted.raw,
                                                       matrix.hdk()), \
        failure(message=f"driver {driver.version_raw} is installed, the spec wants "
                        f"{wanted.raw}",
                observed=f"driver {driver.version_raw}",
                expected=f"driver {wanted.raw} (driver.version of spec {with_spec.name})",
                why="the spec pins the driver that CANN and firmware were validated with",
                manual=f"ascend-env install --spec <spec> --components driver,firmware "
                       f"(HDK {wanted.raw})")
    observe(f"driver {driver.version_raw}", f"driver {wanted.raw}")


def test_supports_cann(driver: DriverFacts, cann: CannFacts, matrix: Matrix) -> None:
    """driver.supports-cann: the driver runs the installed CANN (vendor lists, else matrix)."""
    if driver.version is None or cann.version is None:
        pytest.skip("a version could not be read (see notes)")
    hdk = matrix.hdk()
    pair = f"driver {driver.version_raw}, CANN {cann.version_raw}"
    row = matrix.cann_row(cann.version)
    sources = matrix.cite(row.sources) if row else ""
    known = matrix.hdk_release(driver.version)
    # Where driver/version.info is not visible (npu-smi only), the driver's inner code is the
    # one the matrix knows for its release; CANN's own list still decides.
    vendor = vendor_statement(
        driver, cann, known_code=known.inner if known else None,
        known_from=(f"the code of HDK {known.release.raw} in ascend-env's matrix, "
                    f"{matrix.cite(known.sources)}") if known else "")
    refusal = row.refuses_hdk(driver.version, hdk) if row else None
    unknown_cann = (f"CANN {cann.version_raw} is not a release ascend-env knows (nearest: "
                    f"{', '.join(matrix.nearest_cann(cann.version))}). {ADD_RELEASE}")
    if vendor.compatible is True:
        # The vendor's own records decide; a matrix that says otherwise is named beside them.
        if refusal is not None:
            warn(message=f"the sources disagree on {pair}: the vendor's compatible_version "
                         f"lists pair them, ascend-env's matrix says {refusal}; the vendor's "
                         "lists are followed",
                 observed=f"{vendor.evidence}; matrix: {refusal} ({sources})",
                 expected="the vendor's lists and the matrix agree",
                 why="the host's own install records are the vendor's statement for this "
                     "exact build; the matrix is what ascend-env read in documents",
                 manual="ascend-env matrix --cann " + (cann.version_raw or ""))
        if row is None:
            warn(message=f"{unknown_cann}; the vendor's lists pair it with driver "
                         f"{driver.version_raw}",
                 observed=f"{pair}; {vendor.evidence}",
                 expected="a CANN release from `ascend-env matrix`",
                 why="an unknown release's other pairings (frameworks, firmware) cannot be "
                     "checked", manual="ascend-env matrix")
        paired = (f"; the matrix pairs them too ({sources})" if row.accepts_hdk(
            driver.version, hdk) else f"; the matrix has no pairing of its own for them "
            f"({sources})")
        observe(f"{pair}: the vendor's lists pair them ({vendor.evidence}){paired}",
                "the vendor's compatible_version lists")
        return
    if vendor.compatible is False:
        against = (f"; ascend-env's matrix would accept it ({sources})"
                   if row is not None and refusal is None and row.accepts_hdk(driver.version, hdk)
                   else "")
        fail(message=f"CANN {cann.version_raw} and driver {driver.version_raw} are not a "
                     "pair by the vendor's own compatibility lists",
             observed=vendor.evidence + against,
             expected="CANN's compatible_version names the driver's Innerversion, or the "
                      "driver's names CANN's",
             why="CANN calls driver interfaces the driver must have; a pair neither side "
                 "lists fails at device initialisation",
             manual="upgrade driver and firmware to the HDK of this CANN (firmware "
                    "first): ascend-env install --components driver,firmware; "
                    "ascend-env matrix --cann " + (cann.version_raw or ""))
    if row is None:
        warn(message=f"{unknown_cann}; the driver pairing cannot be checked",
             observed=f"{pair}; {vendor.evidence}",
             expected="a CANN release from `ascend-env matrix`",
             why="an unknown CANN may need a newer driver than this host has",
             manual="ascend-env matrix")
    assert row is not None
    paired = row.hdk.raw if row.hdk else "not published"
    if refusal is not None:
        fail(message=f"{pair}: {refusal}",
             observed=pair, expected=f"HDK {paired} or lines "
                                     f"{', '.join(row.hdk_compatible) or '-'} ({sources})",
             why="CANN calls driver interfaces that older drivers lack; jobs fail at start-up "
                 "with device init errors",
             manual=f"upgrade driver and firmware to HDK {paired} (firmware first): "
                    "ascend-env install --components driver,firmware")
    if known is None and not any(same_release(driver.version.raw, v.raw, hdk)
                                 for v in matrix.known_hdk()):
        warn(message=f"driver {driver.version_raw} is not an HDK release ascend-env knows "
                     f"(nearest: {', '.join(matrix.nearest_hdk(driver.version))}); "
                     f"{ADD_RELEASE}",
             observed=f"{pair}; {vendor.evidence}", expected="an HDK from `ascend-env matrix`",
             why="its pairing with CANN cannot be checked", manual="ascend-env matrix")
    if not row.accepts_hdk(driver.version, hdk):
        warn(message=f"driver {driver.version_raw} is not a sourced pairing for CANN "
                     f"{cann.version_raw} (HDK: {paired})",
             observed=f"driver {driver.version_raw}; {vendor.evidence}",
             expected=f"HDK {paired} or lines {', '.join(row.hdk_compatible) or '-'} "
                      f"({sources})",
             why="untested pairings are where subtle device errors come from",
             manual="ascend-env matrix --cann " + (cann.version_raw or ""))
    minimum = row.minimum_hdk()
    observe(f"driver {driver.version_raw} with CANN {cann.version_raw} (matrix; "
            f"{vendor.evidence})", f">= {minimum.raw}" if minimum else f"HDK {paired}")
