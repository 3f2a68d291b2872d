"""The compatibility matrix: which driver, CANN, frameworks and Python versions pair.

All facts live in `ascend_env/data/matrix.yaml` and `chips.yaml`, each row with its public
source; this module only types them and answers questions about them.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Literal

from packaging.version import InvalidVersion, Version
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    model_validator,
)

from ascend_env.core.errors import UsageError
from ascend_env.core.resources import load_yaml
from ascend_env.core.versions import (
    AscendVersion,
    HdkIdentity,
    nearest,
    same_release,
)

# The chip families, re-exported: most modules ask the matrix for them.
from ascend_env.spec.chips import Chip as Chip  # noqa: PLC0414
from ascend_env.spec.chips import ChipName as ChipName  # noqa: PLC0414
from ascend_env.spec.chips import Chips as Chips  # noqa: PLC0414
from ascend_env.spec.chips import load_chips as load_chips  # noqa: PLC0414
from ascend_env.spec.overlay import merge, overlay_key, read_overlay
from ascend_env.spec.releases import CannBuild, HdkRelease, ImagePairing, Unpaired

# The field type, re-exported: envspec and naming import it from here.
from ascend_env.spec.releases import VendorVersion as VendorVersion  # noqa: PLC0414

Arch = Literal["aarch64", "x86_64"]
RowStatus = Literal["followed", "alternative"]


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
    # Where the row came from: "" for ascend-env's own data, else the site overlay file
    # (spec/overlay.py sets it; an overlay cannot claim to be shipped data).
    origin: str = ""


class CannRow(_Strict):
    """One CANN release and the HDK (driver/firmware) releases it runs on."""

    cann: VendorVersion
    hdk: VendorVersion | None = Field(description="paired HDK release; None when not confirmed")
    hdk_compatible: list[str] = Field(
        default_factory=list, description="other HDK release lines (X.Y) stated to work")
    hdk_min: VendorVersion | None = Field(
        None, description="oldest HDK that works, where a source states one")
    hdk_incompatible: list[str] = Field(
        default_factory=list, description="HDK lines (X.Y) a source says do NOT work")
    firmware: VendorVersion | None = None
    python: PythonRange | None = None
    sources: list[str]
    note: str = ""
    conflict: int | None = None

    def minimum_hdk(self) -> AscendVersion | None:
        """The oldest driver a source says this CANN accepts: the stated minimum, else the
        oldest line its compatibility list names (with the paired HDK); None where the only
        fact is the HDK it was released with, which is no minimum (a CANN's own
        compatible_version list often names older drivers, as in
        https://github.com/vllm-project/vllm-ascend/issues/1047)."""
        if self.hdk_min is not None:
            return self.hdk_min
        candidates = [AscendVersion.parse(f"{line}.RC1") for line in self.hdk_compatible]
        if candidates and self.hdk is not None:
            candidates.append(self.hdk)
        return min(candidates) if candidates else None

    def refuses_hdk(self, driver: AscendVersion, hdk: HdkIdentity | None = None) -> str | None:
        """Why a source says this driver does not work with this CANN, or None.

        Only statements count: a stated minimum (`hdk_min`) or a line a source calls
        incompatible. The paired HDK alone is no minimum (a newer CANN often lists older
        drivers in its own compatible_version), so it never makes a failure.
        """
        release = hdk.release_of(driver) if hdk is not None else driver.release()
        if release.line in self.hdk_incompatible:
            return f"HDK {release.line}.x is not compatible with CANN {self.cann.raw}"
        if self.hdk_min is not None and release < self.hdk_min:
            return f"CANN {self.cann.raw} needs HDK >= {self.hdk_min.raw}"
        if self.hdk_compatible and self.hdk_min is None:
            # A release note's list of compatible lines is exhaustive: older lines are out.
            oldest = min(AscendVersion.parse(f"{line}.RC1") for line in self.hdk_compatible)
            if release < oldest and (self.hdk is None or release < self.hdk):
                return (f"CANN {self.cann.raw} lists HDK lines "
                        f"{', '.join(self.hdk_compatible)} as compatible, none older")
        return None

    def accepts_hdk(self, driver: AscendVersion, hdk: HdkIdentity | None = None) -> bool:
        """Whether the sourced pairings admit this driver (paired or a compatible line).

        `hdk` maps file spellings onto releases (Matrix.hdk()); without it only the release
        names and their case variants match.
        """
        if hdk is not None:
            driver = hdk.release_of(driver)
        if self.hdk is not None and same_release(driver.raw, self.hdk.raw, hdk):
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
    hdk_releases: list[HdkRelease] = Field(default_factory=list)
    cann_builds: list[CannBuild] = Field(default_factory=list)
    images: list[ImagePairing] = Field(default_factory=list)
    unpaired: list[Unpaired] = Field(default_factory=list)
    _hdk: HdkIdentity = PrivateAttr()

    @model_validator(mode="after")
    def _sources_known(self) -> Matrix:
        rows: Iterable[CannRow | TorchRow | MindSporeRow | TorchPython | HdkFiles | HdkRelease
                       | CannBuild | ImagePairing | Unpaired] = [
            *self.cann, *self.torch, *self.mindspore, *self.torch_python, *self.hdk_files,
            *self.hdk_releases, *self.cann_builds, *self.images, *self.unpaired]
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

    def cite(self, labels: list[str]) -> str:
        """Source labels for a message; a site overlay's are marked with their file."""
        return ", ".join(f"{label} (site overlay {self.sources[label].origin})"
                         if label in self.sources and self.sources[label].origin else label
                         for label in labels)

    # -- what is known, and what is nearest to what is not -----------------------------------

    def known_cann(self) -> list[AscendVersion]:
        """Every CANN release and public community build the matrix knows."""
        return [*(row.cann for row in self.cann), *(b.version for b in self.cann_builds)]

    def cann_known(self, cann: AscendVersion) -> bool:
        """Whether this exact CANN (a release or a listed community build) is known."""
        return any(same_release(cann.raw, known.raw) for known in self.known_cann())

    def hdk_release(self, driver: AscendVersion) -> HdkRelease | None:
        """The public HDK release a driver version is (file spellings included)."""
        hdk = self.hdk()
        return next((r for r in self.hdk_releases
                     if same_release(driver.raw, r.release.raw, hdk)), None)

    def known_hdk(self) -> list[AscendVersion]:
        """Every HDK release the matrix names (releases, pairings, stated minimums)."""
        named = [r.release for r in self.hdk_releases]
        named += [row.hdk for row in self.cann if row.hdk is not None]
        return named

    def nearest_cann(self, cann: AscendVersion) -> list[str]:
        """The known CANN releases closest to an unknown one (never empty)."""
        return [v.raw for v in nearest(cann, [row.cann for row in self.cann])]

    def nearest_hdk(self, driver: AscendVersion) -> list[str]:
        """The known HDK releases closest to an unknown driver (never empty)."""
        return [v.raw for v in nearest(self.hdk().release_of(driver), self.known_hdk())]

    def image_pairings(self, cann: AscendVersion | None = None, *, torch_npu: str | None = None,
                       mindspore: str | None = None) -> list[ImagePairing]:
        """Official images that ship this framework build (and this CANN, if given)."""
        return [image for image in self.images
                if (cann is None or same_release(image.cann.raw, cann.raw))
                and (torch_npu is None or (image.torch_npu is not None
                                           and same_release(image.torch_npu, torch_npu)))
                and (mindspore is None or (image.mindspore is not None
                                           and same_release(image.mindspore, mindspore)))]

    def framework_releases(self, framework: Literal["torch_npu", "mindspore"]) -> list[str]:
        """Every build of a framework the matrix names: rows, images and unpaired releases."""
        if framework == "torch_npu":
            named = [r.torch_npu for r in self.torch]
            named += [i.torch_npu for i in self.images if i.torch_npu]
        else:
            named = [r.mindspore for r in self.mindspore]
            named += [i.mindspore for i in self.images if i.mindspore]
        named += [u.version for u in self.unpaired if u.framework == framework]
        return list(dict.fromkeys(named))

    def unpaired_release(self, framework: Literal["torch_npu", "mindspore"], version: str
                         ) -> Unpaired | None:
        """A public release of this framework whose pairing no source publishes."""
        return next((u for u in self.unpaired
                     if u.framework == framework and same_release(u.version, version)), None)

    def nearest_framework(self, framework: Literal["torch_npu", "mindspore"], version: str,
                          count: int = 2) -> list[str]:
        """The known builds closest to an unknown one (same torch line first; never empty)."""
        known = self.framework_releases(framework)
        wanted = _pip_version(version)
        if wanted is None:
            return known[-count:]
        scored = sorted((v for v in known if _pip_version(v) is not None),
                        key=lambda v: _pip_version(v) or wanted)
        below = [v for v in scored if (_pip_version(v) or wanted) < wanted][-count:]
        above = [v for v in scored if (_pip_version(v) or wanted) > wanted][:count]
        return list(reversed(below)) + above or known[-count:]


def _pip_version(text: str) -> Version | None:
    try:
        return Version(text.split("+", maxsplit=1)[0])
    except InvalidVersion:
        return None


def load_matrix() -> Matrix:
    """The shipped matrix with the site's overlays (spec/overlay.py), validated.

    Cached per overlay content: a site that adds a file is read anew, the shipped data once.
    """
    return _load_matrix(overlay_key())


@cache
def _load_matrix(key: tuple[tuple[str, int, int], ...]) -> Matrix:
    document = load_yaml("matrix.yaml")
    for path_text, _, _ in key:
        path = Path(path_text)
        document = merge(document, read_overlay(path), path)
        try:  # validated file by file, so an error names the overlay that made it
            Matrix.model_validate(document)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}"
                                 for e in exc.errors()[:5])
            raise UsageError(f"matrix overlay {path}: {problems}") from None
        except ValueError as exc:
            raise UsageError(f"matrix overlay {path}: {exc}") from None
    return Matrix.model_validate(document)
