"""Public releases the matrix lists beside its pairings: HDK releases, community CANN builds,
official images and framework releases whose pairing no source publishes (matrix.yaml)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer, WithJsonSchema

from ascend_env.core.versions import AscendVersion, InvalidVersionError


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


class HdkRelease(_Strict):
    """A public HDK (driver/firmware) release, with the inner code its driver carries."""

    release: VendorVersion
    inner: str | None = Field(
        None, description="driver Innerversion code (V100R001Cxx) where a source shows it")
    firmware: list[VendorVersion] = Field(
        default_factory=list, description="firmware versions shipped with it (910b first)")
    sources: list[str]
    note: str = ""


class CannBuild(_Strict):
    """A public community or pre-release CANN build (alpha, beta); its row is its release's."""

    version: VendorVersion
    sources: list[str]
    note: str = ""


class ImagePairing(_Strict):
    """An official image: the CANN, torch_npu/torch or MindSpore and Python it ships together.

    An image that serves models on a pairing is the vendor's word that the pairing works.
    """

    image: str
    tag: str
    url: str
    cann: VendorVersion
    torch_npu: str | None = None
    torch: str | None = None
    mindspore: str | None = None
    python: str | None = None
    sources: list[str]
    note: str = ""


class Unpaired(_Strict):
    """A public framework release whose CANN pairing no source publishes."""

    framework: Literal["torch_npu", "mindspore"]
    version: str
    torch: str | None = None
    sources: list[str]
    note: str = ""


