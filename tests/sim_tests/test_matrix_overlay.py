"""A release added by a site overlay, end to end on a simulated host: a CANN and an HDK that no
ascend-env knows (9.3.0 on HDK 26.3.RC1) are fetched, installed and doctored.

Without the overlay both are "unknown" warnings (never failures); with the site's file in the
overlay folder the spec validates clean, the install converges and the doctor pairs driver and
CANN by the site's row, citing the overlay file. The vendor packages are the harness's fakes;
Ansible, sshd, the repository and its digests are real.
"""

from __future__ import annotations

import platform
from pathlib import Path
from typing import Any

import pytest
import yaml

from ascend_env.doctor.report import CheckResult, FleetReport
from ascend_env.doctor.run import DoctorOptions, doctor
from ascend_env.install.provision import InstallOptions
from ascend_env.repository.fetch import Source, fetch
from ascend_env.spec.compat import check_spec
from ascend_env.spec.envspec import EnvSpec, build_spec
from ascend_env.spec.overlay import ENV_VAR
from ascend_env.spec.plan import resolve
from ascend_env.workflows.install_checked import install_checked
from tests.sim import packages
from tests.sim.fixtures import FleetFactory
from tests.sim.reboot import FAKE_REBOOT_VARS, prepare_reboots
from tests.wheels import catalogue_with_frameworks, fill_wheels

pytestmark = [pytest.mark.sim, pytest.mark.slow]

ARCH = platform.machine()
CANN, HDK = "9.3.0", "26.3.RC1"
COMPONENTS = ["user", "driver", "firmware", "cann", "env"]
OVERLAY = {
    "schema": "ascend-env/matrix-overlay/v1",
    "sources": {"SITE-RN930": {"title": "CANN 9.3.0 release notes as our vendor sent them",
                               "url": "https://example.org/cann-9.3.0-release-notes"}},
    "cann": [{"cann": CANN, "hdk": HDK, "hdk_compatible": ["26.3"], "python": "3.9-3.13",
              "sources": ["SITE-RN930"]}],
    "hdk_releases": [{"release": HDK, "sources": ["SITE-RN930"]}],
}


def spec() -> EnvSpec:
    return build_spec({"extends": "910b", "name": "site-9.3",
                       "os": {"family": "debian", "version": "12"},
                       "hardware": {"arch": ARCH, "devices": 2}, "python": {"version": "3.11"},
                       "driver": {"version": HDK}, "cann": {"version": CANN},
                       "frameworks": {"torch": None, "mindspore": None}}, "test")


def checks(inventory: Path) -> dict[str, CheckResult]:
    document = doctor(DoctorOptions(spec=spec(), inventory=inventory,
                                    only=("driver", "firmware", "cann")))
    report = document.hosts[0] if isinstance(document, FleetReport) else document
    return {check.id: check for check in report.checks}


def unknown(problems: list[Any]) -> list[str]:
    return sorted(p.path for p in problems if "knows" in p.message)


@pytest.fixture
def overlays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "matrix.d"
    folder.mkdir()
    monkeypatch.setenv(ENV_VAR, str(folder))
    return folder


def add_site_file(folder: Path) -> Path:
    site_file = folder / "50-cann-9.3.0.yaml"
    site_file.write_text(yaml.safe_dump(OVERLAY, sort_keys=False))
    return site_file


def assert_paired_by_the_overlay(inventory: Path, site_file: Path) -> None:
    found = checks(inventory)
    for check_id in ("driver.version", "firmware.version", "cann.version", "driver.supports-cann"):
        assert found[check_id].status == "pass", found[check_id]
    observed = found["driver.supports-cann"].observed or ""
    assert f"site overlay {site_file}" in observed, observed


def assert_unknown_again(inventory: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the overlay: unknown again, a warning that says how to add it, no failure."""
    monkeypatch.setenv(ENV_VAR, "")
    found = checks(inventory)
    supports = found["driver.supports-cann"]
    assert supports.status == "warn", supports
    assert "not a release ascend-env knows" in supports.message
    assert "matrix.d" in supports.message
    assert not [c for c in found.values() if c.status == "fail"], found


def test_doctor_pairs_a_host_by_the_sites_overlay(
        sim_private_fleet: FleetFactory, overlays: Path, monkeypatch: pytest.MonkeyPatch
        ) -> None:
    # The host as its vendor's installers left it (the harness runs them): CANN 9.3.0 on HDK
    # 26.3.RC1, files 26.3.rc1.
    fleet = sim_private_fleet(hosts=1, state="provisioned", devices=2, cann=CANN, hdk=HDK)
    site_file = add_site_file(overlays)
    assert_paired_by_the_overlay(fleet.inventory, site_file)
    assert_unknown_again(fleet.inventory, monkeypatch)


def test_a_release_added_by_a_site_overlay_installs_and_doctors(
        sim_private_fleet: FleetFactory, tmp_path: Path, overlays: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: unknown, so warned about, never an error.
    before = check_spec(spec())
    assert unknown(before) == ["cann.version", "driver.version"], before
    assert not [p for p in before if p.severity == "error"], before
    site_file = add_site_file(overlays)
    assert not unknown(check_spec(spec()))

    vendor, repo = tmp_path / "vendor", tmp_path / "repo"
    packages.build_repo(vendor, chip="910b", cann=CANN, hdk=HDK, arch=ARCH)
    plan = resolve(spec(), catalogue_with_frameworks(vendor, spec()))
    assert fetch(plan, repo, Source(from_dir=vendor)).complete
    fill_wheels(repo)

    fleet = sim_private_fleet(hosts=1, state="bare", devices=2)
    for host in fleet.hosts:
        prepare_reboots(fleet.root(host))
    summary = install_checked(spec(), plan, InstallOptions(
        repo=repo, inventory=fleet.inventory, components=COMPONENTS, allow_reboot=True,
        log_dir=tmp_path / "logs", extra_vars=dict(FAKE_REBOOT_VARS)), check_after=False)
    assert summary.succeeded, summary
    assert_paired_by_the_overlay(fleet.inventory, site_file)
    assert_unknown_again(fleet.inventory, monkeypatch)
