"""A stopped `install` on a simulated host (tests/sim): the real console program, real
ansible-playbook over real ssh, real signals. Whatever stops it (SIGTERM, SIGINT, SIGHUP or
its own SIGKILL), nothing it started is left running, the output says where each host was,
and running the printed command again converges with the doctor green.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from ascend_env.ansible.stopped import positions
from ascend_env.spec.plan import Plan
from tests.install.processes import marked
from tests.install.test_install_sim import (  # noqa: F401 (fixtures)
    ALL_COMPONENTS,
    one_host,
    run,
    sim_repo,
    spec_for,
    statuses,
)
from tests.sim.fixtures import SimFleet

pytestmark = [pytest.mark.sim, pytest.mark.slow]

REPO_ROOT = Path(__file__).resolve().parents[2]
GRACE_S = 4


def cli(fleet: SimFleet, repo: Path, plan: Plan, tmp_path: Path, *extra: str) -> list[str]:
    """`ascend-env install` of the whole profile on the fleet, as an operator types it."""
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(json.dumps(spec_for("8.5.0").model_dump(mode="json")))
    overlay = tmp_path / "overlay.json"
    overlay.write_text(json.dumps({"components": {"Sim": {"1": {"files": [
        {"filename": item.download, "sha256": item.sha256, "kind": "fake"}
        for item in plan.items if item.sha256]}}}}))
    return [sys.executable, "-m", "ascend_env", "install", "--spec", str(spec_file),
            "--inventory", str(fleet.inventory), "--repo", str(repo), "--catalogue",
            str(overlay), "--components", ",".join(ALL_COMPONENTS), "--allow-reboot", *extra]


class Started:
    """One run of the console program in its own session, its environment marked."""

    def __init__(self, command: list[str], log_dir: Path) -> None:
        token = uuid.uuid4().hex
        self.marker = f"AE_TEST_RUN={token}"
        self.log_dir = log_dir
        env = {**os.environ, "ASCEND_ENV_STOP_GRACE": str(GRACE_S), "AE_TEST_RUN": token,
               # The playbooks' plugins import ascend_env: this checkout's, as the CLI does.
               "PYTHONPATH": os.pathsep.join(
                   p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH", "")) if p)}
        self.process = subprocess.Popen([*command, "--log-dir", str(log_dir)],
                                        start_new_session=True, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, env=env, cwd=REPO_ROOT)

    def events(self) -> list[dict[str, object]]:
        found = sorted(self.log_dir.glob("*/events.jsonl"))
        if not found:
            return []
        lines = found[-1].read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.endswith("}")]

    def masters(self) -> list[Path]:
        """The ssh master folders of its playbook runs (their extra vars name them)."""
        return [Path(json.loads(path.read_text())["ansible_control_path_dir"])
                for path in sorted(self.log_dir.glob("*/extra-vars.json"))]

    def wait_for_start(self, task: str, timeout: float = 300) -> None:
        """Until some host has started a task whose name begins with `task`."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            # `role : name`; not a role's check of its arguments, named after the role.
            if any(e.get("event") == "start"
                   and str(e.get("task", "")).split(" : ", 1)[-1].startswith(task)
                   for e in self.events()):
                return
            if self.process.poll() is not None:
                out, err = self.process.communicate()
                pytest.fail(f"the install ended before `{task}`: {err.decode()[-2000:]}"
                            f"{out.decode()[-2000:]}")
            time.sleep(0.05)
        pytest.fail(f"no host reached `{task}` in {timeout} s")

    def finish(self, timeout: float = 120) -> tuple[int, str, str]:
        out, err = self.process.communicate(timeout=timeout)
        return self.process.returncode, out.decode(), err.decode()


@pytest.fixture
def started(tmp_path: Path) -> Iterator[list[Started]]:
    runs: list[Started] = []
    yield runs
    for item in runs:  # a failed test leaves nothing behind either
        if item.process.poll() is None:
            os.killpg(item.process.pid, signal.SIGKILL)
            item.process.wait()


# (where the signal comes, which signal): before the driver, in CANN, in the frameworks.
POINTS = [("Read the host as the doctor does", signal.SIGTERM),
          ("Install the CANN toolkit", signal.SIGINT),
          ("Install the frameworks into", signal.SIGHUP)]


@pytest.mark.parametrize("point", POINTS,
                         ids=["before-driver-sigterm", "cann-sigint", "frameworks-sighup"])
def test_a_stopped_install_stops_every_child_says_where_and_converges(
        one_host: SimFleet, sim_repo: tuple[Path, dict[str, Plan]],  # noqa: F811
        tmp_path: Path, started: list[Started], point: tuple[str, signal.Signals]) -> None:
    task, signum = point
    repo, plans = sim_repo
    host = one_host.hosts[0]
    # SIGINT's run as at a terminal (text), the others as a script reads them (--json).
    as_json = signum != signal.SIGINT
    run_ = Started(cli(one_host, repo, plans["8.5.0"], tmp_path,
                       *(["--json"] if as_json else [])), tmp_path / "stopped")
    started.append(run_)
    run_.wait_for_start(task)
    # The signal goes to ascend-env alone, as `kill PID` or systemd's stop would send it:
    # reaching the rest is ascend-env's job.
    os.kill(run_.process.pid, signum)
    code, out, err = run_.finish()
    assert code == 128 + signum, err[-3000:]
    assert marked(run_.marker) == [], "processes of the stopped run are still running"
    assert run_.masters() and not any(folder.exists() for folder in run_.masters())
    assert "Traceback" not in err
    if as_json:
        document = json.loads(out)
        assert document["schema"] == "ascend-env/install/v1"
        assert document["hosts"][0]["status"] == "interrupted"
        stopped = document["interrupted"]
        assert stopped["schema"] == "ascend-env/interrupted/v1"
        assert stopped["signal"] == signum.name and stopped["exit_code"] == 128 + signum
        assert [h["host"] for h in stopped["hosts"]] == [host]
        where = stopped["hosts"][0]
        assert Path(stopped["log"]).is_file()
        resume = stopped["resume"]
    else:
        text = " ".join(out.split())  # the table and the first line wrap at the width
        assert f"interrupted by {signum.name}: the run was stopped" in text
        assert f"{host}: " in text and "completed: " in text
        lines = out.splitlines()
        assert any(line.startswith("full log: ") and Path(line[10:]).is_file()
                   for line in lines), out
        prefix = "to continue, run again (a re-run converges): "
        resume = next(line[len(prefix):] for line in lines if line.startswith(prefix))
        where = positions(run_.events())[0].model_dump()
    assert resume.startswith("ascend-env install --spec ")
    # It stopped in the task it was in when the signal came, or at most the next two (those
    # that started before the signal reached ansible-playbook), never later.
    starts = [str(e["task"]) for e in run_.events() if e.get("event") == "start"]
    at = next(i for i, name in enumerate(starts) if name.split(" : ", 1)[-1].startswith(task))
    assert len(starts) - 1 - at <= 2, starts[at:]
    assert task in where["task"] or len(starts) - 1 > at, where
    if task.startswith("Read the host"):
        # Before the driver: nothing of the vendor's was installed.
        assert not (one_host.root(host) / "usr/local/Ascend/driver").exists()
        assert "driver" not in where["completed"]
    else:
        assert {"preflight", "driver", "firmware"} <= set(where["completed"]), where
    # The command it printed continues: run as printed (exit 0 is the post-install doctor's
    # green too), the stopped run's lock on the host taken over, its ascend-env being gone.
    again = subprocess.run([sys.executable, "-m", "ascend_env", *shlex.split(resume)[1:]],
                           capture_output=True, text=True, check=False, cwd=REPO_ROOT,
                           env={**os.environ, "PYTHONPATH": str(REPO_ROOT)}, timeout=600)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert "took over the lock" in " ".join(again.stdout.split()), again.stdout
    if as_json:
        document = json.loads(again.stdout)
        assert document["hosts"][0]["doctor"]["failed"] == [], document["hosts"]
    assert statuses(run(one_host, repo, plans["8.5.0"], "8.5.0", tmp_path, allow_reboot=True,
                        components=ALL_COMPONENTS)) == {host: "ok"}


def test_after_sigkill_of_ascend_env_its_ansible_playbook_does_not_go_on(
        one_host: SimFleet, sim_repo: tuple[Path, dict[str, Plan]],  # noqa: F811
        tmp_path: Path, started: list[Started]) -> None:
    repo, plans = sim_repo
    run_ = Started(cli(one_host, repo, plans["8.5.0"], tmp_path), tmp_path / "killed")
    started.append(run_)
    run_.wait_for_start("Install the CANN toolkit")
    os.kill(run_.process.pid, signal.SIGKILL)
    run_.process.wait()
    # Its children get the grace period, then the signal, then SIGKILL: all gone after that.
    deadline = time.monotonic() + GRACE_S + 5 + 10
    while marked(run_.marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert marked(run_.marker) == [], "ascend-env's children outlived it"
    # Its ssh masters went with it, their folder too (removed by the tether).
    assert run_.masters() and not any(folder.exists() for folder in run_.masters())
    events = run_.events()
    # No later role started, and ansible-playbook never reached its recap.
    assert not any(e.get("event") == "start" and e.get("role") in ("python", "env")
                   for e in events), events[-5:]
    assert not any(e.get("event") == "stats" for e in events)
    venv = one_host.root(one_host.hosts[0]) / "opt/ascend-env/venv"
    time.sleep(2)  # were anything still running, it would show by now
    assert not venv.exists()
