"""Jinja filters for the ascend-env playbooks; the logic lives in the ascend_env package."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ascend_env.install.actions import decide
from ascend_env.install.wheelhouse import drift


def ascend_actions(host: dict[str, Any], target: dict[str, Any], force: bool = False
                   ) -> dict[str, Any]:
    """What to install on this host (see ascend_env.install.actions.decide)."""
    return decide(host, target, force=bool(force)).as_dict()


def ascend_venv_drift(closure: dict[str, str], installed: dict[str, str]) -> list[str]:
    """What of the wheel closure the venv lacks (see ascend_env.install.wheelhouse.drift)."""
    return drift(closure, installed)


class FilterModule:
    """Ansible's entry point for filter plugins."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"ascend_actions": ascend_actions, "ascend_venv_drift": ascend_venv_drift}
