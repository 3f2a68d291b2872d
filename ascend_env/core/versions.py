"""CANN, HDK (driver) and firmware version strings: identity, vendor ordering, PEP 440 bridge.

Vendor versions are not PEP 440 (`8.0.RC1`, `6.3.RC3.1`, `8.0.RC1.alpha003`, `25.0.rc1.1`,
`9.0.0-beta.2`, `7.1.0.11.220`). `packaging` either rejects them or orders them wrongly
(`7.0.0.beta1` < `7.0.RC1`), so the ordering here follows the vendor's release order (the
rows of https://github.com/Ascend/pytorch/blob/master/COMPATIBILITY.md; for 9.x pre-releases
the example in aclsysGetVersionNum's doc,
https://www.hiascend.com/document/detail/en/CANNCommunityEdition/910/API/runtimeapi/aclcppdevg_03_2097.html)
and the raw spelling is kept because file names and URLs are built from it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import IntEnum
from functools import total_ordering
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version


class InvalidVersionError(ValueError):
    """A string that is not a CANN/HDK/firmware version in any known vendor form."""


class Stage(IntEnum):
    """Where a version sits inside its X.Y line: internal T builds, then RCs, then releases."""

    INTERNAL = 0
    RC = 1
    RELEASE = 2


class PreTag(IntEnum):
    """Community and 9.x pre-release tags; NONE (a real release) sorts last."""

    ALPHA = 0
    BETA = 1
    RC = 2
    NONE = 3


_PRE_NAMES = {"alpha": PreTag.ALPHA, "beta": PreTag.BETA, "rc": PreTag.RC}

# X.Y, then one of: .RCn[.P] / .Tn / .Z[.more numbers]; then an optional community tag
# (.alpha003, .beta1, -beta.2, -rc.1) and an optional npu-smi build suffix (.b033).
# An RC takes at most one patch number: every known patch has one (6.3.RC3.1, 25.0.rc1.1) and
# the PEP 440 view can only carry one (`.postP`).
# ASCII only: `\d` would otherwise accept other scripts' digits, and raw builds file names.
_VERSION_RE = re.compile(
    r"""
    (?P<major>\d+)\.(?P<minor>\d+)
    (?:
        \.rc(?P<rc>\d+)(?:\.(?P<rc_patch>\d+))?
      | \.t(?P<internal>\d+)
      | \.(?P<micro>\d+)(?P<extra>(?:\.\d+)*)
    )
    (?:
        [.-](?P<pre>alpha|beta|rc)\.?(?P<pre_num>\d+)
    )?
    (?:\.b(?P<build>\d+))?
    """,
    re.VERBOSE | re.IGNORECASE | re.ASCII,
)


def _numbers(dotted: str) -> tuple[int, ...]:
    return tuple(int(part) for part in dotted.split(".") if part)


@total_ordering
class _ByKey:
    """Equality, order and hash by `key`, text by `raw`, for the version kinds below.

    Equality follows the order, so `8.0.RC1` == `8.0.rc1` while `raw` still differs. Only
    versions of one kind compare: equality with a str could not agree with the hash (`8.0.RC1`
    and `8.0.rc1` would both have to hash like the version), so parse strings first.
    """

    raw: str
    key: Any

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, type(self)):
            return NotImplemented
        return bool(self.key == other.key)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, type(self)):
            return NotImplemented
        return bool(self.key < other.key)

    def __hash__(self) -> int:
        return hash(self.key)

    def __str__(self) -> str:
        return self.raw


@dataclass(frozen=True, eq=False)
class AscendVersion(_ByKey):
    """One vendor version: `raw` is the identity, `key` the vendor order."""

    raw: str
    major: int
    minor: int
    stage: Stage
    number: int  # RC number, micro release number, or T build number
    patch: tuple[int, ...]  # trailing numbers: `.P` patches, firmware's extra parts
    pre: PreTag = PreTag.NONE
    pre_number: int = 0
    build: int | None = None
    release_raw: str = ""  # `raw` without community tag and build suffix
    key: tuple[int | tuple[int, ...], ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        # Pre-tags sit just before their base; patches and builds follow it.
        key = (self.major, self.minor, int(self.stage), self.number, self.patch,
               int(self.pre), self.pre_number, -1 if self.build is None else self.build)
        object.__setattr__(self, "key", key)

    @classmethod
    def parse(cls, text: str) -> AscendVersion:
        """Parse any vendor form (examples in tests/core/test_versions.py)."""
        raw = text.strip()
        match = _VERSION_RE.fullmatch(raw)
        if match is None:
            raise InvalidVersionError(
                f"{text!r} is not a CANN/HDK/firmware version "
                "(expected forms like 8.0.RC1, 8.5.0, 6.3.RC3.1, 8.0.RC1.beta1, 9.0.0-beta.2, "
                "25.0.rc1.1, 7.1.0.11.220)"
            )
        groups = match.groupdict()
        pre = PreTag.NONE if groups["pre"] is None else _PRE_NAMES[groups["pre"].lower()]
        pre_number = int(groups["pre_num"] or 0)
        build = None if groups["build"] is None else int(groups["build"])
        # The release spelling ends where the community tag or the `.bNNN` build begins.
        cuts = [match.start(name) - offset
                for name, offset in (("pre", 1), ("build", 2)) if groups[name] is not None]
        release_raw = raw[: min(cuts)] if cuts else raw
        if groups["rc"] is not None:
            stage, number, patch = Stage.RC, int(groups["rc"]), _numbers(groups["rc_patch"] or "")
        elif groups["internal"] is not None:
            stage, number, patch = Stage.INTERNAL, int(groups["internal"]), ()
        else:
            stage, number, patch = Stage.RELEASE, int(groups["micro"]), _numbers(groups["extra"])
        return cls(raw, int(groups["major"]), int(groups["minor"]), stage, number, patch,
                   pre, pre_number, build, release_raw)

    @property
    def line(self) -> str:
        """The X.Y release line, e.g. `8.0` for 8.0.RC3 and 8.0.0."""
        return f"{self.major}.{self.minor}"

    @property
    def is_internal(self) -> bool:
        """True for "T" builds (`7.0.T10`), whose place in the order no source confirms."""
        return self.stage is Stage.INTERNAL

    @property
    def is_community(self) -> bool:
        """True for alpha/beta/rc community and 9.x pre-release builds."""
        return self.pre is not PreTag.NONE

    def release(self) -> AscendVersion:
        """This version without its community tag or npu-smi build suffix (its matrix row)."""
        return AscendVersion.parse(self.release_raw)

    def pep440(self) -> Version:
        """A PEP 440 view for range checks (`X.Y.RCn` -> `X.Y.0rcN`, a patch `.P` -> `.postP`)."""
        if self.stage is Stage.INTERNAL:
            raise InvalidVersionError(
                f"{self.raw!r} is an internal T build; it has no agreed place in the order"
            )
        if self.stage is Stage.RC:
            text = f"{self.major}.{self.minor}.0rc{self.number}"
            if self.patch:
                text += ".post" + ".".join(str(p) for p in self.patch)
        else:
            text = ".".join(str(n) for n in (self.major, self.minor, self.number, *self.patch))
            # Old dotted community builds collapse onto their base; 9.x tags are real pre-releases.
            if self.pre is not PreTag.NONE and "-" in self.raw:
                text += {PreTag.ALPHA: "a", PreTag.BETA: "b", PreTag.RC: "rc"}[self.pre]
                text += str(self.pre_number)
        return Version(text)

    def upper(self) -> str:
        """Release-name spelling (`25.0.RC1`): CANN files and HDK folders use upper-case RC."""
        return re.sub(r"\.rc(\d)", r".RC\1", self.raw, flags=re.IGNORECASE)

    def lower(self) -> str:
        """File-name spelling of HDK versions (`25.0.rc1.1`)."""
        return re.sub(r"\.RC(\d)", r".rc\1", self.raw, flags=re.IGNORECASE)


def parse(text: str) -> AscendVersion:
    """Shorthand for AscendVersion.parse."""
    return AscendVersion.parse(text)


def try_parse(text: str) -> AscendVersion | None:
    """The parsed version, or None when `text` is in no known form."""
    try:
        return AscendVersion.parse(text)
    except InvalidVersionError:
        return None


def satisfies(version: AscendVersion | str, specifier: str) -> bool:
    """Whether a vendor version falls in a PEP 440 range such as `>=8.0.0rc3,<8.5.0`.

    Pre-releases are always admitted explicitly: RC releases are the normal way CANN ships.
    Bounds keep PEP 440 meaning, and X.Y.RCn maps to X.Y.0rcN, so the RCs of a line sit below
    a bare `X.Y`: `<8.1` excludes 8.1.RC1 (it belongs to the 8.1 line), and `>=8.1` excludes it
    too; write `>=8.1.0rc1` to start a range at the line's first RC
    (PEP 440's exclusive ordered comparison, https://peps.python.org/pep-0440/).
    """
    parsed = version if isinstance(version, AscendVersion) else AscendVersion.parse(version)
    try:
        spec = SpecifierSet(specifier, prereleases=True)
    except InvalidSpecifier as exc:
        raise InvalidVersionError(f"{specifier!r} is not a version range: {exc}") from exc
    return spec.contains(parsed.pep440(), prereleases=True)


class HdkIdentity:
    """One name per HDK release, whatever spelling a file, folder or tool prints.

    HDK releases are named `25.0.RC1` (folders, release notes, specs) while their installer
    files, driver/version.info and npu-smi print `25.0.rc1.1` (ascend-deployer 26.0.0's
    NPU_25.0.RC1.json; npu-smi title `npu-smi 25.0.rc1.1  Version: 25.0.rc1.1`,
    vllm-project/vllm-ascend#4621). The table
    of such file versions lives in matrix.yaml (`hdk_files`); every comparison of a spec's
    driver with a host's, a plan's file or an install decision goes through `release_of`, so
    `25.0.RC1`, `25.0.rc1` and `25.0.rc1.1` are one release, while `25.0.rc1.2` (a file no
    source names) stays a version of its own. Case differences (`24.1.RC2` / `24.1.rc2`)
    and npu-smi's build suffix (`25.0.rc1.b033`) are already one version in AscendVersion.
    """

    def __init__(self, files: dict[AscendVersion, tuple[AscendVersion, ...]]) -> None:
        self._files = dict(files)
        self._release: dict[AscendVersion, AscendVersion] = {}
        for release, spellings in files.items():
            for spelling in spellings:
                known = self._release.setdefault(spelling.release(), release)
                if known != release:
                    raise ValueError(f"HDK file version {spelling.raw} is given to both "
                                     f"{known.raw} and {release.raw}")

    def release_of(self, version: AscendVersion) -> AscendVersion:
        """The HDK release this version belongs to (itself, without build suffix, if unmapped)."""
        base = version.release()
        return self._release.get(base, base)

    def same(self, a: AscendVersion, b: AscendVersion) -> bool:
        """Whether two HDK versions name the same release (`25.0.RC1` and `25.0.rc1.1`)."""
        return self.release_of(a) == self.release_of(b)

    def file_version(self, release: AscendVersion) -> str:
        """The version the release's installer files carry (`25.0.RC1` -> `25.0.rc1.1`)."""
        spellings = self._files.get(self.release_of(release))
        return spellings[0].lower() if spellings else release.lower()


# Inner release codes: `V100R001C21` in `innerversion=V100R001C21SPC001B238`, the version
# train CANN and the driver state compatibility in (https://github.com/vllm-project/vllm-ascend/issues/451,
# https://github.com/vllm-project/vllm-ascend/issues/1047).
_INNER_RE = re.compile(r"V(?P<v>\d+)R(?P<r>\d+)C(?P<c>\d+)", re.IGNORECASE | re.ASCII)


@dataclass(frozen=True, eq=False)
class InnerVersion(_ByKey):
    """An inner release code `VvvvRrrrCcc`; SPC patch and B build parts are not part of it."""

    raw: str
    key: tuple[int, int, int]

    @classmethod
    def parse(cls, text: str) -> InnerVersion | None:
        """The code at the start of `text` (`V100R001C15SPC012B220` -> V100R001C15), or None."""
        match = _INNER_RE.match(text.strip())
        if match is None:
            return None
        return cls(match.group(0).upper(), (int(match["v"]), int(match["r"]), int(match["c"])))



def inner_listed(code: InnerVersion, ranges: list[tuple[str, str]]) -> bool | None:
    """Whether a `compatible_version` list (`[C15],[C18]` or `[C13,C19]`) names the code.

    None when no entry of the list reads as an inner code: then the list says nothing.
    """
    readable = False
    for low_text, high_text in ranges:
        low, high = InnerVersion.parse(low_text), InnerVersion.parse(high_text)
        if low is None or high is None:
            continue
        readable = True
        if low <= code <= high:
            return True
    return False if readable else None


# -- one identity ---------------------------------------------------------------------------------

def _vendor_identity(version: AscendVersion, hdk: HdkIdentity | None) -> tuple[object, ...]:
    """What names a vendor release: everything but npu-smi's `.bNNN` build suffix.

    Case is already gone (the key holds numbers); an HDK file spelling (`25.0.rc1.1`) becomes
    its release (`25.0.RC1`) through the matrix's table; community tags (`.alpha003`,
    `-beta.2`) and "T" builds (`9.0.T2`) stay part of the identity: they are other builds.
    """
    if hdk is not None:
        mapped = hdk.release_of(version)
        if mapped != version.release():  # a file spelling of another release
            version = mapped
    return (version.major, version.minor, int(version.stage), version.number, version.patch,
            int(version.pre), version.pre_number)


def _framework_identity(text: str) -> str | None:
    """A pip version without its local label (`2.7.1+cpu` is torch 2.7.1), PEP 440 spelled."""
    try:
        return str(Version(text.split("+", maxsplit=1)[0]))
    except InvalidVersion:
        return None


def same_release(a: str, b: str, hdk: HdkIdentity | None = None) -> bool:
    """Whether two version strings name the same release: the one test every check uses.

    Vendor forms (driver, firmware, CANN, ops, NNAL): case (`8.0.RC1`/`8.0.rc1`), npu-smi's
    build suffix (`25.0.rc1.b033`) and, with the matrix's HDK table, file spellings
    (`25.0.rc1.1` is HDK `25.0.RC1`) do not matter. Framework versions (pip): PEP 440
    normalisation (`2.6.0-rc1` is `2.6.0rc1`, `2.8.0-dev` is `2.8.0.dev0`) without the local
    label; `.postN` and `.devN` builds stay builds of their own. Anything else compares as
    lower-case text, so two unreadable strings are the same only when they are spelled alike.
    """
    va, vb = try_parse(a), try_parse(b)
    if va is not None and vb is not None:
        return _vendor_identity(va, hdk) == _vendor_identity(vb, hdk)
    fa, fb = _framework_identity(a.strip()), _framework_identity(b.strip())
    if fa is not None and fb is not None:
        return fa == fb
    return a.strip().lower() == b.strip().lower()


def nearest(version: AscendVersion, known: list[AscendVersion], count: int = 2
            ) -> list[AscendVersion]:
    """The known releases closest to `version` in vendor order: the newest below it first,
    then the oldest above it, `count` of each at most (for "did you mean" messages)."""
    ordered = sorted(set(known))
    below = [v for v in ordered if v < version][-count:]
    above = [v for v in ordered if v > version][:count]
    return list(reversed(below)) + above


def impossible(version: AscendVersion) -> str | None:
    """Why a version in a vendor form still cannot name a release, or None.

    The vendor numbers RCs, community tags and 9.x pre-releases from 1 (`8.0.RC1`,
    `8.3.RC1.alpha001`, `9.0.0-beta.1`; tests/core/test_versions.py): a 0 there is a typo, not a
    release ascend-env does not know yet.
    """
    if version.stage is Stage.RC and version.number == 0:
        return f"{version.raw!r} cannot be a release: RC numbers start at 1 (8.0.RC1)"
    if version.pre is not PreTag.NONE and version.pre_number == 0:
        return (f"{version.raw!r} cannot be a release: alpha, beta and rc builds are numbered "
                "from 1 (8.3.RC1.alpha001, 9.0.0-beta.1)")
    return None
