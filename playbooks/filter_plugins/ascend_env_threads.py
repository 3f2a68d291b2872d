"""Jinja filter for the env role's thread settings; the computation is the doctor's own."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ascend_env.doctor.threads import install_plan


def ascend_thread_plan(probe_output: str, wanted: dict[str, Any]) -> dict[str, Any]:
    """OMP_NUM_THREADS and CPU_AFFINITY_CONF for this host (ascend_env.doctor.threads)."""
    return install_plan(str(probe_output), dict(wanted))


class FilterModule:
    """Ansible's entry point for filter plugins."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"ascend_thread_plan": ascend_thread_plan}
