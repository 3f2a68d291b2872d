"""The playbook variables' models and the roles' meta/argument_specs.yml agree.

What `install` and `doctor --fix` send (SiteVars, FixVars) must be what the roles declare:
every variable a role reads is declared by it, with the type the model sends; every option a
role requires is sent, set by the playbook or defaulted; the declared defaults are the
role's defaults. The shapes are compared from the pydantic types, and a real dump of each
model is put through Ansible's own validator of role arguments.
"""

from __future__ import annotations

import re
import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

import pytest
import yaml
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from pydantic import BaseModel

from ascend_env.ansible.variables import FixHostVars, FixVars, SiteVars
from tests.ansible.conftest import GROUP_VARS, SHARED, rendered_settings

PLAYBOOKS = Path(__file__).resolve().parents[2] / "playbooks"
ROLES = PLAYBOOKS / "roles"
ROLE_NAMES = sorted(path.name for path in ROLES.iterdir() if path.is_dir())
# A whole-value template that reads one variable, optionally with a default: `{{ a.b | ... }}`.
_ONE_VARIABLE = re.compile(
    r"^\{\{\s*([a-z_][a-z0-9_]*)(?:\.([a-z_][a-z0-9_]*))?\s*(?:\|[^}]*)?\}\}$")


def load(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def options(role: str) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = load(ROLES / role / "meta" / "argument_specs.yml")[
        "argument_specs"]["main"].get("options") or {}
    return found


def defaults(role: str) -> dict[str, Any]:
    path = ROLES / role / "defaults" / "main.yml"
    return (load(path) or {}) if path.exists() else {}


def role_text(role: str) -> str:
    """Everything of a role that can read a variable (not its argument spec)."""
    return "\n".join(path.read_text(encoding="utf-8")
                     for path in sorted((ROLES / role).rglob("*"))
                     if path.is_file() and path.parent.name != "meta")


def reads(text: str, name: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", text) is not None


@dataclass
class Include:
    """A role a playbook (or a role) includes, with the variables the include sets."""

    role: str
    variables: dict[str, Any] = field(default_factory=dict)
    when: str = ""


def includes(tasks: list[dict[str, Any]]) -> Iterator[Include]:
    for task in tasks:
        for key in ("ansible.builtin.include_role", "ansible.builtin.import_role"):
            if key in task:
                when = task.get("when", "")
                yield Include(task[key]["name"], task.get("vars") or {},
                              " and ".join(when) if isinstance(when, list) else str(when))


def play(name: str) -> dict[str, Any]:
    plays: list[dict[str, Any]] = load(PLAYBOOKS / name)
    assert len(plays) == 1
    return plays[0]


def roles_of(name: str, sections: tuple[str, ...] = ("pre_tasks", "tasks", "post_tasks")
             ) -> list[Include]:
    """The roles a playbook runs (in these sections of its play), and the roles those
    include."""
    found = [include for section in sections
             for include in includes(play(name).get(section) or [])]
    nested = []
    for include in found:
        meta = ROLES / include.role / "meta" / "main.yml"
        tasks = ROLES / include.role / "tasks" / "main.yml"
        nested += [Include(dependency["role"]) for dependency in
                   ((load(meta) or {}).get("dependencies") or [] if meta.exists() else [])]
        nested += list(includes(load(tasks) or [])) if tasks.exists() else []
    return found + nested


# --- the shape Ansible's argument spec gives a pydantic type ---------------------------------

@dataclass
class Shape:
    type: str
    nullable: bool = False
    choices: list[Any] | None = None
    elements: Shape | None = None
    options: dict[str, Shape] | None = None


def shape(annotation: Any) -> Shape:
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in (Union, types.UnionType):
        inner = [arg for arg in args if arg is not type(None)]
        assert len(inner) == 1, annotation
        found = shape(inner[0])
        found.nullable = len(inner) < len(args)
        return found
    if origin is Literal:
        return Shape("str", choices=list(args))
    if origin is list:
        return Shape("list", elements=shape(args[0]))
    if origin is dict:
        return Shape("dict")
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return Shape("dict", options={name: shape(info.annotation)
                                      for name, info in annotation.model_fields.items()})
    names = {str: "str", int: "int", bool: "bool", float: "float"}
    assert annotation in names, annotation
    return Shape(names[annotation])


def disagreements(where: str, sent: Shape, option: dict[str, Any]) -> list[str]:
    """Why Ansible would refuse or misread a value of shape `sent` for `option` ([] if not)."""
    if option.get("type", "str") != sent.type:
        return [f"{where}: the model sends {sent.type}, the role declares "
                f"{option.get('type', 'str')}"]
    found = []
    # A list's choices are its elements' (checked with them below).
    if sent.elements is None and option.get("choices") is not None and (
            sent.choices is None or not set(sent.choices) <= set(option["choices"])):
        found.append(f"{where}: the role allows only {option['choices']}, the model sends "
                     f"{sent.choices or 'any ' + sent.type}")
    if sent.elements is not None:
        elements = {"type": option.get("elements", "raw"), "choices": option.get("choices"),
                    "options": option.get("options")}
        if sent.elements.options is None:
            elements.pop("options")
        found += disagreements(f"{where}[]", sent.elements, elements)
    if sent.options is not None and sent.type == "dict":
        declared = option.get("options")
        if declared is None:
            return [*found, f"{where}: the role declares no options for the model's fields"]
        for name, sub in sent.options.items():
            if name not in declared:
                found.append(f"{where}.{name}: sent, but not declared (Ansible refuses it)")
                continue
            if sub.nullable and declared[name].get("required"):
                found.append(f"{where}.{name}: the model may send null, the role requires it")
            found += disagreements(f"{where}.{name}", sub, declared[name])
        found += [f"{where}.{name}: required by the role, not in the model"
                  for name, spec in declared.items()
                  if spec.get("required") and name not in sent.options]
    return found


SITE_FIELDS = {name: shape(info.annotation) for name, info in SiteVars.model_fields.items()}
FIX_FIELDS = {name: shape(info.annotation) for name, info in FixHostVars.model_fields.items()}


# --- every role ------------------------------------------------------------------------------

def test_the_roles_are_found() -> None:
    assert {"preflight", "driver", "firmware", "cann", "python", "env", "user", "hdk_reboot",
            "fix_network_ip"} <= set(ROLE_NAMES)


@pytest.mark.parametrize("role", ROLE_NAMES)
def test_every_role_declares_its_inputs(role: str) -> None:
    """Galaxy's shape, a type and a description for each option, and every variable the role
    reads from the models, group_vars/all or its own defaults declared."""
    spec = load(ROLES / role / "meta" / "argument_specs.yml")["argument_specs"]["main"]
    assert spec["short_description"]
    declared = spec.get("options") or {}
    for name, option in declared.items():
        assert option.get("type") and option.get("description"), f"{role}: {name}"
    text = role_text(role)
    shared = set(SiteVars.model_fields) | set(SHARED) | set(defaults(role))
    undeclared = sorted(name for name in shared if reads(text, name) and name not in declared)
    assert not undeclared, f"{role} reads {undeclared} without declaring them"


@pytest.mark.parametrize("role", ROLE_NAMES)
def test_declared_defaults_are_the_roles_defaults(role: str) -> None:
    """An option's documented default is what the role really uses (templated ones aside)."""
    mine = defaults(role)
    declared = options(role)
    for name, value in mine.items():
        if isinstance(value, str) and "{{" in value:
            # Templated: a declared default must be the template's own fallback.
            fallback = re.search(r"\|\s*default\((.*)\)\s*\}\}$", value)
            if "default" in declared[name]:
                assert fallback and yaml.safe_load(fallback[1]) == declared[name]["default"], \
                    f"{role}: {name}"
        else:
            assert declared[name].get("default") == value, f"{role}: {name}"


# --- site.yml and SiteVars -------------------------------------------------------------------

def site_readers() -> dict[str, list[str]]:
    """Which site.yml roles read each SiteVars field (directly, or through group_vars/all)."""
    readers: dict[str, list[str]] = {}
    for include in roles_of("site.yml"):
        text = role_text(include.role)
        for name in options(include.role):
            if name in SITE_FIELDS or reads(text, name):
                readers.setdefault(name, []).append(include.role)
    return readers


def through_settings() -> dict[str, str]:
    """Shared settings (group_vars/all, the ascend role's defaults) that are one model field with a
    default: setting -> field."""
    found = {}
    for name, value in SHARED.items():
        matched = _ONE_VARIABLE.match(value) if isinstance(value, str) else None
        if matched and matched[1] in SITE_FIELDS and matched[2] is None:
            found[name] = matched[1]
    return found


def test_every_field_site_yml_gets_is_read_and_declared_with_its_type() -> None:
    readers = site_readers()
    play_text = (PLAYBOOKS / "site.yml").read_text(encoding="utf-8")
    group_text = yaml.safe_dump(SHARED)
    derived = through_settings()
    problems = []
    for name, sent in SITE_FIELDS.items():
        by_roles = [(role, name) for role in readers.get(name, [])]
        by_roles += [(role, entry) for entry, source in derived.items() if source == name
                     for role in readers.get(entry, [])]
        if not by_roles and not reads(play_text, name) and not reads(group_text, name):
            problems.append(f"{name}: sent, but nothing in site.yml reads it")
        for role, option in by_roles:
            problems += disagreements(f"{role}: {option}", sent, options(role)[option])
    assert not problems, "\n".join(problems)


def test_every_option_a_site_yml_role_requires_is_sent_or_set() -> None:
    first = play("site.yml")["tasks"][0]["ansible.builtin.include_role"]
    # preflight runs first and hands its dependency's defaults (the ascend role: the host's
    # settings) to the roles after it.
    assert first["name"] == "preflight" and first["public"] is True
    assert load(ROLES / "preflight" / "meta" / "main.yml")["dependencies"] == [
        {"role": "ascend"}]
    problems = []
    before = roles_of("site.yml", ("pre_tasks",))
    for include in before + roles_of("site.yml", ("tasks", "post_tasks")):
        settings = GROUP_VARS if include in before else SHARED
        for name, option in options(include.role).items():
            provided = (name in SITE_FIELDS or name in settings
                        or name in defaults(include.role) or name in include.variables)
            if option.get("required") and not provided:
                problems.append(f"{include.role}: {name} is required, nothing sets it")
            if name in SITE_FIELDS and SITE_FIELDS[name].nullable and option.get("required") \
                    and f"{name} is not none" not in include.when:
                problems.append(f"{include.role}: {name} may be null, and the role runs "
                                "without checking")
    assert not problems, "\n".join(problems)


# --- fix.yml and FixVars ---------------------------------------------------------------------

def fix_mappings() -> list[tuple[str, str, str]]:
    """(role, option, FixHostVars field) for every `{{ ascend_fix.<field> }}` fix.yml hands on."""
    play_vars = play("fix.yml")["vars"]
    found = []
    for include in roles_of("fix.yml"):
        for name, value in {**play_vars, **include.variables}.items():
            matched = _ONE_VARIABLE.match(str(value))
            if matched and matched[1] == "ascend_fix" and name in options(include.role):
                found.append((include.role, name, matched[2]))
    return found


def test_fix_yml_hands_every_field_to_a_role_that_declares_its_type() -> None:
    mappings = fix_mappings()
    problems = [f"{field_}: not a FixHostVars field ({role}: {option})"
                for role, option, field_ in mappings if field_ not in FIX_FIELDS]
    problems += [f"{name}: sent, but fix.yml hands it to no role"
                 for name in FIX_FIELDS if name not in {m[2] for m in mappings}]
    problems += [problem for role, option, field_ in mappings if field_ in FIX_FIELDS
                 for problem in disagreements(f"{role}: {option}", FIX_FIELDS[field_],
                                              options(role)[option])]
    assert not problems, "\n".join(problems)
    assert play("fix.yml")["vars"]["ascend_fix"] == \
        "{{ ascend_fix_hosts[inventory_hostname] }}"
    assert list(FixVars.model_fields) == ["ascend_fix_hosts"]


def test_every_option_a_fix_yml_role_requires_is_set() -> None:
    play_vars = play("fix.yml")["vars"]
    problems = [f"{include.role}: {name} is required, nothing sets it"
                for include in roles_of("fix.yml")
                for name, option in options(include.role).items()
                if option.get("required") and name not in play_vars
                and name not in include.variables and name not in GROUP_VARS
                and name not in defaults(include.role)]
    assert not problems, "\n".join(problems)


# --- real values through Ansible's own validator ---------------------------------------------

def validate(role: str, values: dict[str, Any]) -> list[str]:
    """What Ansible's role argument validation says of `values` (the options it declares)."""
    declared = options(role)
    given = {name: value for name, value in values.items() if name in declared}
    result = ArgumentSpecValidator(declared).validate(given)
    return [str(message) for message in result.error_messages]


def test_a_dump_of_site_vars_passes_every_site_yml_role(site_vars: SiteVars) -> None:
    dump = site_vars.model_dump(mode="json")
    values = {**rendered_settings(dump), **dump}
    assert values["ascend_set_env"] == "/usr/local/Ascend/cann/set_env.sh"
    checked = set()
    for include in roles_of("site.yml"):
        if set(options(include.role)) & set(SITE_FIELDS):
            assert validate(include.role, values) == [], include.role
            checked.add(include.role)
    assert {"preflight", "driver", "firmware", "cann", "python", "env"} <= checked
    broken = {**values, "ascend_targets": {**dump["ascend_targets"], "packages": ["kernels"]}}
    assert any("packages" in message for message in validate("preflight", broken))


def test_a_dump_of_fix_vars_passes_every_fix_yml_role(fix_host: FixHostVars) -> None:
    entry = FixVars(ascend_fix_hosts={"node1": fix_host}).model_dump(mode="json")[
        "ascend_fix_hosts"]["node1"]
    handed: dict[str, dict[str, Any]] = {}
    for role, option, field_ in fix_mappings():
        handed.setdefault(role, {})[option] = entry[field_]
    # Every fix (the play's tasks, one per fix id) gets its values from the host's entry.
    assert set(handed) == {include.role for include in roles_of("fix.yml", ("tasks",))}
    for role, values in handed.items():
        assert validate(role, values) == [], role
    ports = [{**entry["network_ports"][0], "mtu": 9000}]
    assert validate("fix_network_ip", {"fix_network_ip_ports": ports})


def test_the_operators_page_lists_every_variable_install_sends() -> None:
    page = (PLAYBOOKS.parent / "docs" / "install.md").read_text(encoding="utf-8")
    table = page[page.index("| Variable | Type | What it is |"):]
    missing = [name for name in SITE_FIELDS if f"`{name}`" not in table]
    assert not missing, f"docs/install.md's table lacks {missing}"
