"""Jinja filters for the ascend-env playbooks; the logic lives in the ascend_env package."""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping
from typing import Any

from ascend_env.ansible.variables import Targets
from ascend_env.core.resources import remote_source
from ascend_env.facts.capture import parse_capture
from ascend_env.install.actions import HostReading, decide, read_host
from ascend_env.install.captured import captured_extras, file_current, first_line
from ascend_env.repository.wheelhouse import drift


def ascend_remote_source(name: str) -> str:
    """The source of one of ascend_env/remote's programs, for `python3 -c` on a host: what the
    doctor sends too (ascend_env.core.resources.remote_source)."""
    return remote_source(str(name))


def ascend_host(capture: str | dict[str, Any], install_path: str, user: str, group: str
                ) -> dict[str, Any]:
    """The probe's capture, read as the doctor reads it (see ascend_env.install.actions)."""
    return read_host(parse_capture(capture if isinstance(capture, dict) else str(capture),
                                   where="preflight's probe"),
                     install_path=str(install_path), user=str(user), group=str(group)
                     ).model_dump(by_alias=True)


def ascend_actions(host: dict[str, Any], target: dict[str, Any], force: bool = False
                   ) -> dict[str, Any]:
    """What to install on this host (see ascend_env.install.actions.decide); both inputs are
    checked against their models on the way back from Ansible."""
    return decide(HostReading.model_validate(_plain(host)),
                  Targets.model_validate(_plain(target)), force=bool(force)).as_dict()


def _plain(value: Any) -> Any:
    """Ansible's lazy containers as plain data: their items are templated when read through
    the container's own methods, which a validator reading a list's storage bypasses."""
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def ascend_path_and_parents(path: str) -> list[str]:
    """`path`, its parent, and so on up to `/`: df reports the first of them that exists."""
    found = [posixpath.normpath(str(path))]
    while found[-1] != "/":
        found.append(posixpath.dirname(found[-1]))
    return found


def ascend_captured(capture: str | dict[str, Any]) -> dict[str, Any]:
    """The files and venv distributions of preflight's capture that later roles decide from
    (see ascend_env.install.captured)."""
    return captured_extras(parse_capture(capture if isinstance(capture, dict) else str(capture),
                                         where="preflight's probe"))


def ascend_first_line(files: dict[str, Any], path: str) -> str | None:
    """A captured file's first non-blank line; None where it was not there."""
    return first_line(dict(files), str(path))


def ascend_file_current(entry: object, content: str, mode: str) -> bool:
    """Whether a captured file already has this text, root's ownership and this mode."""
    return file_current(entry, str(content), str(mode))


def ascend_venv_drift(closure: dict[str, str], installed: dict[str, str]) -> list[str]:
    """What of the wheel closure the venv lacks (see ascend_env.repository.wheelhouse.drift)."""
    return drift(closure, installed)


class FilterModule:
    """Ansible's entry point for filter plugins."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"ascend_remote_source": ascend_remote_source, "ascend_host": ascend_host,
                "ascend_actions": ascend_actions,
                "ascend_captured": ascend_captured, "ascend_first_line": ascend_first_line,
                "ascend_file_current": ascend_file_current,
                "ascend_path_and_parents": ascend_path_and_parents,
                "ascend_venv_drift": ascend_venv_drift}
