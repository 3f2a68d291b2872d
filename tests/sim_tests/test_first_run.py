"""The README's first Quick start command, run as written in a copy of this tree: it sets
ascend-env up, fetches, installs and doctors a simulated Atlas 800T A2 host, says plainly that
the host is simulated, ends with a green doctor and the commands for real hosts, and leaves no
simulated host behind."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.core.test_wheel_install import copy_of_tree, quick_start_commands
from tests.sim import fleet
from tests.sim.fixtures import require_sim

pytestmark = [pytest.mark.sim, pytest.mark.slow]

FLEET = "first-run-test"


def test_the_first_quick_start_command_installs_and_doctors_a_simulated_host(
        tmp_path: Path) -> None:
    require_sim()
    root = copy_of_tree(tmp_path / "clone")
    env = {**os.environ, "ASCEND_ENV_FIRST_RUN_FLEET": FLEET}
    env.pop("ASCEND_ENV_VENV", None)
    done = subprocess.run(["bash", "-c", quick_start_commands()[0]], cwd=root, env=env,
                          capture_output=True, text=True, check=False, timeout=1200)
    out = done.stdout
    assert done.returncode == 0, out[-6000:] + done.stderr[-3000:]
    assert "SIMULATED" in out and "simulated Atlas" in out
    # The commands an operator types, in order, each shown as typed.
    typed = [line for line in out.splitlines() if line.startswith("$ ascend-env ")]
    assert [line.split()[2] for line in typed] == ["fetch", "install", "doctor"], typed
    assert "--mirror http://127.0.0.1:" in typed[0]
    assert "--inventory hosts.ini" in typed[1] and "--allow-reboot" in typed[1]
    assert "--inventory hosts.ini" in typed[2]
    assert "repository ascend-repo: complete" in out
    # install: the host reached the spec through the simulated reboot, nothing failed
    install_part = out.split(typed[1], 1)[1].split(typed[2], 1)[0]
    assert re.search(r"^ *sim1 +changed ", install_part, re.MULTILINE), install_part
    # doctor: green, the thread settings install wrote included
    doctor_part = out.split(typed[2], 1)[1]
    assert "1 host(s): 1 ok, 0 failed, 0 unreachable" in doctor_part, doctor_part
    # The simulated tool answers as the real one does: nothing the doctor cannot read.
    assert "cannot read" not in doctor_part, doctor_part
    assert "On real hosts" in out and "ascend-env install --spec lab-a2.yaml --inventory " \
        "hosts.ini --repo ascend-repo --allow-reboot" in out
    assert (root / ".venv" / "bin" / "ascend-env").exists()
    assert fleet.load(FLEET) is None  # brought down at the end
