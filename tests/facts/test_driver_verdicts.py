"""Driver verdicts on captures built from real outputs (one HDK identity, inner release codes).

Each capture is the text real hosts printed (tests/data/*, tests/facts/real_versions/, each
with its .source); where a test edits a real text to make a case no public host shows, the
edit is named beside it. The doctor's own suite runs on them, as `doctor --from` would.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ascend_env.core.resources import shipped_dir
from ascend_env.doctor.report import CheckResult
from ascend_env.doctor.suite import DoctorContext, DoctorPlugin, Target, run_suite
from ascend_env.facts import system
from ascend_env.facts.assemble import facts_from_capture
from ascend_env.facts.capture import Capture, PathInfo
from ascend_env.remote import probe
from ascend_env.spec.envspec import EnvSpec, build_spec
from tests.facts.captures import BASE, ok, sample
from tests.facts.real_corpus import TOOLKIT_INFO as TOOLKIT_FILE
from tests.facts.real_corpus import RealHost, capture_of, real_hosts

REAL = Path(__file__).resolve().parent / "real_versions"
TOOLKIT_INFO = f"{BASE}/ascend-toolkit/latest/aarch64-linux/ascend_toolkit_install.info"


def real(name: str) -> str:
    assert (REAL / f"{name}.source").read_text().strip(), "a sample names its source"
    return (REAL / f"{name}.txt").read_text()


def capture(*, npu_smi: str | None = None, driver_info: str | None = None,
            toolkit: str | None = None) -> Capture:
    """A host (or container) showing only the given texts."""
    files: dict[str, str] = {}
    paths: dict[str, PathInfo] = {}
    if driver_info is not None:
        files[f"{BASE}/driver/version.info"] = driver_info
        paths[f"{BASE}/driver/tools/upgrade-tool"] = PathInfo(type="file", mode="0755")
    if toolkit is not None:
        files[TOOLKIT_INFO] = toolkit
        paths[f"{BASE}/ascend-toolkit/latest"] = PathInfo(
            type="link", target="8.x", resolved=f"{BASE}/ascend-toolkit/latest")
    commands = {system.UNAME_M: ok("aarch64\n")}
    if npu_smi is not None:
        commands[probe.NPU_SMI_INFO] = ok(npu_smi)
    return Capture(host="h", options={"install_path": BASE, "install_paths": [BASE]},
                   files=files, paths=paths, commands=commands)


def verdicts(cap: Capture, *only: str, spec: EnvSpec | None = None) -> dict[str, CheckResult]:
    target = Target(name="h", facts=facts_from_capture(cap), source="capture")
    plugin = DoctorPlugin(DoctorContext(targets=[target], spec=spec, only=only))
    run_suite(shipped_dir("checks"), plugin)
    return {row.id: row for row in plugin.results["h"]}


def spec_for(driver: str, cann: str) -> EnvSpec:
    return build_spec({"extends": "910b", "driver": {"version": driver},
                       "cann": {"version": cann, "packages": ["toolkit"]},
                       "frameworks": {"torch": None, "mindspore": None}}, "test")


# --- false failure 1: CANN 8.1.RC1 on HDK 24.1.0 ----------------------------------------------

@pytest.mark.parametrize("npu_smi", [
    real("npu-smi-910b1-24.1.0"),                 # vllm-ascend #3403, 910B1
    sample("npu_smi_info", "910prob-24.1.0"),     # vllm-ascend #1047, 910ProB
], ids=["910b1-3403", "910prob-1047"])
def test_cann_8_1_rc1_on_hdk_24_1_0_is_supported(npu_smi: str) -> None:
    # What those posts show: npu-smi and the toolkit's install info (vllm-ascend #1047), no
    # driver/version.info: the matrix decides, and it no longer wants 25.0.RC1.
    rows = verdicts(capture(npu_smi=npu_smi,
                            toolkit=sample("install_info", "toolkit-8.1.RC1-aarch64")),
                    "driver.supports-cann")
    row = rows["driver.supports-cann"]
    assert row.status == "pass", row
    assert row.observed is not None and "driver 24.1.0 with CANN 8.1.RC1" in row.observed
    assert row.expected == ">= 24.1.RC1"


# --- the vendor's statement decides ----------------------------------------------------------

def test_vendor_lists_pair_them_and_the_matrix_agrees() -> None:
    # Driver 24.1.rc1 is V100R001C15 (MC-LOGS); CANN 8.1.RC1 lists C15 (vllm-ascend #1047).
    row = verdicts(capture(driver_info=sample("version_info", "driver-24.1.rc1-excerpt"),
                           toolkit=sample("install_info", "toolkit-8.1.RC1-aarch64")),
                   "driver.supports-cann")["driver.supports-cann"]
    assert row.status == "pass", row
    assert row.observed is not None
    assert "CANN lists driver codes [V100R001C15],[V100R001C18]" in row.observed
    assert "the driver is V100R001C15" in row.observed
    assert "disagrees" not in row.observed


def test_vendor_lists_decide_where_the_matrix_disagrees_and_the_report_says_so() -> None:
    # Driver 24.1.rc3 is V100R001C19 (vllm-ascend #451); CANN 8.0.0 lists C19 (#198). The
    # matrix pairs 8.0.0 with HDK 24.1.0 only, so on its own it would fail this host.
    row = verdicts(capture(driver_info=sample("version_info", "driver-24.1.rc3"),
                           toolkit=sample("install_info", "toolkit-8.0.0-aarch64")),
                   "driver.supports-cann")["driver.supports-cann"]
    assert row.status == "pass", row
    assert row.observed is not None
    # The paired HDK (24.1.0) is no stated minimum and 24.1.rc3 is of its line: nothing in
    # the matrix refuses the pair, so there is no disagreement to report.
    assert "the vendor's lists pair them" in row.observed and "disagree" not in row.observed


def test_neither_list_naming_the_other_fails_even_where_the_matrix_accepts() -> None:
    # Edited: driver 24.1.rc1's version.info with its Innerversion set to V100R001C13 (CANN
    # 7.0.T10's code, MC-FIX), which CANN 8.1.RC1 does not list; its own list (C30, C13, C15,
    # C17) does not name 8.1.RC1's C21 either. The matrix accepts 24.1.rc1 for 8.1.RC1.
    driver = sample("version_info", "driver-24.1.rc1-excerpt").replace(
        "Innerversion=V100R001C15SPC006B220", "Innerversion=V100R001C13")
    row = verdicts(capture(driver_info=driver,
                           toolkit=sample("install_info", "toolkit-8.1.RC1-aarch64")),
                   "driver.supports-cann")["driver.supports-cann"]
    assert row.status == "fail", row
    assert "not a pair by the vendor's own compatibility lists" in row.message
    assert row.observed is not None and "matrix would accept it" in row.observed
    assert "CANN is V100R001C21" in row.observed


def test_npu_smi_only_the_matrix_code_meets_cann_s_list_and_a_disagreement_warns() -> None:
    # 910B3 host on 23.0.7 (tests/data/npu_smi_info) with CANN 8.1.RC1, npu-smi only. The
    # matrix knows 23.0.7's code (C15, its version.info in MC-FIX) and 8.1.RC1 lists C15: the
    # vendor pairs them; the matrix's hdk_min 24.1.RC1 says otherwise, so both are named.
    row = verdicts(capture(npu_smi=sample("npu_smi_info", "910b3-23.0.7"),
                           toolkit=sample("install_info", "toolkit-8.1.RC1-aarch64")),
                   "driver.supports-cann")["driver.supports-cann"]
    assert row.status == "warn", row
    assert "the sources disagree" in row.message and "needs HDK >= 24.1.RC1" in row.message


# --- false failure 2: spec 25.0.RC1, host 25.0.rc1.1 -----------------------------------------

def test_spec_release_name_matches_the_file_version_npu_smi_prints() -> None:
    rows = verdicts(capture(npu_smi=real("npu-smi-910b2c-25.0.rc1.1")),
                    "driver.version", spec=spec_for("25.0.RC1", "8.1.RC1"))
    assert rows["driver.version"].status == "pass", rows["driver.version"]


def test_spec_release_name_matches_version_info_and_npu_smi_agrees() -> None:
    # Edited: driver 24.1.rc3's version.info (vllm-ascend #451) with Version and
    # package_version set to 25.0.rc1.1, what HDK 25.0.RC1's files carry (ascend-deployer
    # 26.0.0, NPU_25.0.RC1.json).
    driver = sample("version_info", "driver-24.1.rc3").replace("24.1.rc3", "25.0.rc1.1")
    rows = verdicts(capture(npu_smi=real("npu-smi-910b2c-25.0.rc1.1"), driver_info=driver),
                    "driver.version", "driver.running", spec=spec_for("25.0.RC1", "8.1.RC1"))
    assert rows["driver.version"].status == "pass", rows["driver.version"]
    assert rows["driver.running"].status == "pass", rows["driver.running"]


def test_another_release_still_fails_the_spec() -> None:
    rows = verdicts(capture(npu_smi=real("npu-smi-910b1-24.1.0")), "driver.version",
                    spec=spec_for("25.0.RC1", "8.1.RC1"))
    assert rows["driver.version"].status == "fail"
    assert "driver 24.1.0 is installed, the spec wants 25.0.RC1" in rows["driver.version"].message


# --- containers: npu-smi answers, driver/version.info is not mounted ------------------------

def test_container_without_version_info_has_a_driver_and_runs_the_other_checks() -> None:
    cap = capture(npu_smi=sample("npu_smi_info", "910b3-23.0.7"),
                  toolkit=sample("install_info", "toolkit-8.0.0-aarch64"))
    facts = facts_from_capture(cap)
    assert facts.driver is not None and facts.driver.source == "npu-smi"
    assert facts.driver.version_raw == "23.0.7"
    assert any("not visible" in note and "version.info" in note for note in facts.notes)
    rows = verdicts(cap)
    installed = rows["driver.installed"]
    assert installed.status == "pass", installed
    assert installed.observed is not None
    assert installed.observed.startswith("driver 23.0.7 from npu-smi (present, mounted from the "
                                         "host?); not visible: driver/version.info")
    assert "driver/tools/upgrade-tool" in installed.observed
    complete = rows["driver.complete"]
    assert complete.status == "skip" and "upgrade-tool" in complete.message
    assert rows["driver.running"].status == "skip"
    assert rows["firmware.installed"].status == "skip"
    assert "not visible" in rows["firmware.installed"].message
    # The CANN checks run (the suite used to skip them all as "driver not installed").
    assert rows["cann.installed"].status == "pass", rows["cann.installed"]
    # No version.info, but the matrix knows 23.0.7's code (C15) and 8.0.0's list names it.
    assert rows["driver.supports-cann"].status == "pass", rows["driver.supports-cann"]
    assert not [r for r in rows.values() if "driver is not installed" in r.message]


def test_no_npu_smi_and_no_version_info_is_still_no_driver() -> None:
    facts = facts_from_capture(capture(toolkit=sample("install_info", "toolkit-8.1.RC1-aarch64")))
    assert facts.driver is None


# --- every real host of the corpus, as the container-like capture it is ---------------------

CORPUS = real_hosts()


@pytest.mark.parametrize("host", CORPUS, ids=[h.id for h in CORPUS])
def test_corpus_hosts_have_their_driver_from_npu_smi(host: RealHost) -> None:
    # The corpus shows npu-smi (and some the toolkit's install info) but no version.info.
    rows = verdicts(capture_of(host), "driver", "cann.installed")
    installed = rows["driver.installed"]
    printed = host.expected["npu_smi"]["driver_version"]
    if printed is None:
        # A quote cut above the title row: npu-smi listed chips, so the driver answered (it
        # cannot without one); its version is not known, and not guessed.
        assert installed.status == "pass", installed
        assert installed.observed is not None
        assert installed.observed.startswith("driver (version not shown) from npu-smi")
        return
    assert installed.status == "pass", installed
    assert installed.observed is not None
    assert installed.observed.startswith(f"driver {printed} from npu-smi")
    assert rows["driver.complete"].status == "skip"
    if host.text(TOOLKIT_FILE) is None:
        return
    # With the toolkit quoted, the CANN checks run and the pairing is judged, not skipped.
    assert rows["cann.installed"].status == "pass", rows["cann.installed"]
    assert rows["driver.supports-cann"].status in ("pass", "fail", "warn")


def test_corpus_cann_8_1_rc1_on_24_1_0_passes() -> None:
    host = next(h for h in CORPUS if h.id == "910prob-24.1.0")  # vllm-ascend #1047
    row = verdicts(capture_of(host), "driver.supports-cann")["driver.supports-cann"]
    assert row.status == "pass", row
