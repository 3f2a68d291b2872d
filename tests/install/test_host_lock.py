"""The host lock's two halves without a host: the program that runs on the host
(ascend_env/remote/host_lock.py, run here as a host runs it: `python3 -c SOURCE`, real
processes racing for one file) and the controller's judgement of a holder."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from ascend_env.ansible.host_lock import (
    boot_id,
    describe,
    hold_run_lock,
    holder,
    holder_gone,
    start_time,
    wait_gone,
)
from ascend_env.core.resources import remote_source

SOURCE = remote_source("host_lock")


def lock(tmp_path: Path, *args: str, boot: str = "boot-1") -> tuple[int, dict[str, Any]]:
    boot_file = tmp_path / "boot_id"
    if not boot_file.exists() or boot_file.read_text().strip() != boot:
        boot_file.write_text(boot + "\n")
    done = subprocess.run([sys.executable, "-c", SOURCE, *args, "--path",
                           str(tmp_path / "run/lock/ascend-env.lock"),
                           "--boot-id-file", str(boot_file)],
                          capture_output=True, text=True, check=False, timeout=60)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout)


def take(tmp_path: Path, who: dict[str, Any], *args: str, boot: str = "boot-1"
         ) -> tuple[int, dict[str, Any]]:
    return lock(tmp_path, "take", "--holder", json.dumps(who), *args, boot=boot)


def test_free_then_held_names_the_holder_then_released(tmp_path: Path) -> None:
    first, second = holder("ascend-env install --profile 910b"), holder("ascend-env install")
    code, taken = take(tmp_path, first)
    assert code == 0 and taken["taken"] and taken["took_over"] is None
    on_disk = json.loads((tmp_path / "run/lock/ascend-env.lock").read_text())
    assert on_disk["token"] == first["token"] and on_disk["boot_id"] == "boot-1"
    assert on_disk["host"] == socket.gethostname() and on_disk["since"].endswith("Z")

    code, refused = take(tmp_path, second)
    assert code == 3 and not refused["taken"]
    assert refused["holder"]["token"] == first["token"]
    named = describe(refused["holder"])
    assert f"ascend-env pid {os.getpid()} on {socket.gethostname()}" in named
    assert "(ascend-env install --profile 910b), since " in named

    assert lock(tmp_path, "release", "--token", second["token"])[1]["released"] is False
    assert take(tmp_path, first)[0] == 0  # the same run again (after its reboot): its own
    assert lock(tmp_path, "release", "--token", first["token"])[1]["released"] is True
    assert take(tmp_path, second)[0] == 0


def test_a_lock_of_another_boot_is_taken_over(tmp_path: Path) -> None:
    old = holder("ascend-env install")
    take(tmp_path, old, boot="boot-1")
    code, taken = take(tmp_path, holder(), boot="boot-2")
    assert code == 0 and taken["took_over"]["token"] == old["token"]
    assert taken["reason"] == "the host rebooted since it was taken"


def test_a_run_that_reboots_the_host_keeps_its_lock_across_that_reboot(tmp_path: Path) -> None:
    mine, other = holder(), holder()
    take(tmp_path, mine, boot="boot-1")
    assert take(tmp_path, mine, "--may-reboot", boot="boot-1")[0] == 0
    # Rebooted: another run does not take it, the run that rebooted does.
    assert take(tmp_path, other, boot="boot-2")[0] == 3
    code, again = take(tmp_path, mine, boot="boot-2")
    assert code == 0 and again["holder"]["may_reboot"] is False
    # Marked no longer: a later boot makes it stale again.
    assert take(tmp_path, other, boot="boot-3")[1]["reason"] == \
        "the host rebooted since it was taken"


def test_takeover_names_the_token_it_may_replace(tmp_path: Path) -> None:
    old, new, third = holder(), holder(), holder()
    take(tmp_path, old)
    # A takeover of a token that no longer holds the lock takes nothing.
    assert take(tmp_path, new, "--takeover", third["token"])[0] == 3
    code, taken = take(tmp_path, new, "--takeover", old["token"])
    assert code == 0 and taken["reason"] == "the run that took it is gone"


def test_a_waiting_run_takes_the_lock_when_it_is_released(tmp_path: Path) -> None:
    first, second = holder(), holder()
    take(tmp_path, first)
    waiting = subprocess.Popen(
        [sys.executable, "-c", SOURCE, "take", "--holder", json.dumps(second), "--wait", "30",
         "--path", str(tmp_path / "run/lock/ascend-env.lock"), "--boot-id-file",
         str(tmp_path / "boot_id")], stdout=subprocess.PIPE, text=True)
    time.sleep(1.5)
    assert waiting.poll() is None  # still waiting
    lock(tmp_path, "release", "--token", first["token"])
    out, _ = waiting.communicate(timeout=30)
    assert waiting.returncode == 0 and json.loads(out)["holder"]["token"] == second["token"]


def test_a_waiting_run_reads_the_boot_id_at_every_try(tmp_path: Path) -> None:
    """The holder rebooted the host (marked) and took the lock again while another waited:
    the waiting run compares with the new boot, so it keeps waiting."""
    mine, other = holder(), holder()
    take(tmp_path, mine, "--may-reboot", boot="boot-1")
    waiting = subprocess.Popen(
        [sys.executable, "-c", SOURCE, "take", "--holder", json.dumps(other), "--wait", "4",
         "--path", str(tmp_path / "run/lock/ascend-env.lock"), "--boot-id-file",
         str(tmp_path / "boot_id")], stdout=subprocess.PIPE, text=True)
    time.sleep(1.0)
    take(tmp_path, mine, boot="boot-2")
    out, _ = waiting.communicate(timeout=30)
    assert waiting.returncode == 3, out
    assert json.loads(out)["holder"]["token"] == mine["token"]


def test_many_runs_at_once_one_takes_it(tmp_path: Path) -> None:
    (tmp_path / "boot_id").write_text("boot-1\n")
    runs = [subprocess.Popen([sys.executable, "-c", SOURCE, "take", "--holder",
                              json.dumps(holder()), "--path",
                              str(tmp_path / "run/lock/ascend-env.lock"), "--boot-id-file",
                              str(tmp_path / "boot_id")], stdout=subprocess.PIPE, text=True)
            for _ in range(8)]
    codes = sorted(run.wait(timeout=60) for run in runs)
    assert codes == [0] + [3] * 7
    for run in runs:
        assert run.stdout is not None
        run.stdout.close()


def test_a_lock_file_that_is_not_a_holder_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "run/lock/ascend-env.lock"
    path.parent.mkdir(parents=True)
    path.write_text("not json\n")
    code, result = take(tmp_path, holder())
    assert code == 4 and "does not hold an ascend-env lock holder" in result["reason"]
    assert path.read_text() == "not json\n"
    path.unlink()
    path.symlink_to(tmp_path / "elsewhere")
    code, result = take(tmp_path, holder())
    assert code == 4 and not (tmp_path / "elsewhere").exists()


def test_the_controller_judges_only_its_own_holders(tmp_path: Path) -> None:
    mine = holder()
    assert not holder_gone(mine)  # this very process
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    gone = {**mine, "pid": child.pid, "pid_start": start_time(child.pid)}
    assert not holder_gone(gone)
    child.kill()
    child.wait()
    assert holder_gone(gone)
    # A pid reused by another process is not the holder.
    assert holder_gone({**mine, "pid_start": (mine["pid_start"] or 0) + 1})
    assert holder_gone({**mine, "controller_boot_id": "another boot"})
    assert not holder_gone({**gone, "controller": "some-other-controller"})
    assert not holder_gone("not a holder")
    assert mine["controller_boot_id"] == boot_id()


def test_a_run_is_gone_when_nothing_holds_its_run_lock(tmp_path: Path) -> None:
    """Per run, not per process: one process's runs one after the other (a library, the
    tests), and a killed ascend-env whose tether still stops its playbook."""
    path = tmp_path / "run.lock"
    fd = hold_run_lock(path)
    running = holder(run_lock=path)
    assert not holder_gone(running)
    os.close(fd)
    assert holder_gone(running)  # this process lives on, its run ended
    # Held by another process (as the tether holds it after ascend-env died).
    other = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from pathlib import Path\n"
        "from ascend_env.ansible.host_lock import hold_run_lock\n"
        f"hold_run_lock(Path({str(path)!r})); print('held', flush=True); time.sleep(60)")],
        stdout=subprocess.PIPE, text=True)
    assert other.stdout is not None and other.stdout.readline() == "held\n"
    assert not holder_gone(running)
    other.kill()
    other.wait()
    other.stdout.close()
    assert holder_gone(running)
    assert holder_gone({**running, "run_lock": str(tmp_path / "never-made")})


def test_a_run_lock_that_cannot_be_judged_falls_back_to_the_holders_pid(tmp_path: Path) -> None:
    """The run lock's path comes from the host's lock file: a FIFO is not waited on, a link
    not followed, and neither makes a live holder look gone."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "target")
    (tmp_path / "target").write_text("")
    for path in (fifo, link):
        assert not holder_gone(holder(run_lock=path))  # this process lives
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    dead = {**holder(run_lock=fifo), "pid": child.pid, "pid_start": start_time(child.pid)}
    child.wait()
    assert holder_gone(dead)


def test_the_controller_waits_for_its_own_holders_run_to_end(tmp_path: Path) -> None:
    """A run killed without releasing a host's lock: the next run's wait sees it end here."""
    path = tmp_path / "run.lock"
    other = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from pathlib import Path\n"
        "from ascend_env.ansible.host_lock import hold_run_lock\n"
        f"hold_run_lock(Path({str(path)!r})); print('held', flush=True); sys.stdin.read()")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert other.stdout is not None and other.stdin is not None
    assert other.stdout.readline() == "held\n"
    running = holder(run_lock=path)
    assert not wait_gone(running, 0)
    other.stdin.close()  # the holder's run ends while the next one waits
    assert wait_gone(running, 120)
    other.wait()
    other.stdout.close()
    # Another controller's run is not waited for here (the host waits for its release).
    started = time.monotonic()
    assert not wait_gone({**running, "controller": "ctrl-b.lab.example"}, 120)
    assert time.monotonic() - started < 60
