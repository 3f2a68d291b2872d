"""Jinja filters of the host_lock role, evaluated on the controller: the logic lives in
ascend_env/ansible/host_lock.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ascend_env.ansible.host_lock import describe, judged_here, wait_gone


def ascend_lock_gone(found: Any, wait: Any = 0) -> bool:
    """Whether the run holding a host's lock is surely gone (judged on this controller),
    waiting up to `wait` seconds for a run of this controller to end. It blocks only the
    worker of that host, as a remote wait would."""
    try:
        seconds = min(max(float(wait), 0.0), 86400.0)
    except (TypeError, ValueError):
        seconds = 0.0
    return wait_gone(found, seconds)


def ascend_lock_judged_here(found: Any) -> bool:
    """Whether the holder's run started on this controller (its end is seen here)."""
    return judged_here(found)


def ascend_lock_describe(found: Any) -> str:
    """The holder as the operator reads it: pid, controller, command, since when."""
    return describe(found)


class FilterModule:
    """Ansible's entry point for filter plugins."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"ascend_lock_gone": ascend_lock_gone, "ascend_lock_describe": ascend_lock_describe,
                "ascend_lock_judged_here": ascend_lock_judged_here}
