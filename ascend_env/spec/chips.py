"""The chip families: everything that differs from one Ascend chip to the next, as data.

All of it lives in `ascend_env/data/chips.yaml` (each entry with its public sources, cited by
the labels of matrix.yaml's `sources:`), plus any `chips:` a site's matrix overlay adds
(spec/overlay.py): how to recognise a chip (PCI id, npu-smi names), how the vendor names its
packages, whether its NPUs have RoCE ports, HCCL's ranges and the rank table layout. No code
names a chip; docs/design.md says what adding one takes.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    GetJsonSchemaHandler,
    ValidationError,
    model_validator,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from ascend_env.core.errors import UsageError
from ascend_env.core.resources import load_yaml
from ascend_env.spec.overlay import merge_chips, overlay_key, read_overlay


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ChipDevices(_Strict):
    """How many NPU devices (davinci nodes) a host of this chip family has."""

    default: int
    allowed: list[int]


class ChipSmoke(_Strict):
    """What the smoke workloads compare against on this chip (figures per device)."""

    peak_tflops: dict[Literal["fp16", "bf16"], float] = Field(
        default_factory=dict,
        description="published dense peak per device by dtype; absent = no public figure")
    tflops_fraction: float = Field(
        0.5, gt=0, le=1, description="ascend-env policy: achieved/peak below this fails "
        "(spec smoke.min_tflops_fraction overrides)")
    hccl_busbw_floor_gbps: float | None = Field(
        None, gt=0, description="all-reduce bus bandwidth floor at the largest size, GB/s; "
        "None = no public figure (spec smoke.min_busbw_gbps overrides)")
    sources: list[str] = Field(default_factory=list, description="labels for the figures")
    note: str = ""


class ChipHccl(_Strict):
    """What HCCL accepts on this chip (CANN's environment-variable reference)."""

    exec_timeout_s: dict[Literal["min", "max"], int] = Field(
        description="HCCL_EXEC_TIMEOUT's range in seconds, both ends allowed")
    sources: list[str]
    note: str = ""

    @property
    def exec_timeout_range(self) -> tuple[int, int]:
        """(lowest, highest) HCCL_EXEC_TIMEOUT this chip takes."""
        return self.exec_timeout_s["min"], self.exec_timeout_s["max"]


class Chip(_Strict):
    """A chip family: how to recognise it, how the vendor names its packages, and what its
    NPUs' network and HCCL take (everything that differs per chip lives here)."""

    name: str = Field(description="the spec's hardware.chip; the entry's key in chips.yaml")
    family: str
    pci_device_id: str
    pci_subsystems: dict[str, str] = Field(description="subsystem vendor:device -> product")
    npu_smi_names: list[str]
    # npu-smi Names that tell the family only beside a column of the table's second header
    # row (A3: Ascend910 under `Chip  Phy-ID`); see chips.yaml.
    npu_smi_names_under: dict[str, str] = Field(default_factory=dict)
    soc_versions: list[str]
    products: list[str]
    devices: ChipDevices
    chips_per_card: int = 1
    hdk_token: str | None = Field(description="chip token in HDK file names; None = unknown")
    kernels_token: str
    ops_token: str
    hbm_mb: list[int] = Field(default_factory=list)
    roce: bool = Field(description="each NPU has a RoCE port of its own (hccn_tool -i N)")
    hccl: ChipHccl
    ranktable_layout: Literal["1.0", "1.2"] = Field(
        description="the rank table version HCCL reads on this chip: 1.0 (server list) or "
        "1.2 (SuperPoD: super_device_id, super_pod_list)")
    smoke: ChipSmoke = Field(default_factory=ChipSmoke)
    sources: list[str]
    note: str = ""


class Chips(_Strict):
    """All chip families ascend-env knows."""

    schema_: str = Field(alias="schema")
    chips: dict[str, Chip]

    @model_validator(mode="after")
    def _keys_are_names(self) -> Chips:
        for key, chip in self.chips.items():
            if key != chip.name:
                raise ValueError(f"chips.{key}: its name is {chip.name!r}; the key is the name")
        return self

    def get(self, name: str) -> Chip | None:
        """A chip family by its spec name (`910b`), or None."""
        return self.chips.get(name)


def _known_chip(name: str) -> str:
    if load_chips().get(name) is None:
        raise ValueError(f"unknown chip {name!r}: chips.yaml (and the site's overlays) know "
                         f"{', '.join(sorted(load_chips().chips))}")
    return name


class _ChipNames:
    """The JSON schema's enum of chip names, read from the data when the schema is made."""

    def __get_pydantic_json_schema__(self, core_schema: CoreSchema,
                                     handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        schema: dict[str, Any] = handler(core_schema)
        schema["enum"] = sorted(load_chips().chips)
        return schema


# A chip family's name: whatever chips.yaml (with the site's overlays) defines; the data is
# the only list of chips.
ChipName = Annotated[str, AfterValidator(_known_chip), _ChipNames()]


def load_chips() -> Chips:
    """The shipped chip families with those of the site's overlays (spec/overlay.py),
    validated; cached per overlay content, as the matrix is."""
    return _load_chips(overlay_key())


@cache
def _load_chips(key: tuple[tuple[str, int, int], ...]) -> Chips:
    document = load_yaml("chips.yaml")
    # Source labels are matrix.yaml's registry, grown by each overlay's `sources`.
    labels = set(load_yaml("matrix.yaml").get("sources") or {})
    for path_text, _, _ in key:
        path = Path(path_text)
        overlay = read_overlay(path)
        labels |= set(overlay.get("sources") or {})
        added = overlay.get("chips") or {}
        if not added:
            continue
        document = merge_chips(document, overlay, path)
        try:  # validated file by file, so an error names the overlay that made it
            chips = Chips.model_validate(document)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}"
                                 for e in exc.errors()[:5])
            raise UsageError(f"matrix overlay {path}: {problems}") from None
        for name in added:
            chip = chips.chips[str(name)]
            cited = [*chip.sources, *chip.hccl.sources]
            unknown = [label for label in cited if label not in labels]
            if not chip.sources or unknown:
                raise UsageError(f"matrix overlay {path}: chips.{name} cites "
                                 f"{f'unknown source labels {unknown}' if unknown else 'no source'}"
                                 "; define each under the overlay's sources")
    return Chips.model_validate(document)
