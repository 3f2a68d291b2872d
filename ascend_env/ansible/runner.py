"""Running one playbook: ansible-playbook as a subprocess, its events followed as they come.

ansible-playbook runs as a subprocess rather than through ansible-runner: it is already a
dependency (ansible-core), needs no private-data directory layout, and our own callback plugin
(playbooks/callback_plugins/ascend_env_events.py) gives the per-host events that the progress
view and the summary need, while Ansible's normal output goes to a log file kept for the user.
install (site.yml) and the doctor's fixes (fix.yml) both run through here.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from ascend_env.ansible.host_lock import command_line, hold_run_lock, holder
from ascend_env.ansible.ssh_masters import own_masters
from ascend_env.ansible.stopped import LOCK_ROLE, RunStopped, interruption
from ascend_env.core import children
from ascend_env.core.errors import UsageError
from ascend_env.core.host_target import parse_host
from ascend_env.core.resources import shipped_dir

# Where runs keep their Ansible log and events unless --log-dir says otherwise.
RUNS_DIR = Path.home() / ".cache" / "ascend-env" / "runs"

Event = dict[str, Any]
HostStatus = Literal["ok", "changed", "failed", "unreachable", "reboot required", "not run",
                     "locked", "interrupted"]


class HostResult(BaseModel):
    """How one host ended."""

    host: str
    status: HostStatus
    ok: int = 0
    changed: int = 0
    failed: int = 0
    unreachable: int = 0
    skipped: int = 0
    reboot_required: bool = False
    message: str = ""
    output: str = Field("", description="the failed task's stderr and stdout (tails), which "
                        "the install view explains")
    doctor: dict[str, Any] | None = Field(
        None, description="the post-install doctor: counts by status and the failed check ids")


@dataclass
class PlaybookRun:
    """Where and how one playbook runs: the hosts, the tags, check mode, the log folder."""

    inventory: Path | None = None
    host: str | None = None
    limit: str | None = None
    tags: list[str] | None = None
    check: bool = False
    log_dir: Path | None = None
    # Seconds a host's lock held by another run is waited for (0: refused at once).
    lock_wait: float = 0.0


def _inventory_args(run: PlaybookRun) -> list[str]:
    if run.inventory is not None:
        if not run.inventory.exists():
            raise UsageError(f"inventory {run.inventory} does not exist")
        return ["-i", str(run.inventory)]
    if run.host is not None:  # the commands refused a target Ansible cannot reach already
        return parse_host(run.host).ansible_args("ansible-playbook")
    # No inventory: this machine.
    return ["-i", "localhost,", "-c", "local"]


def ansible_playbook() -> str:
    """The ansible-playbook beside this interpreter (the venv's), else on PATH."""
    beside = Path(sys.executable).parent / "ansible-playbook"
    found = str(beside) if beside.exists() else shutil.which("ansible-playbook")
    if found is None:
        raise UsageError("ansible-playbook is not installed (it comes with ansible-core; "
                         "reinstall ascend-env)")
    return found


def _tail(path: Path, stop: threading.Event, on_event: Callable[[Event], None]) -> None:
    """Follow the events file until `stop` is set and everything written was read.

    An event is read once its whole line is there: the callback's buffer reaches the file in
    pieces when an event is longer than the buffer, so the end of the file can be the middle
    of a line. A line still unfinished when the run has ended was cut by the callback's
    process dying, and is not an event."""
    while not path.exists() and not stop.is_set():
        time.sleep(0.05)
    if not path.exists():
        return
    with path.open(encoding="utf-8") as handle:
        part = ""
        while True:
            part += handle.readline()
            if part.endswith("\n"):
                on_event(json.loads(part))
                part = ""
            elif stop.is_set():
                return
            else:
                time.sleep(0.1)


def _run_dir(base: Path) -> Path:
    run_dir = base / time.strftime("%Y%m%d-%H%M%S")
    suffix = 0
    while run_dir.exists():
        suffix += 1
        run_dir = run_dir.with_name(run_dir.name.split(".")[0] + f".{suffix}")
    run_dir.mkdir(parents=True)
    return run_dir


def run_playbook(variables: dict[str, Any], run: PlaybookRun, *,
                 playbook: str = "site.yml",
                 on_event: Callable[[Event], None] = lambda event: None) -> tuple[int, Path,
                                                                                   list[Event]]:
    """Run one playbook with the events callback; returns rc, log path and all events.

    ansible-playbook runs tethered (core/children.py): a stop signal lets it end the task in
    hand on every host, then stops it and its workers, and RunStopped says where it was.
    """
    with own_masters() as masters:
        return _run(variables, run, playbook, on_event, masters)


def _run(variables: dict[str, Any], run: PlaybookRun, playbook: str,
         on_event: Callable[[Event], None], masters: Path) -> tuple[int, Path, list[Event]]:
    run_dir = _run_dir(run.log_dir or RUNS_DIR)
    # Held while this run goes on (by this process, and by the tether until ansible-playbook
    # is gone): what tells another run on this controller whether a host's lock is stale.
    run_lock = run_dir / "run.lock"
    # Who holds each host's lock (the host_lock role), and how long to wait for another's.
    ours = {"ascend_lock_holder": holder(run_lock=run_lock), "ascend_lock_wait": run.lock_wait,
            "ansible_control_path_dir": str(masters), **variables}
    (run_dir / "extra-vars.json").write_text(json.dumps(ours, indent=2))
    events_path, log_path = run_dir / "events.jsonl", run_dir / "ansible.log"
    playbooks = shipped_dir("playbooks")
    command = [ansible_playbook(), str(playbooks / playbook), *_inventory_args(run),
               "-e", f"@{run_dir / 'extra-vars.json'}"]
    if run.limit:
        command += ["--limit", run.limit]
    if run.check:
        command += ["--check", "--diff"]
    if run.tags:
        command += ["--tags", ",".join(run.tags)]
    stop_file = run_dir / "stop"
    env = {**os.environ, "ASCEND_ENV_EVENTS": str(events_path),
           "ASCEND_ENV_STOP_FILE": str(stop_file),
           # The operator's own callbacks (profile_tasks, say) run beside ours.
           "ANSIBLE_CALLBACKS_ENABLED": ",".join(
               ["ascend_env_events", *filter(None, os.environ.get(
                   "ANSIBLE_CALLBACKS_ENABLED", "").split(","))]),
           "ANSIBLE_CALLBACK_PLUGINS": str(playbooks / "callback_plugins"),
           "ANSIBLE_NOCOLOR": "1", "ANSIBLE_RETRY_FILES_ENABLED": "0",
           # One ssh round-trip per task instead of three (module copy, run, clean-up).
           "ANSIBLE_PIPELINING": os.environ.get("ANSIBLE_PIPELINING", "True"),
           "ANSIBLE_INTERPRETER_PYTHON": os.environ.get("ANSIBLE_INTERPRETER_PYTHON",
                                                        "auto_silent")}
    events: list[Event] = []

    def collect(event: Event) -> None:
        events.append(event)
        on_event(event)

    stop = threading.Event()
    follower = threading.Thread(target=_tail, args=(events_path, stop, collect), daemon=True)
    follower.start()
    run_fd = hold_run_lock(run_lock)
    try:
        with log_path.open("w", encoding="utf-8") as log:
            log.write("$ " + " ".join(command) + "\n")
            log.flush()
            process = children.spawn(command, stdout=log, stderr=log, env=env,
                                     stop_file=stop_file, pass_fds=(run_fd,),
                                     remove=masters)
            rc = children.wait(process)
    finally:
        os.close(run_fd)
        stop.set()
        follower.join()
    signum = children.interruption()
    if signum is not None:
        raise RunStopped(interruption(signum, events, log_path, resume=command_line()), signum)
    return rc, log_path, events


def summarize(events: list[Event]) -> list[HostResult]:
    """Per-host results from the callback's events (hosts never run are `not run`)."""
    stats: dict[str, dict[str, Any]] = {}
    last_failure: dict[str, str] = {}
    last_output: dict[str, str] = {}
    locked: set[str] = set()
    hosts: set[str] = set()
    for event in events:
        if event["event"] == "play":
            hosts.update(event["hosts"])
        elif event["event"] == "stats":
            stats = event["hosts"]
        elif event["event"] == "result" and event["status"] in ("failed", "unreachable"):
            text = event.get("message") or event.get("stdout") or ""
            last_failure[event["host"]] = f"{event['task']}: {text}".strip()
            # The lock's refusal: nothing was changed, the host is another run's.
            if event.get("role") == LOCK_ROLE:
                locked.add(event["host"])
                last_failure[event["host"]] = text
            last_output[event["host"]] = "\n".join(
                str(event.get(k) or "") for k in ("stderr", "stdout") if event.get(k))
    results = []
    for host in sorted(set(stats) | set(last_failure) | hosts):
        counts = stats.get(host)
        if counts is None:
            results.append(HostResult(host=host, status="not run",
                                      message=last_failure.get(host, "the roll stopped before "
                                                               "this host's batch")))
            continue
        reboot = bool(counts.get("custom", {}).get("ascend_reboot_required"))
        if counts.get("unreachable"):
            status: HostStatus = "unreachable"
        elif host in locked:
            status = "locked"
        elif counts.get("failures"):
            status = "failed"
        elif reboot:
            status = "reboot required"
        elif counts.get("changed"):
            status = "changed"
        else:
            status = "ok"
        results.append(HostResult(
            host=host, status=status, ok=counts.get("ok", 0), changed=counts.get("changed", 0),
            failed=counts.get("failures", 0), unreachable=counts.get("unreachable", 0),
            skipped=counts.get("skipped", 0), reboot_required=reboot,
            message=last_failure.get(host, "reboot the host, then run install again"
                                     if reboot else ""),
            output=last_output.get(host, "")))
    return results
