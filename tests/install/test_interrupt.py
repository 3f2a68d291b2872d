"""A stop reaches every process ascend-env started, without a host: real programs, real
process trees (children that left their session included), real signals. The simulated-host
runs of install are in test_interrupt_sim.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from tests.install.processes import marked

REPO_ROOT = Path(__file__).resolve().parents[2]

# A program that runs its children as a command of ascend-env does: inside supervision(),
# a tethered child (spawn) or a plain subprocess (as libraries start theirs), then raises
# Interrupted as the commands do after a stop.
PROGRAM = textwrap.dedent("""
    import subprocess, sys
    from pathlib import Path
    from ascend_env.cli.app import _fail
    from ascend_env.core import children

    how, script, ready = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    stop_file = Path(sys.argv[4]) if len(sys.argv) > 4 else None
    with children.supervision():
        try:
            if how == "tethered":
                child = children.spawn(["sh", "-c", script], stop_file=stop_file)
                ready.write_text("started")
                code = children.wait(child)
                print("child exit", code, flush=True)
                if children.interruption():
                    raise children.Interrupted(children.interruption())
            else:
                ready.write_text("started")
                subprocess.run(["sh", "-c", script], check=False)
            print("ended by itself", flush=True)
        except children.Interrupted as error:
            _fail(error)
""")

# A tree as ansible-playbook makes one: a worker in its own session (setsid), a grandchild,
# the shell itself waiting; STUBBORN adds one that ignores the stop signals (SIGKILL ends it).
TREE = "setsid sleep 300 & sleep 300 & sleep 300 & wait"
STUBBORN = "setsid sleep 300 & (trap '' TERM INT HUP; sleep 300) & sleep 300 & wait"


def start(tmp_path: Path, how: str, script: str = TREE, *, grace: float = 2,
          stop_file: Path | None = None, processes: int = 5
          ) -> tuple[subprocess.Popen[str], str]:
    token = uuid.uuid4().hex
    marker = f"AE_TEST_RUN={token}"
    env = {**os.environ, "ASCEND_ENV_STOP_GRACE": str(grace), "PYTHONPATH": str(REPO_ROOT),
           "AE_TEST_RUN": token}
    ready = tmp_path / "ready"
    args = [sys.executable, "-c", PROGRAM, how, script, str(ready)]
    if stop_file is not None:
        args.append(str(stop_file))
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=env, start_new_session=True)
    deadline = time.monotonic() + 30
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    # The whole tree is up (with TREE: three sleeps under the shell).
    while len(marked(marker)) < processes and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ready.exists(), process.communicate()
    return process, marker


def finish(process: subprocess.Popen[str], timeout: float = 30) -> tuple[int, str, str]:
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        raise
    return process.returncode, out, err


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_stop_signal_stops_the_whole_tethered_tree_and_exits_128_plus_it(
        tmp_path: Path, signum: signal.Signals) -> None:
    process, marker = start(tmp_path, "tethered")
    os.kill(process.pid, signum)
    code, out, err = finish(process)
    assert code == 128 + signum, err
    assert f"ascend-env: {signum.name}: stopping" in err
    assert f"ascend-env: error: interrupted by {signum.name}" in err
    assert "Traceback" not in err
    assert "ended by itself" not in out
    assert marked(marker) == []


def test_children_that_libraries_start_are_stopped_too(tmp_path: Path) -> None:
    process, marker = start(tmp_path, "plain", STUBBORN)
    os.kill(process.pid, signal.SIGTERM)
    code, _, err = finish(process)
    assert code == 143 and "Traceback" not in err, err
    assert marked(marker) == []


def test_sigkill_of_ascend_env_takes_its_tethered_tree_with_it(tmp_path: Path) -> None:
    process, marker = start(tmp_path, "tethered", STUBBORN, grace=1)
    os.kill(process.pid, signal.SIGKILL)
    process.communicate()
    # The tether gets SIGTERM from the kernel (PR_SET_PDEATHSIG), then its grace (1 s), then
    # the signal to the tree, then SIGKILL after five seconds more for the one ignoring it.
    deadline = time.monotonic() + 20
    while marked(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert marked(marker) == []


def test_a_second_signal_stops_at_once(tmp_path: Path) -> None:
    process, marker = start(tmp_path, "tethered", STUBBORN, grace=120)
    os.kill(process.pid, signal.SIGTERM)
    time.sleep(1)
    assert process.poll() is None  # the grace period: still going
    began = time.monotonic()
    os.kill(process.pid, signal.SIGTERM)
    code, _, _ = finish(process)
    assert code == 143
    assert time.monotonic() - began < 15  # not the 120 s of grace
    assert marked(marker) == []


def test_a_child_given_a_stop_file_ends_its_step_within_the_grace(tmp_path: Path) -> None:
    """ansible-playbook's way (the events callback reads the stop file at each task): the
    child is not signalled while it finishes its step, and its own exit ends the run."""
    stop = tmp_path / "stop"
    step = f"trap 'echo signalled >> {tmp_path}/log' TERM INT; " \
           f"while [ ! -e {stop} ]; do sleep 0.1; done; sleep 1; echo finished >> {tmp_path}/log"
    process, marker = start(tmp_path, "tethered", step, grace=30, stop_file=stop,
                            processes=3)
    os.kill(process.pid, signal.SIGINT)
    code, out, _ = finish(process)
    assert code == 130
    assert "child exit 0" in out
    assert (tmp_path / "log").read_text() == "finished\n"
    assert stop.read_text() == "SIGINT\n"
    assert marked(marker) == []
