"""Vendor package file names for a component, chip, arch and version, from data/packages.yaml."""

from __future__ import annotations

from functools import cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ascend_env.core.resources import load_yaml
from ascend_env.core.versions import AscendVersion
from ascend_env.spec.matrix import Arch, Chip, VendorVersion

PackageKind = Literal["driver", "firmware", "toolkit", "ops", "nnal", "nnae", "nnrt"]


class NamingError(ValueError):
    """No vendor file name is known for this component, chip and version."""


class NamingRule(BaseModel):
    """How the vendor names one kind of package during one CANN era."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True,
                              arbitrary_types_allowed=True)

    kind: PackageKind
    from_: VendorVersion | None = Field(None, alias="from")
    before: VendorVersion | None = None
    pattern: str
    chip_patterns: dict[str, str] = Field(default_factory=dict)
    bundle: str | None = None
    sources: list[str]

    def applies(self, kind: str, cann: AscendVersion | None) -> bool:
        """Whether this rule names `kind` packages of this CANN version."""
        if kind != self.kind:
            return False
        if cann is None:
            return self.from_ is None and self.before is None
        return (self.from_ is None or cann >= self.from_) and (
            self.before is None or cann < self.before)


class Naming(BaseModel):
    """All naming rules plus the arch spellings each package family uses."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    schema_: str = Field(alias="schema")
    arch_tokens: dict[Literal["cann", "hdk"], dict[Arch, str]]
    rules: list[NamingRule]


class PackageName(BaseModel):
    """The .run file of a package and, where the vendor ships one, the zip that holds it."""

    model_config = ConfigDict(frozen=True)

    run: str
    bundle: str | None
    sources: list[str]


@cache
def load_naming() -> Naming:
    """The shipped naming rules."""
    return Naming.model_validate(load_yaml("packages.yaml"))


def package_name(kind: PackageKind, *, chip: Chip, arch: Arch, cann: AscendVersion | None = None,
                 hdk_file: str | None = None, firmware: str | None = None) -> PackageName:
    """The vendor's file name for one package (raises NamingError when none is known)."""
    naming = load_naming()
    era_version = cann if kind not in ("driver", "firmware") else None
    rule = next((r for r in naming.rules if r.applies(kind, era_version)), None)
    if rule is None:
        raise NamingError(f"no {kind} package is released for CANN {cann}")
    if kind in ("driver", "firmware") and chip.hdk_token is None:
        raise NamingError(
            f"the vendor file names of the {chip.name} HDK are not known to ascend-env; "
            "supply the driver and firmware with --catalogue")
    fields = {
        "cann": cann.raw if cann is not None else "",
        "cann_arch": naming.arch_tokens["cann"][arch],
        "hdk_arch": naming.arch_tokens["hdk"][arch],
        "hdk_token": chip.hdk_token or "",
        "kernels_token": chip.kernels_token,
        "ops_token": chip.ops_token,
        "hdk_file": hdk_file or "",
        # An unpinned firmware is whichever one the HDK bundle carries.
        "firmware": firmware or "*",
    }
    pattern = rule.chip_patterns.get(chip.name, rule.pattern)
    bundle = rule.bundle.format(**fields) if rule.bundle else None
    return PackageName(run=pattern.format(**fields), bundle=bundle, sources=rule.sources)
