"""The compatibility matrix: which driver, CANN, frameworks and Python versions pair.

All facts live in `ascend_env/data/matrix.yaml` and `chips.yaml`, each row with its public
source; this module only types them and answers questions about them.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    PrivateAttr,
    WithJsonSchema,
    model_validator,
)

from ascend_env.core.resources import load_yaml
from ascend_env.core.versions import AscendVersion, HdkIdentity, InvalidVersionError

Arch = Literal["aarch64", "x86_64"]
ChipName = Literal["910", "910b", "910_93", "310p"]
RowStatus = Literal["followed", "alternative"]


def _vendor_version(value: object) -> AscendVersion:
    if isinstance(value, AscendVersion):
        return value
    try:
        return AscendVersion.parse(str(value))
    except InvalidVersionError as exc:
        raise ValueError(str(exc)) from exc


# A vendor version inside a pydantic model: parsed on the way in, its raw spelling on the way out.
VendorVersion = Annotated[
    AscendVersion,
    BeforeValidator(_vendor_version),
    PlainSerializer(lambda version: version.raw, return_type=str),
    WithJsonSchema({"type": "string",
                    "examples": ["8.5.0", "8.0.RC3", "25.0.RC1", "9.0.0-beta.2"]}),
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)


class PythonRange(_Strict):
    """An inclusive range of CPython minor versions, written `3.9-3.11` in the data."""

    low: tuple[int, int]
    high: tuple[int, int]

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value: object) -> object:
        if isinstance(value, str):
            low, _, high = value.partition("-")
            return {"low": _minor(low), "high": _minor(high or low)}
        return value

    def __contains__(self, version: str) -> bool:
        return self.low <= _minor(version) <= self.high

    def __str__(self) -> str:
        return f"{self.low[0]}.{self.low[1]}-{self.high[0]}.{self.high[1]}"

    def minors(self) -> list[str]:
        """Every minor version in the range, e.g. ['3.9', '3.10', '3.11']."""
        return [f"3.{m}" for m in range(self.low[1], self.high[1] + 1)] if self.low[0] == 3 else []


def _minor(text: str) -> tuple[int, int]:
    parts = text.strip().split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts[:2]):
        raise ValueError(f"{text!r} is not a Python version like 3.11")
    return int(parts[0]), int(parts[1])


class Source(_Strict):
    """A public document a row is taken from."""

    title: str
    url: str


class CannRow(_Strict):
    """One CANN release and the HDK (driver/firmware) releases it runs on."""

    cann: VendorVersion
    hdk: VendorVersion | None = Field(description="paired HDK release; None when not confirmed")
    hdk_compatible: list[str] = Field(
        default_factory=list, description="other HDK release lines (X.Y) stated to work")
    hdk_min: VendorVersion | None = Field(
        None, description="oldest HDK that works, where a source states one")
    firmware: VendorVersion | None = None
    python: PythonRange | None = None
    sources: list[str]
    note: str = ""
    conflict: int | None = None

    def minimum_hdk(self) -> AscendVersion | None:
        """The oldest driver this CANN accepts: stated minimum, else oldest compatible line."""
        if self.hdk_min is not None:
            return self.hdk_min
        candidates = [AscendVersion.parse(f"{line}.RC1") for line in self.hdk_compatible]
        if self.hdk is not None:
            candidates.append(self.hdk)
        return min(candidates) if candidates else None

    def accepts_hdk(self, driver: AscendVersion, hdk: HdkIdentity | None = None) -> bool:
        """Whether the sourced pairings admit this driver (paired or a compatible line).

        `hdk` maps file spellings onto releases (Matrix.hdk()); without it only the release
        names and their case variants match.
        """
        if hdk is not None:
            driver = hdk.release_of(driver)
        if self.hdk is not None and driver.release() == self.hdk.release():
            return True
        return driver.line in self.hdk_compatible or (
            self.hdk is not None and driver.line == self.hdk.line)


class HdkFiles(_Strict):
    """An HDK release whose files, version.info and npu-smi print another version."""

    release: VendorVersion
    files: list[VendorVersion] = Field(min_length=1, description="first = installer files")
    sources: list[str]
    note: str = ""


class TorchRow(_Strict):
    """One torch_npu release: the torch it extends, the CANN it needs, its Pythons."""

    cann: VendorVersion
    torch_npu: str
    torch: str
    branch: str = ""
    python: PythonRange
    wheels: PythonRange | None = Field(None, description="cp tags in the ascend-deployer mirror")
    status: RowStatus = "followed"
    sources: list[str]
    conflict: int | None = None
    note: str = ""


class MindSporeRow(_Strict):
    """One MindSpore release and the CANN/HDK/Python it is documented with."""

    mindspore: str
    cann: VendorVersion
    community: VendorVersion | None = Field(None, description="matching community CANN build")
    python: PythonRange | None
    hdk: VendorVersion | None = None
    solution: str = ""
    status: RowStatus = "followed"
    sources: list[str]
    conflict: int | None = None
    note: str = ""


class TorchPython(_Strict):
    """PyTorch release -> supported Python range."""

    torch: list[str]
    python: PythonRange
    sources: list[str]


class Claim(_Strict):
    """One side of a disagreement between sources."""

    says: str
    sources: list[str]


class Conflict(_Strict):
    """Two sources disagree; the tool follows one side and says why."""

    id: int
    topic: str
    a: Claim
    b: Claim
    follows: Literal["a", "b", "both"]
    why: str


class Matrix(_Strict):
    """The whole compatibility matrix."""

    schema_: str = Field(alias="schema")
    sources: dict[str, Source]
    cann: list[CannRow]
    hdk_files: list[HdkFiles] = Field(default_factory=list)
    torch: list[TorchRow]
    mindspore: list[MindSporeRow]
    torch_python: list[TorchPython]
    conflicts: list[Conflict]
    _hdk: HdkIdentity = PrivateAttr()

    @model_validator(mode="after")
    def _sources_known(self) -> Matrix:
        rows: Iterable[CannRow | TorchRow | MindSporeRow | TorchPython | HdkFiles] = [
            *self.cann, *self.torch, *self.mindspore, *self.torch_python, *self.hdk_files]
        conflict_ids = {c.id for c in self.conflicts}
        for row in rows:
            if not row.sources:
                raise ValueError(f"row {row!r} names no source")
            unknown = [s for s in row.sources if s not in self.sources]
            if unknown:
                raise ValueError(f"row {row!r} cites unknown source labels {unknown}")
            conflict = getattr(row, "conflict", None)
            if conflict is not None and conflict not in conflict_ids:
                raise ValueError(f"row {row!r} cites unknown conflict #{conflict}")
        for conflict in self.conflicts:
            for claim in (conflict.a, conflict.b):
                unknown = [s for s in claim.sources if s not in self.sources]
                if unknown:
                    raise ValueError(f"conflict #{conflict.id} cites unknown sources {unknown}")
        self._hdk = HdkIdentity({row.release: tuple(row.files) for row in self.hdk_files})
        return self

    def hdk(self) -> HdkIdentity:
        """The one mapping of HDK spellings (files, version.info, npu-smi) onto releases."""
        return self._hdk

    def cann_row(self, cann: AscendVersion) -> CannRow | None:
        """The row for this CANN release (community builds map onto their release)."""
        release = cann.release()
        return next((row for row in self.cann if row.cann == release), None)

    def torch_rows(self, cann: AscendVersion | None = None) -> list[TorchRow]:
        """torch_npu rows, optionally only those for one CANN release."""
        if cann is None:
            return list(self.torch)
        release = cann.release()
        return [row for row in self.torch if row.cann == release]

    def mindspore_rows(self, cann: AscendVersion | None = None) -> list[MindSporeRow]:
        """MindSpore rows, optionally only those for one CANN release."""
        if cann is None:
            return list(self.mindspore)
        release = cann.release()
        return [row for row in self.mindspore if row.cann == release]

    def python_for_torch(self, torch: str) -> TorchPython | None:
        """The PyTorch -> Python row that covers this torch release."""
        base = torch.split("+", maxsplit=1)[0]
        return next((row for row in self.torch_python if base in row.torch), None)

    def conflict(self, conflict_id: int) -> Conflict:
        """A conflict by its id (ids are checked at load time)."""
        return next(c for c in self.conflicts if c.id == conflict_id)


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


class Chip(_Strict):
    """A chip family: how to recognise it and how the vendor names its packages."""

    name: ChipName
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
    smoke: ChipSmoke = Field(default_factory=ChipSmoke)
    sources: list[str]
    note: str = ""


class Chips(_Strict):
    """All chip families ascend-env knows."""

    schema_: str = Field(alias="schema")
    chips: dict[ChipName, Chip]

    def get(self, name: str) -> Chip | None:
        """A chip family by its spec name (`910b`), or None."""
        return self.chips.get(name)  # type: ignore[call-overload,no-any-return]


@cache
def load_matrix() -> Matrix:
    """The shipped matrix, validated (cached: it is read-only data)."""
    return Matrix.model_validate(load_yaml("matrix.yaml"))


@cache
def load_chips() -> Chips:
    """The shipped chip families, validated."""
    return Chips.model_validate(load_yaml("chips.yaml"))
