"""Jinja filters of the prerequisites role, evaluated on the controller: the logic lives in
ascend_env/install/prerequisites.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ascend_env.install.prerequisites import needed, plan


def ascend_prerequisites_needed(packages: dict[str, Any], kernel: str | None,
                                actions: dict[str, Any], python: bool) -> list[str]:
    """The OS packages this run needs on the host, the running kernel put in."""
    return needed(packages, str(kernel) if kernel else None, actions, bool(python))


def ascend_prerequisites_plan(packages: dict[str, Any], kernel: str | None,
                              wanted: list[str], query: dict[str, Any] | None,
                              python: bool | None) -> dict[str, Any]:
    """What the host lacks and installs, and the refusals before anything changes."""
    return plan(packages, str(kernel) if kernel else None, list(wanted), query or {"rc": 0},
                None if python is None else bool(python))


class FilterModule:
    """Ansible's entry point for filter plugins."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"ascend_prerequisites_needed": ascend_prerequisites_needed,
                "ascend_prerequisites_plan": ascend_prerequisites_plan}
