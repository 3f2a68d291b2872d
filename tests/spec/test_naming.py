"""Vendor file names per CANN era, checked against the real names in the shipped catalogue."""

from __future__ import annotations

import pytest

from ascend_env.core.versions import parse
from ascend_env.spec.catalogue import VendorFile, load_catalogue
from ascend_env.spec.matrix import Arch, Chip, load_chips
from ascend_env.spec.naming import NamingError, PackageKind, package_name


def chip(name: str) -> Chip:
    found = load_chips().get(name)
    assert found is not None
    return found


def chip_for_token(token: str) -> Chip:
    return next(c for c in load_chips().chips.values() if token in (c.ops_token, c.hdk_token))


@pytest.mark.parametrize(("kind", "chip_name", "arch", "cann", "expected"), [
    ("toolkit", "910b", "x86_64", "8.5.0", "Ascend-cann-toolkit_8.5.0_linux-x86_64.run"),
    ("ops", "910b", "aarch64", "8.0.RC1", "Ascend-cann-kernels-910b_8.0.RC1_linux.run"),
    ("ops", "910b", "aarch64", "8.0.RC2.alpha002",
     "Ascend-cann-kernels-910b_8.0.RC2.alpha002_linux.run"),
    # Conflict #13: the community alpha of 8.0.RC3 is arch-less, the release has the arch.
    ("ops", "310p", "aarch64", "8.0.RC3.alpha001",
     "Ascend-cann-kernels-310p_8.0.RC3.alpha001_linux.run"),
    ("ops", "910b", "aarch64", "8.0.RC3", "Ascend-cann-kernels-910b_8.0.RC3_linux-aarch64.run"),
    ("ops", "910_93", "aarch64", "8.3.RC1", "Atlas-A3-cann-kernels_8.3.RC1_linux-aarch64.run"),
    # 8.5.0.alpha001 precedes 8.5.0, so it still uses the kernels name (CCI Dockerfile).
    ("ops", "910b", "x86_64", "8.5.0.alpha001",
     "Ascend-cann-kernels-910b_8.5.0.alpha001_linux-x86_64.run"),
    ("ops", "910_93", "aarch64", "8.5.0", "Ascend-cann-A3-ops_8.5.0_linux-aarch64.run"),
    ("ops", "910b", "x86_64", "9.0.0-beta.2", "Ascend-cann-910b-ops_9.0.0-beta.2_linux-x86_64.run"),
    ("nnal", "910b", "aarch64", "9.0.0", "Ascend-cann-nnal_9.0.0_linux-aarch64.run"),
])
def test_cann_file_names(kind: PackageKind, chip_name: str, arch: Arch, cann: str,
                         expected: str) -> None:
    assert package_name(kind, chip=chip(chip_name), arch=arch, cann=parse(cann)).run == expected


def test_hdk_names_use_x86_hyphen_and_lower_case() -> None:
    names = package_name("driver", chip=chip("910b"), arch="x86_64", hdk_file="25.0.rc1.1")
    assert names.run == "Ascend-hdk-910b-npu-driver_25.0.rc1.1_linux-x86-64.run"
    assert names.bundle == "Ascend-hdk-910b-npu_25.0.rc1.1_linux-x86-64.zip"
    firmware = package_name("firmware", chip=chip("910b"), arch="aarch64",
                            hdk_file="25.0.rc1.1", firmware="7.7.0.1.231")
    assert firmware.run == "Ascend-hdk-910b-npu-firmware_7.7.0.1.231.run"


def test_unknown_hdk_names_are_an_error_not_a_guess() -> None:
    with pytest.raises(NamingError, match="910_93"):
        package_name("driver", chip=chip("910_93"), arch="aarch64", hdk_file="25.5.0")


def test_nnae_is_not_released_from_8_5() -> None:
    with pytest.raises(NamingError):
        package_name("nnae", chip=chip("910b"), arch="aarch64", cann=parse("8.5.0"))


_KINDS: dict[str, PackageKind] = {"toolkit": "toolkit", "kernels": "ops", "ops": "ops",
                                  "nnae": "nnae", "nnrt": "nnrt"}


def _cann_entries() -> list[VendorFile]:
    return [e for e in load_catalogue().find(component="CANN") if e.kind in _KINDS]


@pytest.mark.parametrize("entry", _cann_entries(), ids=lambda e: e.filename)
def test_rules_reproduce_every_catalogued_cann_file(entry: VendorFile) -> None:
    owner = chip_for_token(entry.chip) if entry.chip else chip("910b")
    names = package_name(_KINDS[entry.kind], chip=owner, arch=entry.arch,  # type: ignore[arg-type]
                         cann=parse(entry.version))
    assert names.bundle == entry.filename


@pytest.mark.parametrize("entry", load_catalogue().find(component="NPU", kind="hdk-npu-bundle"),
                         ids=lambda e: e.filename)
def test_rules_reproduce_every_catalogued_hdk_bundle(entry: VendorFile) -> None:
    assert entry.chip is not None
    names = package_name("driver", chip=chip_for_token(entry.chip),
                         arch=entry.arch, hdk_file=entry.file_version)  # type: ignore[arg-type]
    assert names.bundle == entry.filename
