"""Resolve a spec into its install plan: components in order, exact files and digests."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from ascend_env.core.errors import Problem, SpecError
from ascend_env.core.versions import try_parse
from ascend_env.spec.catalogue import Catalogue, VendorFile, load_catalogue
from ascend_env.spec.compat import check_spec
from ascend_env.spec.envspec import EnvSpec
from ascend_env.spec.matrix import Chip, load_chips, load_matrix
from ascend_env.spec.naming import NamingError, PackageKind, package_name

PLAN_SCHEMA = "ascend-env/plan/v1"

Component = Literal["driver", "firmware", "toolkit", "ops", "nnal", "nnae", "nnrt",
                    "torch", "torch_npu", "mindspore"]

# Fresh-host order (CANN install guide,
# https://www.hiascend.com/document/detail/en/CANNCommunityEdition/900/softwareinst/instg/instg_0005.html):
# driver before firmware, toolkit before the packages
# that extend it, frameworks last. An upgrade puts firmware first; the install role decides.
_CANN_ORDER: list[PackageKind] = ["nnae", "nnrt", "toolkit", "ops", "nnal"]


class PlanItem(BaseModel):
    """One thing to install: which file, from which archive, checked against which digest."""

    step: int
    component: Component
    version: str
    file: str = Field(description="the installer (.run) or wheel that is executed/installed")
    archive: str | None = Field(None, description="the zip the vendor ships the file in")
    sha256: str | None = Field(None, description="digest of the downloaded file (archive or file)")
    url: str | None = None
    file_version: str | None = Field(None, description="version in the file name, if it "
                                     "differs from the release (HDK 25.0.RC1 -> 25.0.rc1.1)")
    note: str = ""

    @property
    def download(self) -> str:
        """The file name that is downloaded and verified."""
        return self.archive or self.file


class Plan(BaseModel):
    """The resolved spec: what `install` will do, in order."""

    schema_: str = Field(PLAN_SCHEMA, alias="schema")
    spec: str
    digest: str
    chip: str
    arch: str
    devices: int
    install_path: str
    items: list[PlanItem]
    warnings: list[Problem]

    model_config = {"populate_by_name": True}


def resolve(spec: EnvSpec, catalogue: Catalogue | None = None) -> Plan:
    """Validate the spec against the matrix and resolve every file; SpecError if invalid."""
    problems = check_spec(spec)
    errors = [p for p in problems if p.severity == "error"]
    if errors:
        raise SpecError(spec.name, problems)
    catalogue = catalogue or load_catalogue()
    chip = load_chips().get(spec.hardware.chip)
    assert chip is not None
    items: list[PlanItem] = []
    warnings = list(problems)
    try:
        items += _hdk_items(spec, chip, catalogue)
    except NamingError as exc:
        warnings.append(Problem(path="driver.version", value=spec.driver.version.raw,
                                severity="warning", message=str(exc)))
    items += _cann_items(spec, chip, catalogue)
    items += _framework_items(spec, catalogue)
    for number, item in enumerate(items, start=1):
        item.step = number
    devices = spec.hardware.devices or chip.devices.default
    return Plan(spec=spec.name, digest=spec.digest(), chip=chip.name, arch=spec.hardware.arch,
                devices=devices, install_path=spec.install.path, items=items, warnings=warnings)


def _entry(catalogue: Catalogue, name: str | None) -> VendorFile | None:
    return catalogue.get(name) if name else None


def _not_catalogued(name: str) -> str:
    return f"{name} is not in the catalogue: add it with --catalogue (a file and its sha256)"


def _hdk_items(spec: EnvSpec, chip: Chip, catalogue: Catalogue) -> list[PlanItem]:
    identity = load_matrix().hdk()
    hdk = spec.driver.version
    arch = spec.hardware.arch
    # The bundle's file version can differ from the release (HDK 25.0.RC1 ships 25.0.rc1.1);
    # the catalogue's entry decides, else the matrix's mapping (spec may name either).
    bundles = [entry for entry in catalogue.find(component="NPU", kind="hdk-npu-bundle",
                                                 chip=chip.hdk_token, arch=arch)
               if (found := try_parse(entry.version)) is not None and identity.same(found, hdk)]
    hdk_file = (bundles[0].file_version if bundles and bundles[0].file_version
                else identity.file_version(hdk))
    firmware = spec.firmware.version.raw if spec.firmware.version else None
    parts: list[tuple[Literal["driver", "firmware"], str]] = [
        ("driver", hdk.raw), ("firmware", firmware or f"(HDK {hdk.raw})")]
    items = []
    for kind, version in parts:
        names = package_name(kind, chip=chip, arch=arch, hdk_file=hdk_file, firmware=firmware)
        entry = _entry(catalogue, names.bundle)
        note = "" if entry else _not_catalogued(names.bundle or names.run)
        if kind == "firmware" and firmware is None:
            note = (f"the firmware shipped in HDK {hdk.raw}; " + note).rstrip("; ")
        items.append(PlanItem(step=0, component=kind, version=version, file=names.run,
                              archive=names.bundle, sha256=entry.sha256 if entry else None,
                              url=entry.url if entry else None, note=note,
                              file_version=hdk_file if kind == "driver" else firmware))
    return items


def _cann_items(spec: EnvSpec, chip: Chip, catalogue: Catalogue) -> list[PlanItem]:
    cann = spec.cann.version
    wanted = {"ops" if package == "kernels" else package for package in spec.cann.packages}
    items = []
    for kind in _CANN_ORDER:
        if kind not in wanted:
            continue
        names = package_name(kind, chip=chip, arch=spec.hardware.arch, cann=cann)
        entry = _entry(catalogue, names.bundle) or _entry(catalogue, names.run)
        archive = entry.filename if entry and entry.filename != names.run else None
        items.append(PlanItem(step=0, component=kind, version=cann.raw, file=names.run,
                              archive=archive, sha256=entry.sha256 if entry else None,
                              url=entry.url if entry else None,
                              note="" if entry else _not_catalogued(names.run)))
    return items


def _wheel(catalogue: Catalogue, distribution: str, version: str, arch: str,
           python: str) -> VendorFile | None:
    tag = "cp" + python.replace(".", "")
    base = version.split("+", maxsplit=1)[0]
    return next((entry for entry in catalogue.find(distribution=distribution, arch=arch,
                                                   python_tag=tag)
                 if (entry.file_version or "").split("+")[0] == base), None)


def _framework_items(spec: EnvSpec, catalogue: Catalogue) -> list[PlanItem]:
    items = []
    for distribution, version in spec.framework_pins():
        entry = _wheel(catalogue, distribution, version, spec.hardware.arch, spec.python.version)
        if entry is not None:
            items.append(PlanItem(step=0, component=distribution, version=entry.file_version
                                  or version, file=entry.filename, sha256=entry.sha256,
                                  url=entry.url))
        else:
            items.append(PlanItem(step=0, component=distribution, version=version,
                                  file=f"{distribution}=={version}",
                                  note="not in the catalogue: pip resolves it from the index "
                                       "configured for the host (PyPI or a mirror)"))
    return items
