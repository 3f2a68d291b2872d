"""Resolving specs into install plans: order, exact files, digests from the catalogue."""

from __future__ import annotations

import pytest

from ascend_env.core.errors import SpecError
from ascend_env.spec.envspec import build_spec, load_spec, profile_names
from ascend_env.spec.plan import resolve


def test_910b_plan_is_in_install_order_with_verified_vendor_files() -> None:
    plan = resolve(load_spec(profile="910b"))
    components = [item.component for item in plan.items]
    assert components == ["driver", "firmware", "toolkit", "ops", "torch", "torch_npu",
                          "mindspore"]
    by_component = {item.component: item for item in plan.items}
    driver = by_component["driver"]
    assert driver.file == "Ascend-hdk-910b-npu-driver_25.5.0_linux-aarch64.run"
    assert driver.archive == "Ascend-hdk-910b-npu_25.5.0_linux-aarch64.zip"
    assert driver.sha256 == "fccdeb94591fd0e241ccbc679a3b6a84b386228c6f31a87b264d63dba6becb9d"
    ops = by_component["ops"]
    assert ops.file == "Ascend-cann-910b-ops_8.5.0_linux-aarch64.run"
    assert ops.archive == "Ascend-cann-910b-ops_8.5.0_linux-aarch64.zip"
    assert ops.sha256 == "feb53734b0eab515b34ffb0cd4ce2e2148f3c0d48cfd701eeaf042e19072742d"
    torch_npu = by_component["torch_npu"]
    assert torch_npu.file == "torch_npu-2.9.0-cp311-cp311-manylinux_2_28_aarch64.whl"
    assert torch_npu.sha256 is not None
    assert [item.step for item in plan.items] == list(range(1, len(plan.items) + 1))


def test_x86_64_plan_uses_each_familys_arch_spelling() -> None:
    plan = resolve(load_spec(profile="910b", arch="x86_64"))
    files = {item.component: item for item in plan.items}
    assert files["driver"].archive == "Ascend-hdk-910b-npu_25.5.0_linux-x86-64.zip"
    assert files["toolkit"].archive == "Ascend-cann-toolkit_8.5.0_linux-x86_64.zip"
    # x86_64 torch wheels in the vendor mirror carry the +cpu local version.
    assert files["torch"].version == "2.9.0+cpu"


def test_hdk_release_and_file_version_differ_for_25_0_rc1() -> None:
    spec = build_spec({"extends": "910b", "driver": {"version": "25.0.RC1"},
                       "cann": {"version": "8.1.RC1"},
                       "frameworks": {"torch": {"version": "2.5.1", "torch_npu": "2.5.1"},
                                      "mindspore": None}}, "t")
    items = {item.component: item for item in resolve(spec).items}
    assert items["driver"].file == "Ascend-hdk-910b-npu-driver_25.0.rc1.1_linux-aarch64.run"
    assert items["ops"].file == "Ascend-cann-kernels-910b_8.1.RC1_linux-aarch64.run"
    assert items["ops"].sha256 is not None


def test_files_missing_from_the_catalogue_are_flagged_not_invented() -> None:
    plan = resolve(load_spec(profile="a3"))
    assert not [i for i in plan.items if i.component == "driver"]
    assert any("910_93" in w.message for w in plan.warnings)
    nnal = resolve(build_spec({"extends": "910b", "cann": {"packages": ["toolkit", "ops",
                                                                         "nnal"]}}, "t"))
    item = next(i for i in nnal.items if i.component == "nnal")
    assert item.sha256 is None
    assert "--catalogue" in item.note


@pytest.mark.parametrize("name", profile_names())
def test_every_profile_resolves(name: str) -> None:
    plan = resolve(load_spec(profile=name))
    assert plan.items
    assert plan.digest == load_spec(profile=name).digest()


def test_invalid_spec_does_not_resolve() -> None:
    with pytest.raises(SpecError):
        resolve(build_spec({"extends": "910b", "driver": {"version": "23.0.3"}}, "t"))
