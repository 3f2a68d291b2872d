"""`install` against simulated Ascend hosts (tests/sim): real Ansible over real SSH.

The vendor packages are the harness's fakes (same names, flags, failures and layout as the
real ones); everything else (Ansible, sshd, the repository and its digests) is real.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ascend_env.core.errors import AscendEnvError
from ascend_env.doctor.report import CheckResult, FleetReport
from ascend_env.doctor.run import DoctorOptions, doctor
from ascend_env.install.provision import InstallOptions, InstallSummary
from ascend_env.repository.fetch import Source, fetch
from ascend_env.repository.installers import RepoError, verify_repo
from ascend_env.spec.envspec import EnvSpec, build_spec
from ascend_env.spec.plan import Plan, resolve
from ascend_env.workflows.install_checked import install_checked
from tests.sim import packages
from tests.sim.fixtures import FleetFactory, SimFleet
from tests.sim.reboot import FAKE_REBOOT_VARS, prepare_reboots, reboot
from tests.wheels import catalogue_with_frameworks, fill_wheels

pytestmark = [pytest.mark.sim, pytest.mark.slow]

ARCH = platform.machine()
COMPONENTS = ["user", "driver", "firmware", "cann", "env"]
# The whole profile: the frameworks too (stand-in wheels, tests/wheels.py).
ALL_COMPONENTS = [*COMPONENTS, "python"]
STACKS = {"8.5.0": "25.5.0", "8.3.RC1": "25.3.RC1"}


def spec_for(cann: str, devices: int = 8) -> EnvSpec:
    """910b on this machine's arch and Debian; 8.5.0 keeps the profile's torch, torch_npu and
    MindSpore, 8.3.RC1 (the upgrade's starting point) has none."""
    frameworks = {} if cann == "8.5.0" else {"frameworks": {"torch": None, "mindspore": None}}
    return build_spec({"extends": "910b", "name": f"sim-{cann}", "os": {"family": "debian",
                       "version": "12"}, "hardware": {"arch": ARCH, "devices": devices},
                       "python": {"version": "3.11"}, "driver": {"version": STACKS[cann]},
                       "cann": {"version": cann}, **frameworks}, "test")


@pytest.fixture(scope="session")
def sim_repo(tmp_path_factory: pytest.TempPathFactory, sim_fleet_factory: FleetFactory
             ) -> tuple[Path, dict[str, Plan]]:
    """A fetched, verified repository holding the fake packages of both stacks and the
    frameworks' wheels with their whole dependency closure."""
    del sim_fleet_factory  # only for its require_sim() and cleanup
    root = tmp_path_factory.mktemp("sim-repo")
    repo = root / "repo"
    plans = {}
    for cann, hdk in STACKS.items():
        vendor = root / f"vendor-{cann}"
        packages.build_repo(vendor, chip="910b", cann=cann, hdk=hdk, arch=ARCH)
        plan = resolve(spec_for(cann), catalogue_with_frameworks(vendor, spec_for(cann)))
        result = fetch(plan, repo, Source(from_dir=vendor))
        assert result.complete, result
        plans[cann] = plan
    fill_wheels(repo)
    return repo, plans


def prepare(fleet: SimFleet) -> None:
    for host in fleet.hosts:
        prepare_reboots(fleet.root(host))


def run(fleet: SimFleet, repo: Path, plan: Plan, cann: str, tmp_path: Path, **options: Any
        ) -> InstallSummary:
    extra = {**FAKE_REBOOT_VARS, **options.pop("extra_vars", {})}
    return install_checked(spec_for(cann, options.pop("devices", 8)), plan, InstallOptions(
        repo=repo, inventory=fleet.inventory, components=options.pop("components", COMPONENTS),
        log_dir=tmp_path / "logs", extra_vars=extra, **options))


def statuses(summary: InstallSummary) -> dict[str, str]:
    return {host.host: host.status for host in summary.hosts}


def tree_digest(root: Path) -> str:
    """A digest of the Ascend install tree and the managed files: what an install changes."""
    digest = hashlib.sha256()
    for base in ("usr/local/Ascend", "etc/profile.d", "etc/ld.so.conf.d"):
        for path in sorted((root / base).rglob("*")):
            digest.update(str(path.relative_to(root)).encode())
            if path.is_file() and not path.is_symlink():
                digest.update(path.read_bytes())
    return digest.hexdigest()


def installed_versions(fleet: SimFleet, host: str) -> dict[str, str]:
    root = fleet.root(host) / "usr/local/Ascend"
    info = {}
    for name, path in (("driver", root / "driver/version.info"),
                       ("firmware", root / "firmware/version.info")):
        text = path.read_text() if path.exists() else ""
        info[name] = next((line.split("=", 1)[1] for line in text.splitlines()
                           if line.startswith("Version=")), "")
    return info


def cann_checks(fleet: SimFleet) -> dict[str, CheckResult]:
    """The doctor's `cann` checks on the fleet's first host, by id."""
    document = doctor(DoctorOptions(spec=spec_for("8.5.0"), inventory=fleet.inventory,
                                    only=("cann",)))
    report = document.hosts[0] if isinstance(document, FleetReport) else document
    return {check.id: check for check in report.checks}


@pytest.fixture
def one_host(sim_private_fleet: FleetFactory) -> Iterator[SimFleet]:
    fleet = sim_private_fleet(hosts=1, state="bare")
    prepare(fleet)
    yield fleet


def test_fresh_install_stops_for_reboot_then_converges_and_is_idempotent(
        one_host: SimFleet, sim_repo: tuple[Path, dict[str, Plan]], tmp_path: Path) -> None:
    repo, plans = sim_repo
    host = one_host.hosts[0]
    first = run(one_host, repo, plans["8.5.0"], "8.5.0", tmp_path, components=ALL_COMPONENTS)
    assert statuses(first) == {host: "reboot required"}, first
    assert "reboot" in first.hosts[0].message
    # Not rebooted yet: the new driver is not loaded, so the install still waits.
    assert statuses(run(one_host, repo, plans["8.5.0"], "8.5.0", tmp_path)) == {
        host: "reboot required"}
    reboot(one_host.root(host))
    converged = run(one_host, repo, plans["8.5.0"], "8.5.0", tmp_path,
                    components=ALL_COMPONENTS)
    assert statuses(converged) == {host: "changed"}, converged
    assert converged.succeeded
    # The post-install doctor judged the frameworks' venv as well.
    assert converged.hosts[0].doctor is not None
    assert converged.hosts[0].doctor["failed"] == []
    again = run(one_host, repo, plans["8.5.0"], "8.5.0", tmp_path, components=ALL_COMPONENTS)
    assert statuses(again) == {host: "ok"}
    assert again.hosts[0].changed == 0
    done = one_host.ssh(
        host, "bash -lc 'echo $ASCEND_HOME_PATH; ldconfig -p | grep -c libascend_hal; "
              "/opt/ascend-env/venv/bin/python -c \"import torch_npu, mindspore; "
              "print(torch_npu.__version__, mindspore.__version__)\"'")
    assert done.stdout.split() == ["/usr/local/Ascend/cann-8.5.0", "1", "2.9.0", "2.7.2"], done


def test_check_mode_changes_nothing(one_host: SimFleet, sim_repo: tuple[Path, dict[str, Plan]],
                                    tmp_path: Path) -> None:
    repo, plans = sim_repo
    root = one_host.root(one_host.hosts[0])
    before = tree_digest(root)
    summary = run(one_host, repo, plans["8.5.0"], "8.5.0", tmp_path, check=True)
    assert summary.check
    assert not [h for h in summary.hosts if h.status in ("failed", "unreachable")], summary
    assert tree_digest(root) == before
    assert not (root / "usr/local/Ascend/driver").exists()


def test_fleet_of_four_with_allowed_reboots_converges_then_changes_nothing(
        sim_private_fleet: FleetFactory, sim_repo: tuple[Path, dict[str, Plan]],
        tmp_path: Path) -> None:
    repo, plans = sim_repo
    fleet = sim_private_fleet(hosts=4, state="bare")
    prepare(fleet)
    summary = run(fleet, repo, plans["8.5.0"], "8.5.0", tmp_path, allow_reboot=True,
                  components=ALL_COMPONENTS)
    assert set(statuses(summary).values()) == {"changed"}, summary
    again = run(fleet, repo, plans["8.5.0"], "8.5.0", tmp_path, allow_reboot=True,
                components=ALL_COMPONENTS)
    assert set(statuses(again).values()) == {"ok"}, again
    assert all(host.changed == 0 for host in again.hosts)


def test_upgrade_follows_the_vendor_order(one_host: SimFleet,
                                          sim_repo: tuple[Path, dict[str, Plan]],
                                          tmp_path: Path) -> None:
    repo, plans = sim_repo
    host = one_host.hosts[0]
    old = run(one_host, repo, plans["8.3.RC1"], "8.3.RC1", tmp_path, allow_reboot=True)
    assert old.succeeded, old
    root = one_host.root(host) / "usr/local/Ascend"
    assert (root / "ascend-toolkit/8.3.RC1").is_dir()
    new = run(one_host, repo, plans["8.5.0"], "8.5.0", tmp_path, allow_reboot=True)
    assert new.succeeded, new
    log = Path(new.log).read_text()
    # Driver and firmware both present: the firmware goes first
    # (https://www.hiascend.com/document/detail/en/CANNCommunityEdition/900/softwareinst/instg/instg_0005.html).
    assert log.index("Install the NPU firmware 7") < log.index("Install the NPU driver 25")
    # 8.5.0 replaces the older toolkit with --upgrade and moves to the cann-<ver> layout.
    assert "Install the CANN toolkit 8.5.0 (upgrade)" in log
    assert (root / "cann-8.5.0").is_dir()
    assert not (root / "ascend-toolkit/8.3.RC1").exists()
    assert installed_versions(one_host, host)["driver"] == "25.5.0"


def test_downgrade_is_refused_before_anything_changes(
        one_host: SimFleet, sim_repo: tuple[Path, dict[str, Plan]], tmp_path: Path) -> None:
    repo, plans = sim_repo
    assert run(one_host, repo, plans["8.5.0"], "8.5.0", tmp_path, allow_reboot=True).succeeded
    root = one_host.root(one_host.hosts[0])
    before = tree_digest(root)
    summary = run(one_host, repo, plans["8.3.RC1"], "8.3.RC1", tmp_path, allow_reboot=True)
    assert statuses(summary) == {one_host.hosts[0]: "failed"}
    assert "refusing a downgrade" in summary.hosts[0].message
    assert tree_digest(root) == before


def test_cards_that_do_not_match_the_spec_are_refused(
        sim_private_fleet: FleetFactory, sim_repo: tuple[Path, dict[str, Plan]],
        tmp_path: Path) -> None:
    repo, plans = sim_repo
    fleet = sim_private_fleet(hosts=1, state="bare", devices=4)
    prepare(fleet)
    summary = run(fleet, repo, plans["8.5.0"], "8.5.0", tmp_path)
    assert statuses(summary) == {fleet.hosts[0]: "failed"}
    message = summary.hosts[0].message
    assert "expects 8" in message and "has 4" in message


def test_unreachable_host_does_not_stop_the_others(
        sim_private_fleet: FleetFactory, sim_repo: tuple[Path, dict[str, Plan]],
        tmp_path: Path) -> None:
    repo, plans = sim_repo
    fleet = sim_private_fleet(hosts=2, state="bare")
    prepare(fleet)
    inventory = tmp_path / "inventory.ini"
    # One more host in the same group, on a loopback address where no sshd listens.
    text = fleet.inventory.read_text()
    assert "[sim]\n" in text
    inventory.write_text(text.replace("[sim]\n", "[sim]\nghost ansible_host=127.0.0.254\n", 1))
    summary = install_checked(spec_for("8.5.0"), plans["8.5.0"], InstallOptions(
        repo=repo, inventory=inventory, components=COMPONENTS, allow_reboot=True,
        log_dir=tmp_path / "logs", extra_vars=FAKE_REBOOT_VARS))
    found = statuses(summary)
    assert found.pop("ghost") == "unreachable"
    assert set(found.values()) == {"changed"}, summary
    assert not summary.succeeded


def test_missing_package_is_named_before_any_host_is_touched(
        one_host: SimFleet, sim_repo: tuple[Path, dict[str, Plan]], tmp_path: Path) -> None:
    repo, plans = sim_repo
    partial = tmp_path / "partial-repo"
    partial.mkdir()
    for item in (repo / "Ascend-cann-toolkit_8.5.0_linux-" f"{ARCH}.zip",):
        (partial / item.name).write_bytes(item.read_bytes())
    before = tree_digest(one_host.root(one_host.hosts[0]))
    with pytest.raises(AscendEnvError) as caught:
        run(one_host, partial, plans["8.5.0"], "8.5.0", tmp_path)
    assert "nothing was changed" in str(caught.value)
    assert "Ascend-hdk-910b-npu-driver_25.5.0" in str(caught.value)
    assert tree_digest(one_host.root(one_host.hosts[0])) == before


def test_install_killed_half_way_converges_on_the_next_run(
        one_host: SimFleet, sim_repo: tuple[Path, dict[str, Plan]], tmp_path: Path) -> None:
    repo, plans = sim_repo
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(json.dumps(spec_for("8.5.0").model_dump(mode="json")))
    overlay = tmp_path / "overlay.json"
    overlay.write_text(json.dumps({"components": {"Sim": {"1": {"files": [
        {"filename": item.download, "sha256": item.sha256, "kind": "fake"}
        for item in plans["8.5.0"].items if item.sha256]}}}}))
    events_dir = tmp_path / "killed"
    command = [sys.executable, "-m", "ascend_env", "install", "--spec", str(spec_file),
               "--inventory", str(one_host.inventory), "--repo", str(repo), "--catalogue",
               str(overlay), "--components", ",".join(COMPONENTS), "--log-dir", str(events_dir),
               "--allow-reboot"]
    process = subprocess.Popen(command, start_new_session=True, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        events = list(events_dir.glob("*/events.jsonl"))
        if events and "Install the CANN toolkit" in events[0].read_text():
            break
        time.sleep(0.05)
    # Kill the whole run (CLI, ansible-playbook and its workers) in the middle of CANN.
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    # The tether (its own session, so the group kill misses it) lets the killed run's
    # ansible-playbook finish its current task, up to the grace period, and holds its run
    # lock meanwhile: the next run, told to wait, sees that run end on this controller and
    # takes over the host lock it never released, over ssh masters of its own.
    summary = run(one_host, repo, plans["8.5.0"], "8.5.0", tmp_path,
                  allow_reboot=True, lock_wait=120)
    assert summary.succeeded, summary
    assert statuses(run(one_host, repo, plans["8.5.0"], "8.5.0", tmp_path,
                        allow_reboot=True)) == {one_host.hosts[0]: "ok"}


def test_a_toolkit_left_without_its_links_reads_alike_in_doctor_and_install(
        sim_private_fleet: FleetFactory, sim_repo: tuple[Path, dict[str, Plan]],
        tmp_path: Path) -> None:
    """A CANN install stopped before the toolkit's `cann`/`latest` links: the doctor and
    install's preflight (over ssh, the same probe) both read CANN 8.5.0 in the same folder,
    the doctor flags the missing link, and install puts the toolkit back rather than
    skipping it, after which the doctor passes."""
    repo, plans = sim_repo
    fleet = sim_private_fleet(hosts=1, state="provisioned")
    prepare(fleet)
    root = fleet.root(fleet.hosts[0])
    base = root / "usr/local/Ascend"
    links = [link for link in (base / "cann", base / "ascend-toolkit/latest")
             if link.is_symlink()]
    assert links, "the provisioned host has no toolkit link"
    home = "/" + str(links[0].resolve().relative_to(root))
    for link in links:
        link.unlink()
    checks = cann_checks(fleet)
    assert checks["cann.version"].status == "pass", checks["cann.version"]
    assert f"CANN 8.5.0 (new layout) in {home}" in (checks["cann.installed"].observed or "")
    # set_env.sh is still there; the link it relies on is not.
    assert checks["cann.set-env"].status == "pass", checks["cann.set-env"]
    assert checks["cann.linked"].status == "fail", checks["cann.linked"]
    assert f"{home} has no /usr/local/Ascend/cann link" in checks["cann.linked"].message
    before = tree_digest(root)
    checked = run(fleet, repo, plans["8.5.0"], "8.5.0", tmp_path, check=True)
    assert not [h for h in checked.hosts if h.status in ("failed", "unreachable")], checked
    log = Path(checked.log).read_text()
    assert f"CANN toolkit 8.5.0 in {home} has no `cann` or `ascend-toolkit/latest` link" in log
    assert "Install the CANN toolkit 8.5.0 (install)" in log
    # The driver the doctor passes is the one preflight leaves alone: site.yml leaves the
    # driver role out where there is nothing to do.
    assert "Install the CANN toolkit 8.5.0" in log and "Install the NPU driver" not in log
    assert tree_digest(root) == before
    fixed = run(fleet, repo, plans["8.5.0"], "8.5.0", tmp_path, allow_reboot=True)
    assert fixed.succeeded, fixed
    assert fixed.hosts[0].doctor is not None and fixed.hosts[0].doctor["failed"] == []
    assert all(link.is_symlink() and link.exists() for link in links)
    linked = cann_checks(fleet)["cann.linked"]
    assert linked.status == "pass", linked
    assert linked.observed == f"/usr/local/Ascend/cann -> {home}"


def altered_copy(repo: Path, tmp_path: Path) -> tuple[Path, Path, str, str]:
    """A copy of the fetched repository whose unpacked driver installer was changed after
    fetch; returns the copy, the altered file, the digest fetch recorded and the new one."""
    copy = tmp_path / "altered-repo"
    shutil.copytree(repo, copy, ignore=shutil.ignore_patterns("wheels"), symlinks=True)
    files = json.loads((copy / "repo.json").read_text())["files"]
    hdk = next(name for name in files if name.startswith("Ascend-hdk-910b-npu_25.5.0"))
    member = next(name for name in files[hdk]["members"] if "npu-driver" in name)
    installer = copy / hdk.removesuffix(".zip") / member
    with installer.open("ab") as handle:
        handle.write(b"\nreboot\n")
    return (copy, installer, files[hdk]["members"][member]["sha256"],
            hashlib.sha256(installer.read_bytes()).hexdigest())


def test_an_installer_changed_after_fetch_is_refused_before_any_host_is_touched(
        one_host: SimFleet, sim_repo: tuple[Path, dict[str, Plan]], tmp_path: Path) -> None:
    repo, plans = sim_repo
    copy, installer, recorded, actual = altered_copy(repo, tmp_path)
    root = one_host.root(one_host.hosts[0])
    before = tree_digest(root)
    with pytest.raises(RepoError) as caught:
        run(one_host, copy, plans["8.5.0"], "8.5.0", tmp_path)
    message = str(caught.value)
    assert f"{installer}: sha256 mismatch: expected {recorded}" in message, message
    assert f"got {actual}" in message and "nothing was changed on any host" in message
    assert caught.value.exit_code == 1
    # No ansible-playbook run at all: install makes its run folder before starting one.
    assert not (tmp_path / "logs").exists()
    assert tree_digest(root) == before
    assert not (root / "var/cache/ascend-env").exists()


def test_the_host_refuses_a_copy_that_does_not_match_its_digest(
        one_host: SimFleet, sim_repo: tuple[Path, dict[str, Plan]], tmp_path: Path) -> None:
    """What reaches the host is checked there too: a digest that the copy does not have (as
    if the file changed between install's check and the copy) stops the host before it runs
    the installer."""
    repo, plans = sim_repo
    installers = verify_repo(plans["8.5.0"], repo, set(COMPONENTS))
    digests = {name: found.sha256 for name, found in installers.items()}
    digests["driver"] = "0" * 64
    host = one_host.hosts[0]
    summary = run(one_host, repo, plans["8.5.0"], "8.5.0", tmp_path,
                  extra_vars={"ascend_digests": digests})
    assert statuses(summary) == {host: "failed"}, summary
    message = summary.hosts[0].message
    assert "sha256 mismatch" in message and f"expected {'0' * 64}" in message, message
    assert f"got {installers['driver'].sha256}" in message
    assert installed_versions(one_host, host)["driver"] == ""
