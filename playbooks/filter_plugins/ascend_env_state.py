"""Jinja filters for upgrades and rollbacks: the installed-state record (ascend_env.install.state),
the processes that hold an NPU (ascend_env.install.holders) and a rollback's decisions
(ascend_env.install.going_back); the logic lives in the ascend_env package."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ascend_env.ansible.variables import RollbackVars, Targets
from ascend_env.install.actions import HostReading
from ascend_env.install.going_back import decide_rollback
from ascend_env.install.holders import holder_lines, refusal
from ascend_env.install.state import before, record_after, record_line


def _plain(value: Any) -> Any:
    """Ansible's lazy containers as plain data (their items templated as they are read)."""
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def ascend_rollback_actions(host: dict[str, Any], target: dict[str, Any],
                            rollback: dict[str, Any]) -> dict[str, Any]:
    """What to do on this host to go back to the target (see going_back.decide_rollback)."""
    return decide_rollback(HostReading.model_validate(_plain(host)),
                           Targets.model_validate(_plain(target)),
                           RollbackVars.model_validate(_plain(rollback))).as_dict()


def ascend_state_before(host: dict[str, Any], line: str | None, where: str) -> dict[str, Any]:
    """What the host has as preflight read it, with the spec its record names."""
    return before(_plain(host), line, str(where))


def ascend_state_record(host: dict[str, Any], actions: dict[str, Any], targets: dict[str, Any],
                        *, spec: dict[str, Any], python: dict[str, Any] | None,
                        line: str | None, where: str) -> dict[str, Any]:
    """The record this run leaves on the host (see state.record_after)."""
    return record_after(_plain(host), _plain(actions), _plain(targets), spec=_plain(spec),
                        python=_plain(python), line=line, where=str(where))


def ascend_state_line(record: dict[str, Any]) -> str:
    """The record as one line of JSON, as the host keeps it."""
    return record_line(_plain(record))


def ascend_npu_holders(output: str, listed: list[dict[str, Any]]) -> list[str]:
    """Each process that holds an NPU, with its pid and command (see holders.holder_lines)."""
    return holder_lines(str(output), _plain(listed))


def ascend_npu_refusal(lines: list[str]) -> str:
    """Why a host with a process on its NPUs is refused a driver or firmware change."""
    return refusal([str(line) for line in lines])


class FilterModule:
    """Ansible's entry point for filter plugins."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"ascend_rollback_actions": ascend_rollback_actions,
                "ascend_state_before": ascend_state_before,
                "ascend_state_record": ascend_state_record,
                "ascend_state_line": ascend_state_line,
                "ascend_npu_holders": ascend_npu_holders,
                "ascend_npu_refusal": ascend_npu_refusal}
