"""What `install` hands site.yml: one SiteVars, dumped; the spec's install path and user under
their own names, so that an inventory can set them per host; overrides checked by the model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ascend_env.ansible.variables import SiteVars
from ascend_env.core.errors import UsageError
from ascend_env.install.provision import InstallOptions, build_vars
from ascend_env.repository.installers import FRAMEWORKS, Installer
from ascend_env.spec.cann_layout import cann_layout
from ascend_env.spec.envspec import EnvSpec, build_spec
from ascend_env.spec.plan import resolve
from tests.ansible.conftest import profile_spec, rendered_settings, site_vars_of


def bare_vars(the_spec: EnvSpec, tmp_path: Path, **options: Any) -> dict[str, Any]:
    """build_vars without the python component (no wheels needed)."""
    plan = resolve(the_spec)
    installers: dict[str, Installer] = {item.component: Installer(path=tmp_path / item.file,
                                            sha256=item.sha256 or "0" * 64)
                  for item in plan.items if item.component not in FRAMEWORKS}
    return build_vars(the_spec, plan, installers, InstallOptions(repo=tmp_path, **options))


def test_the_dump_is_one_site_vars_with_the_spec_values_under_their_own_names(
        tmp_path: Path) -> None:
    the_spec = profile_spec(install={"path": "/opt/Ascend", "user": "npuadmin"})
    variables = bare_vars(the_spec, tmp_path)
    model = SiteVars.model_validate(variables)
    assert model.model_dump(mode="json") == variables
    # Extra vars outrank the inventory: what a host may override is not sent as the role
    # input itself, but as the spec's value that preflight's defaults turn into the default.
    assert "ascend_install_path" not in variables and "ascend_user" not in variables
    assert (model.ascend_spec_install_path, model.ascend_spec_user) == ("/opt/Ascend",
                                                                        "npuadmin")
    rendered = rendered_settings(variables)
    assert rendered["ascend_install_path"] == "/opt/Ascend"
    assert rendered["ascend_user"] == rendered["ascend_group"] == "npuadmin"


@pytest.mark.parametrize(("cann", "hdk", "set_env", "home"), [
    ("8.5.0", "25.5.0", "cann/set_env.sh", "cann"),
    ("8.3.RC1", "25.3.RC1", "ascend-toolkit/set_env.sh", "ascend-toolkit/latest"),
])
def test_the_toolkit_paths_follow_the_hosts_install_path(cann: str, hdk: str, set_env: str,
                                                         home: str, tmp_path: Path) -> None:
    """Relative to the install path, so a host with its own install path gets its own
    set_env.sh; with the spec's path they are the layout's (spec/cann_layout.py)."""
    the_spec = build_spec({"extends": "910b", "name": "layout", "driver": {"version": hdk},
                           "cann": {"version": cann},
                           "frameworks": {"torch": None, "mindspore": None}}, "test")
    variables = bare_vars(the_spec, tmp_path)
    assert (variables["ascend_cann_set_env"], variables["ascend_cann_home"]) == (set_env, home)
    rendered = rendered_settings(variables)
    assert rendered["ascend_set_env"] == cann_layout(the_spec).set_env
    per_host = rendered_settings({**variables, "ascend_install_path": "/data/Ascend"})
    assert per_host["ascend_set_env"] == f"/data/Ascend/{set_env}"
    assert per_host["ascend_toolkit_home"] == f"/data/Ascend/{home}"


def test_the_components_narrow_the_targets_and_serial_sets_the_roll(tmp_path: Path) -> None:
    everything = SiteVars.model_validate(bare_vars(profile_spec(), tmp_path))
    assert everything.ascend_targets.driver and everything.ascend_targets.cann == "8.5.0"
    assert everything.ascend_files.driver and everything.ascend_digests.toolkit
    assert (everything.ascend_serial, everything.ascend_max_fail_percentage) == (0, 100)
    env_only = SiteVars.model_validate(bare_vars(profile_spec(), tmp_path, components=["env"],
                                                 serial=2))
    targets = env_only.ascend_targets
    assert (targets.driver, targets.firmware, targets.cann) == (None, None, None)
    assert targets.packages == ["toolkit", "ops"]
    assert (env_only.ascend_serial, env_only.ascend_max_fail_percentage) == (2, 0)


def test_an_override_of_a_field_is_checked_a_roles_tunable_passes(tmp_path: Path) -> None:
    variables = bare_vars(profile_spec(), tmp_path, extra_vars={
        "ascend_pci_expected": 0, "hdk_reboot_timeout": 60})
    assert variables["ascend_pci_expected"] == 0 and variables["hdk_reboot_timeout"] == 60
    with pytest.raises(UsageError, match="ascend_serial"):
        bare_vars(profile_spec(), tmp_path, extra_vars={"ascend_serial": "many"})
    with pytest.raises(UsageError, match=r"ascend_targets\.packages"):
        bare_vars(profile_spec(), tmp_path, extra_vars={
            "ascend_targets": {"packages": ["kernels"]}})


def test_the_frameworks_go_as_python_vars(tmp_path: Path) -> None:
    model = site_vars_of(profile_spec(), tmp_path / "repo")
    assert model.ascend_python is not None and model.ascend_python.offline
    assert model.ascend_python.bundle and Path(model.ascend_python.bundle).is_file()
    assert model.ascend_python.version == "3.11"
    assert bare_vars(profile_spec(), tmp_path)["ascend_python"] is None
