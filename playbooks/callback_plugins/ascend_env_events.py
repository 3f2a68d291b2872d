"""Ansible callback: one JSON line per event, for ascend-env's progress view and summary.

Enabled by `ascend-env install` (ANSIBLE_CALLBACKS_ENABLED=ascend_env_events) and writing to
the file named by ASCEND_ENV_EVENTS; the normal Ansible output still goes to the log file.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
name: ascend_env_events
type: notification
short_description: JSON-lines events for ascend-env
description: Writes task starts, per-host results and the final stats as JSON lines.
"""


class CallbackModule(CallbackBase):  # type: ignore[misc]
    """Emit events to $ASCEND_ENV_EVENTS."""

    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "notification"
    CALLBACK_NAME = "ascend_env_events"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self) -> None:
        super().__init__()
        path = os.environ.get("ASCEND_ENV_EVENTS")
        self._out = Path(path).open("a", encoding="utf-8") if path else None  # noqa: SIM115
        self._lock = threading.Lock()

    def _emit(self, event: str, **fields: Any) -> None:
        if self._out is None:
            return
        with self._lock:
            self._out.write(json.dumps({"event": event, "time": time.time(), **fields},
                                       default=str) + "\n")
            self._out.flush()

    def v2_playbook_on_play_start(self, play: Any) -> None:
        # Every host the play targets, so hosts a stopped roll never reached are reported too.
        manager = play.get_variable_manager()
        hosts = [host.get_name() for host in manager._inventory.get_hosts(play.hosts)]
        self._emit("play", play=play.get_name(), hosts=hosts)

    def v2_playbook_on_task_start(self, task: Any, is_conditional: bool) -> None:
        # ascend-env was asked to stop (it wrote ASCEND_ENV_STOP_FILE): the task before this
        # one has ended on every host, and this one is not queued yet. SIGINT is what
        # ansible-playbook itself turns into a clean stop ("User interrupted execution").
        stop = os.environ.get("ASCEND_ENV_STOP_FILE")
        if stop and Path(stop).exists():
            self._emit("stopping", task=task.get_name())
            os.kill(os.getpid(), signal.SIGINT)
            return
        self._emit("task", task=task.get_name(), role=task._role.get_name()
                   if task._role else None)

    def v2_runner_on_start(self, host: Any, task: Any) -> None:
        # Per host, so that a stopped run can say which host was at which task.
        self._emit("start", host=host.get_name(), task=task.get_name(),
                   role=task._role.get_name() if task._role else None)

    def _result(self, status: str, result: Any) -> None:
        data = result._result
        message = data.get("msg") or data.get("stderr") or ""
        if isinstance(message, list):
            message = "; ".join(str(m) for m in message)
        task = result._task
        # A debug task's message is what the role tells the operator (a lock taken over).
        said = status in ("failed", "unreachable") or (
            status == "ok" and task.action in ("debug", "ansible.builtin.debug"))
        self._emit("result", host=result._host.get_name(), task=task.get_name(),
                   role=task._role.get_name() if task._role else None,
                   status=status, changed=bool(data.get("changed")),
                   message=str(message)[-2000:] if said else "",
                   stdout=str(data.get("stdout", ""))[-2000:] if status == "failed" else "",
                   stderr=str(data.get("stderr", ""))[-2000:] if status == "failed" else "")

    def v2_runner_on_ok(self, result: Any) -> None:
        self._result("ok", result)

    def v2_runner_on_failed(self, result: Any, ignore_errors: bool = False) -> None:
        self._result("ignored" if ignore_errors else "failed", result)

    def v2_runner_on_unreachable(self, result: Any) -> None:
        self._result("unreachable", result)

    def v2_runner_on_skipped(self, result: Any) -> None:
        self._result("skipped", result)

    def v2_playbook_on_stats(self, stats: Any) -> None:
        hosts = {}
        for host in sorted(stats.processed):
            summary = stats.summarize(host)
            summary["custom"] = stats.custom.get(host, {})
            hosts[host] = summary
        self._emit("stats", hosts=hosts)
        if self._out is not None:
            self._out.close()
            self._out = None
