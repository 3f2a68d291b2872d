"""One change to a host at a time, on simulated hosts (tests/sim): the lock lives on the host
(/run/ascend-env.lock), taken by site.yml and fix.yml through real ssh. A second install
is refused naming the holder, or waits when told to; a stale lock is taken over, saying so;
read-only commands never touch it."""

from __future__ import annotations

import json
import os
import platform
import shlex
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from ascend_env.ansible.host_lock import holder, start_time
from ascend_env.core.resources import remote_source
from ascend_env.spec.plan import Plan
from tests.cli_invoke import invoke
from tests.doctor import hosts as h
from tests.install.processes import marked
from tests.install.test_install_sim import (  # noqa: F401 (fixtures)
    ALL_COMPONENTS,
    one_host,
    run,
    sim_repo,
    statuses,
)
from tests.install.test_interrupt_sim import (  # noqa: F401 (fixture)
    Started,
    cli,
    started,
)
from tests.sim.fixtures import FleetFactory, SimFleet
from tests.sim.reboot import BOOT_ID

pytestmark = [pytest.mark.sim, pytest.mark.slow]

LOCK = "run/ascend-env.lock"


def plant(fleet: SimFleet, host: str, who: dict[str, Any]) -> None:
    """Take the host's lock for `who` as a run would, with the host's own program."""
    done = fleet.ssh(host, shlex.join([
        "python3", "-c", remote_source("host_lock"), "take", "--path", f"/{LOCK}",
        "--holder", json.dumps(who), "--boot-id-file", f"/{BOOT_ID}"]))
    assert done.returncode == 0, done.stdout + done.stderr


def other_controller(**changes: Any) -> dict[str, Any]:
    return {**holder("ascend-env install --profile 910b -i rack3.ini"),
            "controller": "ctrl-b.lab.example", "controller_boot_id": "b007", "pid": 4242,
            **changes}


def test_a_second_install_is_refused_naming_the_holder_or_waits_when_told(
        one_host: SimFleet, sim_repo: tuple[Path, dict[str, Plan]],  # noqa: F811
        tmp_path: Path, started: list[Started]) -> None:  # noqa: F811
    repo, plans = sim_repo
    host = one_host.hosts[0]
    first = Started(cli(one_host, repo, plans["8.5.0"], tmp_path), tmp_path / "first")
    started.append(first)
    first.wait_for_start("Read the host as the doctor does")
    refused = run(one_host, repo, plans["8.5.0"], "8.5.0", tmp_path)
    assert statuses(refused) == {host: "locked"}, refused
    message = refused.hosts[0].message
    assert f"ascend-env pid {first.process.pid} on " in message
    assert "ascend-env install --spec" in message and ", since 20" in message
    assert "--wait-lock" in message and "nothing was changed" in message
    assert not refused.succeeded
    # Told to wait, the next run goes on once the first has released the lock.
    waited = run(one_host, repo, plans["8.5.0"], "8.5.0", tmp_path, allow_reboot=True,
                 components=ALL_COMPONENTS, lock_wait=600)
    code, _, err = first.finish()
    assert code == 0, err[-2000:]
    assert waited.succeeded and statuses(waited) == {host: "ok"}, waited
    assert not (one_host.root(host) / LOCK).exists()  # released at the end


def test_a_stale_lock_is_taken_over_saying_whose(
        one_host: SimFleet, sim_repo: tuple[Path, dict[str, Plan]],  # noqa: F811
        tmp_path: Path) -> None:
    repo, plans = sim_repo
    host = one_host.hosts[0]
    # A run of this controller whose ascend-env is gone (killed before it could release).
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    gone = {**holder("ascend-env install --profile 910b"), "pid": child.pid,
            "pid_start": start_time(child.pid)}
    child.wait()
    plant(one_host, host, gone)
    summary = run(one_host, repo, plans["8.5.0"], "8.5.0", tmp_path, allow_reboot=True)
    assert summary.succeeded, summary
    assert any(f"took over the lock of ascend-env pid {child.pid} on {socket.gethostname()}"
               in note and "the run that took it is gone" in note
               for note in summary.notes), summary.notes
    # Another controller's lock from before the host's last reboot.
    plant(one_host, host, other_controller())
    (one_host.root(host) / BOOT_ID).write_text("boot-after-a-reboot\n")
    summary = run(one_host, repo, plans["8.5.0"], "8.5.0", tmp_path, allow_reboot=True)
    assert statuses(summary) == {host: "ok"}, summary
    assert any("ascend-env pid 4242 on ctrl-b.lab.example" in note
               and "the host rebooted since it was taken" in note for note in summary.notes)
    assert not (one_host.root(host) / LOCK).exists()


def test_fixes_take_the_lock_and_read_only_commands_never_do(
        sim_private_fleet: FleetFactory, tmp_path: Path,
        started: list[Started]) -> None:  # noqa: F811
    fleet = sim_private_fleet(hosts=1, state="provisioned", devices=2)
    root = fleet.root("sim1")
    h.make_ready(root)
    h.no_library_path(fleet, "sim1")
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(yaml.safe_dump({
        "extends": "910b", "name": "sim-lock", "hardware": {"arch": platform.machine(),
                                                           "devices": 2},
        "os": {"family": "debian", "version": "12"},
        "frameworks": {"torch": None, "mindspore": None}}))
    common = ["--inventory", str(fleet.inventory), "--spec", str(spec_file), "--json",
              "--log-dir", str(tmp_path / "logs")]
    busy = other_controller()
    plant(fleet, "sim1", busy)
    held = (root / LOCK).read_bytes()

    done = invoke("doctor", *common, "--fix")
    assert "Traceback" not in done.err, done.err
    report = json.loads(done.out)["hosts"][0] if "hosts" in json.loads(done.out) \
        else json.loads(done.out)
    assert report["fixes"]["status"] == "locked", report["fixes"]
    assert any("held by ascend-env pid 4242 on ctrl-b.lab.example "
               "(ascend-env install --profile 910b -i rack3.ini)" in failure
               for failure in report["fixes"]["failed"]), report["fixes"]
    assert done.code == 1
    assert {c["id"] for c in report["checks"] if c["status"] == "fail"} >= {
        "env.driver-libraries"}  # nothing was fixed

    # Read-only: the doctor, its dry run of the fixes, and collect leave the lock as it is.
    for args in ((), ("--fix", "--check")):
        assert "Traceback" not in invoke("doctor", *common, *args).err
    collected = invoke("collect", "--inventory", str(fleet.inventory), "-o",
                       str(tmp_path / "capture.json"))
    assert collected.code == 0, collected.err
    assert (root / LOCK).read_bytes() == held

    (root / LOCK).unlink()  # the other run ended
    # A fix run stopped by SIGTERM: exit 143, the account alone as JSON, nothing left.
    fixing = Started([sys.executable, "-m", "ascend_env", "doctor", *common[:-2], "--fix"],
                     tmp_path / "stopped-fix")
    started.append(fixing)
    fixing.wait_for_start("Take the host's ascend-env lock")
    os.kill(fixing.process.pid, signal.SIGTERM)
    code, out, err = fixing.finish()
    assert code == 143, err[-2000:]
    account = json.loads(out)
    assert account["schema"] == "ascend-env/interrupted/v1" and account["signal"] == "SIGTERM"
    assert [where["host"] for where in account["hosts"]] == ["sim1"]
    assert account["resume"].startswith("ascend-env doctor --inventory ")
    assert marked(fixing.marker) == []
    # Run again: the stopped run's lock is taken over (its ascend-env is gone), the fix done.
    done = invoke("doctor", *common, "--fix")
    report = json.loads(done.out)
    report = report["hosts"][0] if "hosts" in report else report
    assert report["fixes"]["status"] == "changed", report["fixes"]
    assert "env.driver-libraries" not in {c["id"] for c in report["checks"]
                                          if c["status"] == "fail"}
    assert not (root / LOCK).exists()
