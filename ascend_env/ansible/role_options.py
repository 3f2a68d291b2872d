"""What the roles of a playbook declare they take: their meta/argument_specs.yml options.

`install -e` accepts a role's declared option (hdk_reboot_timeout, say) typed as that
declaration says, with Ansible's own validator of role arguments, so a value the role would
refuse on every host is refused on the controller first.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import yaml
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ascend_env.core.resources import shipped_dir

_ROLE_KEYS = ("ansible.builtin.include_role", "ansible.builtin.import_role")


def _load(path: Any) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else None


def playbook_roles(playbook: str) -> list[str]:
    """The roles a shipped playbook runs, and the roles they depend on (meta/main.yml)."""
    playbooks = shipped_dir("playbooks")
    found: list[str] = []
    for play in _load(playbooks / playbook) or []:
        for section in ("pre_tasks", "tasks", "post_tasks"):
            for task in play.get(section) or []:
                found += [task[key]["name"] for key in _ROLE_KEYS if key in task]
        found += [role if isinstance(role, str) else role["role"]
                  for role in play.get("roles") or []]
    index = 0
    while index < len(found):
        meta = _load(playbooks / "roles" / found[index] / "meta" / "main.yml") or {}
        found += [dependency["role"] for dependency in meta.get("dependencies") or []
                  if dependency["role"] not in found]
        index += 1
    return list(dict.fromkeys(found))


@cache
def declared_options(playbook: str) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """Each option the playbook's roles declare (any entry point), with every declaration
    of it: option name -> [(role, its argument spec), ...]."""
    found: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    roles = shipped_dir("playbooks") / "roles"
    for role in playbook_roles(playbook):
        specs = (_load(roles / role / "meta" / "argument_specs.yml") or {}).get(
            "argument_specs") or {}
        for entry in specs.values():
            for name, option in (entry.get("options") or {}).items():
                if (role, option) not in found.setdefault(name, []):
                    found[name].append((role, option))
    return found


def typed_option(name: str, value: Any, declarations: list[tuple[str, dict[str, Any]]]
                 ) -> Any:
    """`value` converted as every role that declares `name` converts it (Ansible's own
    validator); ValueError naming the role and Ansible's reason when one refuses it."""
    typed = value
    for role, option in declarations:
        # Only this option, and not required here: the run sends the others.
        alone = {key: spec for key, spec in option.items() if key not in ("required", "default")}
        result = ArgumentSpecValidator({name: alone}).validate({name: typed})
        if result.error_messages:
            raise ValueError(f"role {role} refuses it: " + "; ".join(
                str(message) for message in result.error_messages))
        typed = result.validated_parameters[name]
    return typed
