"""One HDK identity in the data and every comparison (and the matrix rows it needs)."""

from __future__ import annotations

import json

import pytest

from ascend_env.ansible.variables import Targets
from ascend_env.core.versions import parse
from ascend_env.image.context import _driver_version
from ascend_env.install.actions import HostReading, Installed, decide
from ascend_env.spec.catalogue import load_catalogue
from ascend_env.spec.compat import check_spec
from ascend_env.spec.envspec import EnvSpec, build_spec
from ascend_env.spec.matrix import load_matrix
from ascend_env.spec.plan import resolve
from tests.cli_invoke import invoke

MATRIX = load_matrix()


def _spec(driver: str, cann: str = "8.1.RC1") -> EnvSpec:
    return build_spec({"extends": "910b", "driver": {"version": driver},
                       "cann": {"version": cann, "packages": ["toolkit"]},
                       "frameworks": {"torch": None, "mindspore": None}}, "t")


def test_the_matrix_mapping_agrees_with_every_catalogued_hdk_bundle() -> None:
    # ascend-deployer's manifests name each bundle's release and file version: wherever they
    # differ (other than by case), the matrix's hdk_files must say the same.
    hdk = MATRIX.hdk()
    bundles = [e for e in load_catalogue().files.values() if e.kind == "hdk-npu-bundle"]
    assert bundles
    for entry in bundles:
        assert entry.file_version is not None
        release, file_version = parse(entry.version), parse(entry.file_version)
        assert hdk.release_of(file_version) == release, entry.filename
        assert hdk.file_version(release) == entry.file_version, entry.filename


def test_every_hdk_files_row_names_sources_and_is_a_matrix_hdk() -> None:
    known = {row.hdk for row in MATRIX.cann if row.hdk is not None}
    for row in MATRIX.hdk_files:
        assert row.sources and row.release in known


@pytest.mark.parametrize("spelling", ["25.0.RC1", "25.0.rc1", "25.0.rc1.1"])
def test_every_spelling_of_the_release_plans_the_same_file(spelling: str) -> None:
    items = {item.component: item for item in resolve(_spec(spelling)).items}
    assert items["driver"].file == "Ascend-hdk-910b-npu-driver_25.0.rc1.1_linux-aarch64.run"
    assert items["driver"].file_version == "25.0.rc1.1"
    assert items["driver"].sha256 is not None
    assert not [p for p in check_spec(_spec(spelling)) if p.path == "driver.version"]


def test_image_stand_in_version_info_carries_the_file_version() -> None:
    spec = _spec("25.0.RC1")
    plan = resolve(spec)
    assert _driver_version(spec, plan) == "25.0.rc1.1"
    plan.items = [item for item in plan.items if item.component != "driver"]
    assert _driver_version(spec, plan) == "25.0.rc1.1", "from the matrix when no plan item"


def test_cann_8_1_rc1_accepts_hdk_24_1_and_its_minimum_is_not_newer_than_8_2_rc1s() -> None:
    # CANN 8.1.RC1 lists driver code C15 = driver 24.1.rc1 (vllm-ascend #1047, MC-LOGS) and runs
    # on 24.1.0 (vllm-ascend #3403); 8.2.RC1's own minimum is 24.1.RC2 (MindIE 2.1.RC1).
    rc1, rc2 = MATRIX.cann_row(parse("8.1.RC1")), MATRIX.cann_row(parse("8.2.RC1"))
    assert rc1 is not None and rc2 is not None
    minimum, later = rc1.minimum_hdk(), rc2.minimum_hdk()
    assert minimum == parse("24.1.RC1") and later is not None and minimum <= later
    assert rc1.accepts_hdk(parse("24.1.0"), MATRIX.hdk())
    assert not [p for p in check_spec(_spec("24.1.0")) if p.severity == "error"]
    assert [p.path for p in check_spec(_spec("23.0.7")) if p.severity == "error"] == [
        "driver.version"]


def _host(driver: str) -> HostReading:
    return HostReading(installed=Installed(driver=driver, driver_complete=True))


@pytest.mark.parametrize(("installed", "target"), [
    ("25.0.rc1.1", "25.0.RC1"), ("25.0.RC1", "25.0.rc1.1"), ("25.0.rc1.1", "25.0.rc1.1")])
def test_install_sees_one_release_in_any_spelling(installed: str, target: str) -> None:
    actions = decide(_host(installed), Targets(driver=target, min_driver="25.0.RC1",
                                               cann="8.1.RC1"))
    assert actions.driver == "none" and not actions.errors, actions


def test_install_still_refuses_a_real_downgrade_and_upgrades_a_real_upgrade() -> None:
    down = decide(_host("25.2.0"), Targets(driver="25.0.RC1"))
    assert down.driver == "none" and "refusing a downgrade" in down.errors[0]
    up = decide(_host("24.1.0"), Targets(driver="25.0.rc1.1"))
    assert up.driver == "upgrade" and not up.errors


def test_every_hdk_the_matrix_names_round_trips_through_its_file_version() -> None:
    hdk = MATRIX.hdk()
    named = {row.hdk for row in MATRIX.cann if row.hdk is not None}
    named |= {row.hdk_min for row in MATRIX.cann if row.hdk_min is not None}
    named |= {row.hdk for row in MATRIX.mindspore if row.hdk is not None}
    for release in named:
        printed = parse(hdk.file_version(release))
        assert hdk.release_of(printed) == release, release.raw
        assert hdk.same(parse(release.lower()), release) and hdk.same(parse(release.upper()),
                                                                      release)


def test_matrix_command_shows_the_file_versions() -> None:
    document = json.loads(invoke("matrix", "--cann", "8.1.RC1", "--json").out)
    assert {row["release"]: row["files"] for row in document["hdk_files"]} == {
        "25.0.RC1": ["25.0.rc1.1"]}
    # The table's cell reads "25.0.RC1 (files 25.0.rc1.1)" (wrapped to the terminal's width).
    text = invoke("matrix", "--cann", "8.1.RC1").out
    assert "files" in text and "rc1.1" in text
