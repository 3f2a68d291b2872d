"""Where a stopped playbook run left each host, from the events callback's lines: the task
each host was at, whether that task was cut off, and the roles it had gone through."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ascend_env.core.children import Interrupted, signal_name

INTERRUPTED_SCHEMA = "ascend-env/interrupted/v1"
LOCK_ROLE = "host_lock"
Event = dict[str, Any]


class HostPosition(BaseModel):
    """Where one host was when the run stopped."""

    host: str
    task: str | None = Field(None, description="the last task it started (null: none yet)")
    role: str | None = None
    in_progress: bool = Field(False, description="that task had not ended on this host: it "
                              "was cut off (a command it ran may have gone on, on the host, "
                              "to its end)")
    completed: list[str] = Field(default_factory=list,
                                 description="the roles it went through to the end, in order")
    tasks_done: int = 0
    changed: int = 0
    failed: bool = False

    def describe(self) -> str:
        """One line: where it stopped and what it had done."""
        if self.task is None:
            where = "stopped before its first task"
        else:
            state = "cut off in" if self.in_progress else "stopped after"
            where = f"{state} `{self.task}`" + (f" (role {self.role})" if self.role else "")
        done = ", ".join(self.completed) if self.completed else "nothing yet"
        return f"{where}; completed: {done}; {self.tasks_done} tasks ended, " \
               f"{self.changed} changed something"


class Interruption(BaseModel):
    """A run a signal stopped: where every host was, the log, and the command that goes on."""

    schema_: str = Field(INTERRUPTED_SCHEMA, alias="schema")
    signal: str
    exit_code: int
    hosts: list[HostPosition]
    log: str
    resume: str = Field(description="the command that continues: run it again (a re-run "
                        "converges; each host's lock, left by the stopped run, is taken over)")

    model_config = {"populate_by_name": True}


def positions(events: list[Event]) -> list[HostPosition]:
    """Per host of the play, where the run left it."""
    hosts: list[str] = []
    for event in events:
        if event.get("event") == "play":
            hosts += [h for h in event.get("hosts", []) if h not in hosts]
    state: dict[str, HostPosition] = {h: HostPosition(host=h) for h in hosts}
    for event in events:
        kind = event.get("event")
        if kind not in ("start", "result") or "host" not in event:
            continue
        where = state.setdefault(event["host"], HostPosition(host=event["host"]))
        role = event.get("role")
        if kind == "start":
            # The lock is bookkeeping, not a step of the install.
            if where.role and where.role != role and where.role not in where.completed \
                    and where.role != LOCK_ROLE and not where.in_progress and not where.failed:
                where.completed.append(where.role)
            task = str(event.get("task") or "")
            # Ansible names a role's task `role : name`; the role is shown on its own.
            if role and task.startswith(f"{role} : "):
                task = task[len(role) + 3:]
            where.task, where.role, where.in_progress = task, role, True
        else:
            where.in_progress = False
            where.tasks_done += 1
            where.changed += bool(event.get("changed"))
            where.failed = where.failed or event.get("status") in ("failed", "unreachable")
    return [state[h] for h in sorted(state)]


def interruption(signum: int, events: list[Event], log: Path, resume: str) -> Interruption:
    """The stopped run's account."""
    return Interruption(signal=signal_name(signum), exit_code=128 + signum,
                        hosts=positions(events), log=str(log), resume=resume)


class RunStopped(Interrupted):
    """A playbook run that a signal stopped; `account` says where (the command's report)."""

    def __init__(self, account: Interruption, signum: int) -> None:
        self.account = account
        super().__init__(signum, "\n".join(lines(account)))


def lines(account: Interruption) -> list[str]:
    """The account as the terminal shows it."""
    return [f"interrupted by {account.signal}: the run was stopped, and every process it "
            "started with it",
            *(f"  {where.host}: {where.describe()}" for where in account.hosts),
            f"full log: {account.log}",
            f"to continue, run again (a re-run converges): {account.resume}"]
