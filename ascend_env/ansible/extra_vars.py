"""`install -e/--extra-vars`: the forms ansible-playbook's own -e takes, read into values and
typed by the playbook's model before any host is touched, so a value a role would refuse is a
usage error (exit 2) naming the variable, not a failed run on every host.

What -e may set (docs/install.md): a SiteVars field, checked by the model; an option a role
of site.yml declares in its meta/argument_specs.yml, typed as declared; one of Ansible's own
`ansible_*` variables, which Ansible reads and checks itself. Anything else would reach no
role and is refused, as is what ascend-env sets for each run itself (the host lock's holder,
its ssh masters).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

import yaml
from ansible.errors import AnsibleError
from ansible.parsing.splitter import parse_kv
from pydantic import TypeAdapter, ValidationError

from ascend_env.ansible.role_options import declared_options, typed_option
from ascend_env.ansible.variables import SiteVars
from ascend_env.core.errors import UsageError
from ascend_env.core.inputs import load_yaml_bounded, read_text, yaml_problem

# An @FILE of variables is a few lines; a megabyte is far beyond any real one.
MAX_VARS_FILE_BYTES = 1024 * 1024
# Set by the runner for each run (ascend_env/ansible/runner.py): another value would make the
# host lock name someone else as its holder, or share another run's ssh masters.
RUN_OWN = {"ascend_lock_holder": "ascend-env's identity of this run, which the host lock "
                                 "records",
           "host_lock_holder": "ascend-env's identity of this run, which the host lock records",
           "ascend_lock_wait": "use --wait-lock",
           "ansible_control_path_dir": "each run has its own ssh masters"}


def _one(value: str) -> dict[str, Any]:
    """One -e value as ansible-playbook reads it: `@FILE` (YAML or JSON), an inline YAML or
    JSON object, or `key=value ...` (Ansible's own splitter, quotes and all)."""
    text = value.strip()
    if text.startswith("@"):
        source = read_text(text[1:], what="--extra-vars file", limit=MAX_VARS_FILE_BYTES)
        loaded = _yaml(source, f"--extra-vars {value}")
    elif text.startswith(("{", "[")):
        loaded = _yaml(text, f"--extra-vars {value!r}")
    else:
        try:
            loaded = dict(parse_kv(text)) if text else {}
        except AnsibleError as exc:
            raise UsageError(f"--extra-vars {value!r}: unbalanced quotes") from exc
        if not loaded or "_raw_params" in loaded:
            raise UsageError(f"--extra-vars {value!r}: expected key=value, @FILE or a YAML/JSON "
                             "object")
        loaded = {str(key): str(item) for key, item in loaded.items()}
    if not isinstance(loaded, Mapping):
        raise UsageError(f"--extra-vars {value!r}: not a mapping of variables")
    return {str(key): item for key, item in loaded.items()}


def _yaml(text: str, where: str) -> Any:
    try:
        return load_yaml_bounded(text) or {}
    except yaml.YAMLError as exc:
        raise UsageError(f"{where}: not valid YAML or JSON ({yaml_problem(exc)})") from exc


def read_extra_vars(values: list[str]) -> dict[str, Any]:
    """Every -e value read and merged in order (a later one wins, as in ansible-playbook);
    check_extra_vars types them."""
    merged: dict[str, Any] = {}
    for value in values:
        merged.update(_one(value))
    return merged


def check_extra_vars(variables: Mapping[str, Any], playbook: str = "site.yml"
                     ) -> dict[str, Any]:
    """`variables` typed for `playbook`: SiteVars fields by the model, role options as their
    roles declare them, Ansible's own passed on; anything else is a UsageError."""
    options = declared_options(playbook)
    typed: dict[str, Any] = {}
    for name, value in variables.items():
        if name in RUN_OWN:
            raise UsageError(f"--extra-vars {name}: set by ascend-env itself for each run "
                             f"({RUN_OWN[name]})")
        if name in SiteVars.model_fields:
            typed[name] = _model_field(name, value)
        elif name in options:
            try:
                typed[name] = typed_option(name, value, options[name])
            except ValueError as exc:
                raise UsageError(f"--extra-vars {name}={value!r}: {exc}") from exc
        elif name.startswith("ansible_"):
            typed[name] = value
        else:
            raise UsageError(
                f"--extra-vars {name}: no role of {playbook} takes this variable (misspelt?); "
                "-e sets the install's variables and the options the roles declare "
                "(ansible-doc -t role --playbook-dir playbooks ROLE lists them)")
    return typed


def _model_field(name: str, value: Any) -> Any:
    info = SiteVars.model_fields[name]
    # The field's type with its constraints (ge=0, a pattern), as the model checks it.
    field_type: Any = Annotated[info.annotation, info]
    adapter: TypeAdapter[Any] = TypeAdapter(field_type)
    try:
        checked = adapter.validate_python(value)
    except ValidationError as exc:
        reasons = "; ".join(
            ".".join([name, *(str(part) for part in error["loc"])]) + f": {error['msg']}"
            for error in exc.errors())
        raise UsageError(f"--extra-vars {name}={value!r}: {reasons}") from exc
    return adapter.dump_python(checked, mode="json")
