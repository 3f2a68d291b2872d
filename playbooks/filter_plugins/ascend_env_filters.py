"""Jinja filters for the ascend-env playbooks; the logic lives in the ascend_env package."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ascend_env.install_actions import decide


def ascend_actions(host: dict[str, Any], target: dict[str, Any], force: bool = False
                   ) -> dict[str, Any]:
    """What to install on this host (see ascend_env.install_actions.decide)."""
    return decide(host, target, force=bool(force)).as_dict()


class FilterModule:
    """Ansible's entry point for filter plugins."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"ascend_actions": ascend_actions}
