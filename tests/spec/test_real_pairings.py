"""Real hosts' pairings (tests/data/real/, each with its SOURCE): the vendor's word decides.

Each host below printed its npu-smi table, its toolkit's install info and its pip versions in a
public thread, and was serving models on that stack. The doctor must not fail what the vendor
itself pairs: CANN's own compatible_version list naming the driver's code, an official image
shipping torch_npu with that CANN.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import re
from pathlib import Path
from types import ModuleType

import pytest

from ascend_env.core.versions import parse
from ascend_env.doctor.findings import CheckFailure, CheckWarning
from ascend_env.facts.assemble import facts_from_capture
from ascend_env.facts.capture import Capture, CommandResult, save_capture
from ascend_env.facts.model import CannFacts, Facts, FirmwareFacts
from ascend_env.remote import probe
from ascend_env.spec.envspec import EnvSpec, build_spec
from ascend_env.spec.matrix import Matrix, load_matrix
from tests.cli_invoke import invoke
from tests.facts.real_corpus import REAL, RealHost, capture_of

CHECKS = Path(__file__).resolve().parents[2] / "checks"
PIP_LINE = re.compile(r"^\[pip3\] (\S+)==(\S+)$", re.MULTILINE)


def host(name: str) -> RealHost:
    return RealHost(id=name, folder=REAL / name)


def with_pythons(capture: Capture, pip_lines: str) -> Capture:
    """The capture plus the framework Python's distributions, as the probe records them, from
    the `[pip3] name==version` lines collect_env printed (verbatim in pip-versions.txt)."""
    dists = [[m[1], m[2]] for m in PIP_LINE.finditer(pip_lines)]
    assert dists, "no [pip3] lines"
    answer = json.dumps({"executable": "/usr/bin/python3", "version": "3.11",
                         "prefix": "/usr", "distributions": dists})
    commands = {**capture.commands, probe.FRAMEWORK_PYTHON: CommandResult(
        argv=["python3", "-c", "distributions"], rc=0, stdout=answer)}
    return capture.model_copy(update={"commands": commands})


def real_capture(name: str) -> Capture:
    sample = host(name)
    return with_pythons(capture_of(sample), sample.text("pip-versions.txt") or "")


def doctor_from(capture: Capture, tmp_path: Path) -> dict[str, dict[str, str]]:
    path = save_capture(tmp_path / "capture.json", capture)
    result = invoke("doctor", "--from", str(path), "--only", "driver", "--only", "frameworks",
                    "--only", "cann", "--json")
    assert result.code in (0, 1), result.err
    report = json.loads(result.out)
    return {c["id"]: c for c in report["checks"]}


@pytest.fixture(scope="module")
def checks(pytestconfig: pytest.Config) -> dict[str, ModuleType]:
    """checks/test_{driver,firmware,frameworks}.py, called directly with chosen facts."""
    for marker in ("category(name): doctor check category", "level(n): doctor check level"):
        pytestconfig.addinivalue_line("markers", marker)
    modules = {}
    for name in ("driver", "firmware", "frameworks"):
        spec = importlib.util.spec_from_file_location(f"real_pairings_{name}",
                                                      CHECKS / f"test_{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        modules[name] = module
    return modules


def verdict(call: object, *args: object) -> str:
    try:
        call(*args)  # type: ignore[operator]
    except (CheckFailure, AssertionError):  # a check's `assert ..., failure(...)`
        return "fail"
    except CheckWarning:
        return "warn"
    except pytest.skip.Exception:
        return "skip"
    return "pass"


# -- driver 23.0.6 with CANN 8.0.0: CANN's own list names the 23.0 line's code -------------------

def test_cann_listing_the_drivers_code_passes_driver_supports_cann(tmp_path: Path) -> None:
    # vllm-ascend #843: npu-smi 23.0.6 (no driver/version.info in the post), CANN 8.0.0 whose
    # install info lists [V100R001C15],... ; C15 is the 23.0 line's code (driver 23.0.7's
    # version.info, MC-FIX). The matrix pairs 8.0.0 with HDK 24.1.0 only: the vendor decides.
    found = doctor_from(real_capture("910b4-23.0.6-cann8.0.0"), tmp_path)
    check = found["driver.supports-cann"]
    assert check["status"] == "pass", check
    assert "V100R001C15" in check["observed"] and "CANN lists driver codes" in check["observed"]
    assert "HDK 23.0.6" in check["observed"]  # whence the driver's code came


def test_a_cann_list_without_the_drivers_code_fails(tmp_path: Path) -> None:
    """The same host with the C15 entry taken out of CANN's list: now the vendor's list says
    no, and that is a failure (the pass above is the list's doing, not a default)."""
    capture = real_capture("910b4-23.0.6-cann8.0.0")
    files = {path: (text.replace("[V100R001C15],", "") if path.endswith(
        "ascend_toolkit_install.info") else text) for path, text in capture.files.items()}
    found = doctor_from(capture.model_copy(update={"files": files}), tmp_path)
    assert found["driver.supports-cann"]["status"] == "fail", found["driver.supports-cann"]


def test_daily_torch_npu_build_of_an_official_image_passes(tmp_path: Path) -> None:
    # torch-npu 2.5.1.dev20250320 on CANN 8.0.0: vllm-ascend v0.7.3rc2/v0.8.4rc1 install that
    # daily build on quay.io/ascend/cann:8.0.0 (pta_install.sh).
    found = doctor_from(real_capture("910b4-23.0.6-cann8.0.0"), tmp_path)
    check = found["frameworks.torch-npu-cann"]
    assert check["status"] == "pass", check
    assert "vllm-ascend" in check["observed"]
    assert found["frameworks.torch-pair"]["status"] == "pass", found["frameworks.torch-pair"]


# -- CANN 8.3.RC2 with torch_npu -----------------------------------------------------------------

def test_cann_8_3_rc2_with_torch_npu_2_7_1_on_a_real_a3_host(tmp_path: Path) -> None:
    # vllm-ascend #4266: A3, npu-smi 25.3.rc1, CANN 8.3.RC2, torch_npu 2.7.1 (the pairing of
    # the vllm-ascend v0.11.0 image). No source publishes 8.3.RC2's HDK: a warning at most.
    found = doctor_from(real_capture("a3-25.3.rc1-cann8.3.rc2"), tmp_path)
    assert found["frameworks.torch-npu-cann"]["status"] == "pass", found
    assert found["driver.supports-cann"]["status"] in ("pass", "warn"), found
    assert found["cann.installed"]["status"] == "pass"


def test_cann_8_3_rc2_with_torch_npu_2_8_0_passes_or_warns(checks: dict[str, ModuleType]
                                                           ) -> None:
    # vllm-ascend #4621's host runs CANN 8.3.RC2 (its install info); torch_npu 2.8.0 with torch
    # 2.8.0 is the pairing of the official vllm-ascend v0.12.0rc1 and v0.13.0rc1 images.
    sample = host("910b2c-25.0.rc1.1")
    facts = facts_from_capture(with_pythons(
        capture_of(sample), "[pip3] torch==2.8.0\n[pip3] torch_npu==2.8.0\n"))
    assert facts.cann is not None and str(facts.cann.version) == "8.3.RC2"
    matrix = load_matrix()
    module = checks["frameworks"]
    assert verdict(module.test_torch_npu_cann, facts, facts.cann, matrix) == "pass"
    # Without the images' word it is still no failure: PT-COMPAT builds 2.8.0 for 8.3.RC1, a
    # release of the same 8.3 line.
    no_images = matrix.model_copy(update={"images": []})
    assert verdict(module.test_torch_npu_cann, facts, facts.cann, no_images) == "warn"
    # A line apart is a failure: 2.8.0 on CANN 8.0.0 is no pairing any source makes.
    assert verdict(module.test_torch_npu_cann, facts, _cann_as(facts, "8.0.0"), matrix) == "fail"


def _cann_as(facts: Facts, version: str) -> CannFacts:
    assert facts.cann is not None
    return dataclasses.replace(facts.cann, version=parse(version), version_raw=version)


# -- one identity: 25.0.RC1 and 25.0.rc1.1, driver and firmware alike -----------------------------

def _spec(driver: str, firmware: str | None = None) -> EnvSpec:
    document: dict[str, object] = {"extends": "910b", "name": "t", "driver": {"version": driver},
                                   "cann": {"version": "8.1.RC1"}, "frameworks": {
                                       "torch": None, "mindspore": None}}
    if firmware is not None:
        document["firmware"] = {"version": firmware}
    return build_spec(document, "test")


@pytest.mark.parametrize("wanted", ["25.0.RC1", "25.0.rc1", "25.0.rc1.1"])
def test_25_0_rc1_and_25_0_rc1_1_are_one_release_for_firmware_as_for_driver(
        checks: dict[str, ModuleType], wanted: str) -> None:
    # vllm-ascend #4621's host prints npu-smi 25.0.rc1.1 (HDK 25.0.RC1, files 25.0.rc1.1): its
    # driver is the spec's 25.0.RC1, and so is firmware whose package_version is 25.0.rc1.1
    # (firmware 7.7.0.1.231 ships in "Ascend HDK 25.0.RC1.1", ADOCS).
    facts = facts_from_capture(capture_of(host("910b2c-25.0.rc1.1")))
    assert facts.driver is not None and facts.driver.version_raw == "25.0.rc1.1"
    matrix = load_matrix()
    spec = _spec(wanted)
    assert verdict(checks["driver"].test_version, facts.driver, spec, matrix) == "pass"
    facts.firmware = FirmwareFacts(version_raw="7.7.0.1.231", package_version="25.0.rc1.1",
                                   install_path="/usr/local/Ascend")
    assert verdict(checks["firmware"].test_version, facts, facts.driver, spec, matrix) == "pass"


def test_another_hdk_patch_is_another_release_for_firmware(checks: dict[str, ModuleType]) -> None:
    facts = facts_from_capture(capture_of(host("910b2c-25.0.rc1.1")))
    assert facts.driver is not None
    facts.firmware = FirmwareFacts(version_raw="7.7.0.1.231", package_version="25.2.0",
                                   install_path="/usr/local/Ascend")
    assert verdict(checks["firmware"].test_version, facts, facts.driver, _spec("25.0.RC1"),
                   load_matrix()) == "fail"


def test_matrix_keeps_the_hosts_releases() -> None:
    """Every version these real hosts print is a release the matrix knows."""
    matrix: Matrix = load_matrix()
    for name in ("910b4-23.0.6-cann8.0.0", "a3-25.3.rc1-cann8.3.rc2", "910b2c-25.0.rc1.1"):
        facts = facts_from_capture(capture_of(host(name)))
        assert facts.driver is not None and facts.driver.version is not None
        assert matrix.hdk_release(facts.driver.version) is not None, name
        assert facts.cann is not None and facts.cann.version is not None
        assert matrix.cann_known(facts.cann.version), name
