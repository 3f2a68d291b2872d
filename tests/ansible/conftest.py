"""Real playbook variables: what `install` builds for the 910b profile (with its frameworks'
stand-in wheels) and what `doctor --fix` builds for a host with NPU ports."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

from ascend_env.ansible.variables import FixHostVars, SiteVars
from ascend_env.doctor import fix
from ascend_env.doctor.report import Report
from ascend_env.install.provision import InstallOptions, build_vars
from ascend_env.repository.installers import FRAMEWORKS, Installer
from ascend_env.repository.wheelhouse import python_stack
from ascend_env.spec.envspec import EnvSpec, build_spec
from ascend_env.spec.plan import resolve
from tests.doctor.test_network_checks import host
from tests.wheels import fill_wheels, framework_overlay

PLAYBOOKS = Path(__file__).resolve().parents[2] / "playbooks"


def load(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


GROUP_VARS: dict[str, Any] = load(PLAYBOOKS / "group_vars" / "all" / "main.yml")
# The host's settings: the ascend role's defaults, which site.yml makes public to the later
# roles (through preflight, which depends on it).
HOST_SETTINGS: dict[str, Any] = load(PLAYBOOKS / "roles" / "ascend" / "defaults" / "main.yml")
SHARED = {**GROUP_VARS, **HOST_SETTINGS}


def rendered_settings(extra_vars: dict[str, Any]) -> dict[str, Any]:
    """group_vars/all and the ascend role's defaults as Ansible's templating renders them under
    these extra vars (which outrank both)."""
    def trusted(value: Any) -> Any:
        return trust_as_template(value) if isinstance(value, str) else value
    templar = Templar(loader=DataLoader(), variables={
        **{name: trusted(value) for name, value in SHARED.items()}, **extra_vars})
    return {name: templar.template(trusted(value)) for name, value in SHARED.items()}


def profile_spec(**changes: object) -> EnvSpec:
    return build_spec({"extends": "910b", "name": "vars", "hardware": {"arch": "aarch64"},
                       "python": {"version": "3.11"}, **changes}, "test")


def site_vars_of(the_spec: EnvSpec, repo: Path, options: InstallOptions | None = None
                 ) -> SiteVars:
    """build_vars for `the_spec`, its installers standing at their repository paths."""
    plan = resolve(the_spec)
    installers: dict[str, Installer] = {
        item.component: Installer(path=repo / item.file, sha256=item.sha256 or "0" * 64)
        for item in plan.items if item.component not in FRAMEWORKS}
    repo.mkdir(exist_ok=True)
    framework_overlay(repo, the_spec)
    fill_wheels(repo)
    stack = python_stack(the_spec, repo)
    options = options or InstallOptions(repo=repo, log_dir=repo.parent / "logs")
    return SiteVars.model_validate(build_vars(the_spec, plan, installers, options, stack))


@pytest.fixture
def site_vars(tmp_path: Path) -> SiteVars:
    return site_vars_of(profile_spec(), tmp_path / "repo")


@pytest.fixture
def fix_host() -> FixHostVars:
    the_spec = build_spec({"extends": "910b", "name": "fleet",
                           "hardware": {"chip": "910b", "devices": 2},
                           "network": {"subnets": ["10.20.0.0/24", "10.20.1.0/24"],
                                       "first_host": 11, "gateway": "first",
                                       "netdetect": "gateway"}}, "test")
    facts = host(1, devices=2)
    ports = fix.network_ports(the_spec, ["sim1"], "sim1", facts)
    return FixHostVars.model_validate(fix.host_vars(facts, the_spec, ("alice",),
                                                    Report(host="sim1"), ports))
