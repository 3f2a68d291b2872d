"""Jinja filters of the host_lock role, evaluated on the controller: the logic lives in
ascend_env/ansible/host_lock.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ascend_env.ansible.host_lock import describe, holder_gone


def ascend_lock_gone(found: Any) -> bool:
    """Whether the run holding a host's lock is surely gone (judged on this controller)."""
    return holder_gone(found)


def ascend_lock_describe(found: Any) -> str:
    """The holder as the operator reads it: pid, controller, command, since when."""
    return describe(found)


class FilterModule:
    """Ansible's entry point for filter plugins."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"ascend_lock_gone": ascend_lock_gone, "ascend_lock_describe": ascend_lock_describe}
