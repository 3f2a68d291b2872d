"""The vendor version model: real strings in vendor order, the PEP 440 bridge, identity,
grammar-generated properties and bad input."""

from __future__ import annotations

import itertools
import random
import re
from typing import NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.version import Version

from ascend_env.core.versions import (
    AscendVersion,
    HdkIdentity,
    InnerVersion,
    InvalidVersionError,
    PreTag,
    Stage,
    inner_listed,
    nearest,
    parse,
    same_release,
    satisfies,
    try_parse,
)

# Hypothesis keeps no example database: `.hypothesis/` is not in the repo's ignore list.
PROPERTY = settings(database=None, max_examples=300)

# --------------------------------------------------------------------------------------------
# 1. Real version strings, written in vendor order per family (Ascend/pytorch
#    COMPATIBILITY.md, the CANN release notes, tests/data/real). Two neighbours are equal
#    only where listed in EQUAL.
# --------------------------------------------------------------------------------------------

CANN_ORDER = [
    "5.0.5.alpha001",  # community build of 5.0.5, below the next major line
    "6.0.1",
    "6.3.RC1",
    "6.3.RC2",
    "6.3.RC3",
    "6.3.RC3.1",  # a patch follows its base
    "7.0.RC1.alpha003",  # old-scheme community build sits just before its base
    "7.0.RC1",
    # 7.0.0.beta1 came after 7.0.RC1 (community build of 7.0.0); packaging puts it before.
    "7.0.0.beta1",
    "7.0.0",
    "7.0.1",
    "8.0.RC1.alpha003",
    "8.0.RC1.beta1",  # alpha < beta < base
    "8.0.RC1",
    "8.0.RC2.alpha002",
    "8.0.RC2",
    "8.0.RC3",
    "8.0.RC3.20",  # patch of 8.0.RC3, still an RC of 8.0: below every 8.0.Z
    "8.0.0.beta1",  # community build of 8.0.0: after all 8.0 RCs, before 8.0.0
    "8.0.0",
    "8.1.RC1",  # minors compare by number; the RCs of 8.1 follow 8.0.0
    "8.2.RC1",
    "8.2.RC2",
    "8.3.RC1.alpha002",
    "8.3.RC1",
    "8.3.RC2",
    "8.5.0.alpha001",  # no 8.4 was released; the alpha sits before 8.5.0
    "8.5.0",
    "8.5.1",
    "8.5.2",
    # 9.x: the verbatim chain of aclsysGetVersionNum's doc,
    # https://www.hiascend.com/document/detail/en/CANNCommunityEdition/910/API/runtimeapi/aclcppdevg_03_2097.html
    # (SemVer-like pre-release order).
    "9.0.0-alpha.1",
    "9.0.0-alpha.2",
    "9.0.0-beta.1",
    "9.0.0-beta.2",
    "9.0.0-rc.1",
    "9.0.0-rc.2",
    "9.0.0",
    "9.0.1",
    "9.1.0-beta.3",
    "9.1.0",
    "9.1.1",
    "9.2.0",
]

HDK_ORDER = [
    "23.0.rc1",
    "23.0.rc2",
    "23.0.RC3",  # release-name spelling ...
    "23.0.rc3",  # ... and file-name spelling of the same version (EQUAL)
    "23.0.0",  # every RC of 23.0 comes before every 23.0.Z
    "23.0.1",
    "23.0.2.1",  # extra part follows its base (folder `Ascend HDK 23.0.2.1`)
    "23.0.3",
    "23.0.5",
    "23.0.7",
    "24.1.RC1",
    "24.1.rc2",
    "24.1.rc3",
    "24.1.rc3.1",  # legacy A300 driver patch follows its base
    "24.1.0",
    "24.1.0.3",  # npu-smi prints a patch part after the release it belongs to
    "25.0.RC1",
    # npu-smi build suffix: follows its base; a numbered patch ranks above any build of the
    # base (model rule: builds are the last key part; no source orders these two).
    "25.0.rc1.b033",
    "25.0.rc1.1",  # the files of HDK 25.0.RC1
    "25.2.0",
    "25.3.RC1",
    "25.5.0",
    "25.5.1",
    "25.5.2",
    "25.7.RC1",
    "26.0.RC1",
    "26.0.RC3",
    "26.1.0",
    "26.1.1",
    "26.2.RC1",
]

FIRMWARE_ORDER = [
    "6.3.0.1.241",
    "6.4.0.4.220",
    "6.4.12.1.241",  # numeric, not text order: 12 > 0 (and "12" < "4" as text)
    "7.0.0.5.242",
    "7.1.0.4.220",
    "7.1.0.5.220",
    "7.1.0.6.220",
    "7.1.0.11.220",  # 11 > 6 numerically
    "7.3.0.1.231",
    "7.6.0.1.220",
    "7.7.0.1.231",
]

FAMILIES = {"cann": CANN_ORDER, "hdk": HDK_ORDER, "firmware": FIRMWARE_ORDER}
# Pairs that are one version in two spellings; within each pair the raw strings sort as text.
EQUAL = {("23.0.RC3", "23.0.rc3")}


def test_the_table_has_enough_real_versions() -> None:
    everything = [raw for family in FAMILIES.values() for raw in family]
    assert len(everything) >= 40
    assert len(set(everything)) == len(everything)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_shuffled_real_versions_sort_back_into_vendor_order(family: str) -> None:
    expected = FAMILIES[family]
    shuffled = [parse(raw) for raw in expected]
    random.Random(f"ascend-env/{family}").shuffle(shuffled)
    assert [v.raw for v in shuffled] != expected
    # Ties (one version, two spellings) are broken by the raw text so the result is exact.
    assert [v.raw for v in sorted(shuffled, key=lambda v: (v, v.raw))] == expected
    assert sorted(shuffled) == [parse(raw) for raw in expected]


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_neighbours_in_the_table_are_strictly_ordered(family: str) -> None:
    order = FAMILIES[family]
    for low, high in itertools.pairwise(order):
        if (low, high) in EQUAL:
            assert parse(low) == parse(high)
        else:
            assert parse(low) < parse(high), (low, high)
            assert not parse(high) < parse(low), (low, high)


# --------------------------------------------------------------------------------------------
# 2. The packaging view (PEP 440, https://peps.python.org/pep-0440/).
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "pep440"),
    [
        ("8.0.RC1", "8.0.0rc1"),
        ("8.0.rc1", "8.0.0rc1"),
        ("24.1.RC3", "24.1.0rc3"),
        ("24.1.rc2", "24.1.0rc2"),
        # Old dotted community builds collapse onto their base: the same matrix row.
        ("8.0.RC1.beta1", "8.0.0rc1"),
        ("8.0.RC1.alpha003", "8.0.0rc1"),
        ("8.0.0.beta1", "8.0.0"),
        ("7.0.0.beta1", "7.0.0"),
        ("8.5.0.alpha001", "8.5.0"),
        # Patches become post-releases of the RC.
        ("6.3.RC3.1", "6.3.0rc3.post1"),
        ("8.0.RC3.20", "8.0.0rc3.post20"),
        ("25.0.rc1.1", "25.0.0rc1.post1"),
        # npu-smi build suffixes name the base release.
        ("25.0.rc1.b033", "25.0.0rc1"),
        ("24.1.0.3", "24.1.0.3"),
        # 9.x tags are real pre-releases.
        ("9.0.0-alpha.1", "9.0.0a1"),
        ("9.0.0-beta.2", "9.0.0b2"),
        ("9.0.0-rc.1", "9.0.0rc1"),
        ("9.1.0-beta.3", "9.1.0b3"),
        ("8.5.0", "8.5.0"),
        ("7.1.0.11.220", "7.1.0.11.220"),
    ],
)
def test_pep440_view(raw: str, pep440: str) -> None:
    assert str(parse(raw).pep440()) == pep440


@pytest.mark.parametrize(
    ("version", "specifier", "expected"),
    [
        ("8.0.RC3", ">=8.0.0rc2,<8.1", True),
        ("8.0.0", ">=8.0.0rc2,<8.1", True),
        ("8.0.RC1", ">=8.0.0rc2,<8.1", False),
        # `<8.1` excludes the pre-releases of 8.1 (PEP 440), and that is right here: 8.1.RC1
        # belongs to the 8.1 line. `<8.1.0rc1` says the same thing explicitly.
        ("8.1.RC1", ">=8.0.0rc2,<8.1", False),
        ("8.1.RC1", "<8.1.0rc1", False),
        ("8.1.RC1", "<=8.1.0rc1", True),
        # The pitfall on the other side: `>=8.1` does not admit 8.1.RC1 either, since
        # 8.1.0rc1 < 8.1. A range that starts at a line's first RC must say `>=8.1.0rc1`.
        ("8.1.RC1", ">=8.1", False),
        ("8.1.RC1", ">=8.1.0rc1", True),
        # Pre-releases are admitted explicitly (packaging's default varies with its version).
        ("8.0.RC3", ">=7.0", True),
        # A patch is a post-release: `==` of the base does not match it, a range does.
        ("6.3.RC3.1", "==6.3.0rc3", False),
        ("6.3.RC3.1", ">=6.3.0rc3,<6.3.0rc4", True),
        # A community build matches the row of its base ...
        ("8.0.RC1.beta1", "==8.0.0rc1", True),
        ("8.0.0.beta1", "==8.0.0", True),
        # ... and 7.0.0.beta1 is no longer below 7.0.RC1 (packaging mis-orders them).
        ("7.0.0.beta1", ">7.0.0rc1", True),
        ("9.0.0-beta.2", ">=9.0.0", False),
        ("9.0.0-beta.2", ">=9.0.0b1,<9.0.0rc1", True),
        ("25.0.rc1.1", ">=25.0.0rc1,<25.2", True),
    ],
)
def test_satisfies(version: str, specifier: str, expected: bool) -> None:
    assert satisfies(version, specifier) is expected
    assert satisfies(parse(version), specifier) is expected


def test_satisfies_rejects_bad_ranges_and_internal_builds() -> None:
    with pytest.raises(InvalidVersionError, match=re.escape("'~>8.0'")):
        satisfies("8.0.RC1", "~>8.0")
    with pytest.raises(InvalidVersionError, match=re.escape("'7.0.T10'")):
        satisfies("7.0.T10", ">=7.0")


def test_packaging_mis_order_of_7_0_0_beta1_is_fixed() -> None:
    # What packaging does: both become pre-releases of 7.0.0, and b < rc.
    assert Version("7.0.0.beta1") < Version("7.0.RC1")
    # The vendor order: 7.0.0.beta1 is the community build of 7.0.0, after 7.0.RC1 ...
    assert parse("7.0.RC1") < parse("7.0.0.beta1") < parse("7.0.0")
    # ... and the bridge keeps that order.
    assert parse("7.0.RC1").pep440() < parse("7.0.0.beta1").pep440()


# --------------------------------------------------------------------------------------------
# 3. Identity.
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("raw", [raw for family in FAMILIES.values() for raw in family])
def test_raw_is_kept_exactly(raw: str) -> None:
    version = parse(raw)
    assert version.raw == raw
    assert str(version) == raw
    assert AscendVersion.parse(raw).raw == raw


def test_surrounding_whitespace_is_not_part_of_the_version() -> None:
    # Lines read from version.info files end in a newline.
    assert parse(" 8.0.RC1\n").raw == "8.0.RC1"


def test_rc_case_is_spelling_not_order() -> None:
    upper, lower = parse("8.0.RC1"), parse("8.0.rc1")
    assert upper == lower
    assert not upper < lower
    assert not lower < upper
    assert upper.raw != lower.raw
    assert hash(upper) == hash(lower)
    assert len({upper, lower}) == 1
    assert {upper: "x"}[lower] == "x"


def test_versions_do_not_compare_with_strings() -> None:
    # Equality with str could not agree with hashing; callers parse first.
    version = parse("8.0.RC1")
    assert version != "8.0.RC1"
    with pytest.raises(TypeError):
        assert version < "8.0.RC2"


@pytest.mark.parametrize(
    ("raw", "upper", "lower"),
    [
        ("25.0.rc1.1", "25.0.RC1.1", "25.0.rc1.1"),
        ("25.0.RC1", "25.0.RC1", "25.0.rc1"),
        ("8.0.RC1", "8.0.RC1", "8.0.rc1"),
        ("8.0.RC1.beta1", "8.0.RC1.beta1", "8.0.rc1.beta1"),
        ("8.2.rc1.alpha001", "8.2.RC1.alpha001", "8.2.rc1.alpha001"),
        ("25.0.rc1.b033", "25.0.RC1.b033", "25.0.rc1.b033"),
        # No RC part: nothing to respell (9.x tags stay lower-case).
        ("9.0.0-rc.1", "9.0.0-rc.1", "9.0.0-rc.1"),
        ("7.1.0.11.220", "7.1.0.11.220", "7.1.0.11.220"),
        ("8.5.0", "8.5.0", "8.5.0"),
    ],
)
def test_upper_and_lower_spellings(raw: str, upper: str, lower: str) -> None:
    version = parse(raw)
    assert version.upper() == upper
    assert version.lower() == lower
    assert parse(upper) == version == parse(lower)


@pytest.mark.parametrize(
    ("raw", "release"),
    [
        ("8.0.RC1.alpha003", "8.0.RC1"),
        ("8.0.RC1.beta1", "8.0.RC1"),
        ("8.0.0.beta1", "8.0.0"),
        ("5.0.5.alpha001", "5.0.5"),
        ("9.0.0-beta.2", "9.0.0"),
        ("9.1.0-beta.3", "9.1.0"),
        ("25.0.rc1.b033", "25.0.rc1"),
        # Patches and extra parts are part of the release, not suffixes.
        ("6.3.RC3.1", "6.3.RC3.1"),
        ("25.0.rc1.1", "25.0.rc1.1"),
        ("24.1.0.3", "24.1.0.3"),
        ("7.1.0.11.220", "7.1.0.11.220"),
        ("8.5.0", "8.5.0"),
    ],
)
def test_release_strips_community_and_build_suffixes(raw: str, release: str) -> None:
    version = parse(raw)
    assert version.release().raw == release
    assert not version.release().is_community
    assert version.release().build is None
    # A community build precedes its release; a build suffix follows it.
    if version.is_community:
        assert version < version.release()
    elif version.build is not None:
        assert version > version.release()
    else:
        assert version.release() == version


def test_parsed_fields() -> None:
    version = parse("8.0.RC3.20")
    assert (version.major, version.minor, version.stage, version.number, version.patch) == (
        8, 0, Stage.RC, 3, (20,))
    assert version.line == "8.0"
    assert not version.is_community
    community = parse("9.0.0-beta.2")
    assert (community.stage, community.pre, community.pre_number) == (Stage.RELEASE, PreTag.BETA, 2)
    assert community.is_community
    assert parse("25.0.rc1.b033").build == 33


# --------------------------------------------------------------------------------------------
# 4. Properties over versions generated from the grammar.
# --------------------------------------------------------------------------------------------


class Drawn(NamedTuple):
    """A generated version string and the fields it was built from."""

    raw: str
    line: tuple[int, int]
    stage: Stage
    number: int
    patch: tuple[int, ...]
    pre: PreTag
    pre_number: int
    build: int | None


_SMALL = st.integers(0, 30)
_PRE_WORDS = {"alpha": PreTag.ALPHA, "beta": PreTag.BETA, "rc": PreTag.RC}


def _either(draw: st.DrawFn, option: bool | None) -> bool:
    return draw(st.booleans()) if option is None else option


def _padded(draw: st.DrawFn, number: int) -> str:
    # Community and build numbers are often zero-padded (alpha003, b033).
    return str(number).zfill(draw(st.integers(1, 3)))


@st.composite
def drawn_versions(
    draw: st.DrawFn,
    *,
    stages: tuple[Stage, ...] = (Stage.INTERNAL, Stage.RC, Stage.RELEASE),
    line: tuple[int, int] | None = None,
    pre: bool | None = None,
    build: bool | None = None,
    patch: bool | None = None,
    pre_styles: tuple[str, ...] = ("dotted", "dash", "dash-compact"),
    trailing_zeros: bool = True,
) -> Drawn:
    """One version from the grammar; None for an option means "either"."""
    major, minor = line if line is not None else (draw(_SMALL), draw(_SMALL))
    stage = draw(st.sampled_from(stages))
    number = draw(_SMALL)
    text = f"{major}.{minor}"
    patch_parts: tuple[int, ...] = ()
    if stage is Stage.INTERNAL:
        text += f".{draw(st.sampled_from('Tt'))}{number}"
    elif stage is Stage.RC:
        text += f".{draw(st.sampled_from(['RC', 'rc', 'Rc', 'rC']))}{number}"
        if _either(draw, patch):
            patch_parts = (draw(_SMALL),)
    else:
        text += f".{number}"
        if _either(draw, patch):
            parts = draw(st.lists(_SMALL, min_size=1, max_size=3))
            if not trailing_zeros:
                parts[-1] = parts[-1] or 1
            patch_parts = tuple(parts)
    text += "".join(f".{p}" for p in patch_parts)
    pre_tag, pre_number = PreTag.NONE, 0
    if stage is not Stage.INTERNAL and _either(draw, pre):
        word = draw(st.sampled_from(sorted(_PRE_WORDS)))
        pre_tag, pre_number = _PRE_WORDS[word], draw(_SMALL)
        style = draw(st.sampled_from(pre_styles))
        if style == "dotted":  # 8.0.RC1.alpha003
            text += f".{word}{_padded(draw, pre_number)}"
        elif style == "dash":  # 9.0.0-beta.2
            text += f"-{word}.{pre_number}"
        else:  # 2.6.0-rc1
            text += f"-{word}{pre_number}"
    build_number = None
    if stage is not Stage.INTERNAL and _either(draw, build):
        build_number = draw(st.integers(0, 999))
        text += f".b{build_number:03d}"
    return Drawn(text, (major, minor), stage, number, patch_parts, pre_tag, pre_number,
                 build_number)


def as_version(drawn: Drawn) -> AscendVersion:
    return parse(drawn.raw)


ANY = drawn_versions().map(as_version)


@PROPERTY
@given(drawn_versions())
def test_parse_round_trips_raw_and_fields(drawn: Drawn) -> None:
    version = parse(drawn.raw)
    assert version.raw == drawn.raw
    assert try_parse(drawn.raw) == version
    assert (version.major, version.minor) == drawn.line
    assert (version.stage, version.number, version.patch) == (
        drawn.stage, drawn.number, drawn.patch)
    assert (version.pre, version.pre_number, version.build) == (
        drawn.pre, drawn.pre_number, drawn.build)


@PROPERTY
@given(ANY, ANY)
def test_order_is_total_and_antisymmetric(a: AscendVersion, b: AscendVersion) -> None:
    assert [a < b, a == b, b < a].count(True) == 1
    assert (a <= b <= a) == (a == b)
    assert (a > b) == (b < a)
    if a == b:
        assert hash(a) == hash(b)


@PROPERTY
@given(ANY, ANY, ANY)
def test_order_is_transitive(a: AscendVersion, b: AscendVersion, c: AscendVersion) -> None:
    if a <= b <= c:
        assert a <= c
    if a < b <= c:
        assert a < c


@PROPERTY
@given(st.lists(ANY, max_size=12))
def test_sorted_agrees_with_pairwise_order(items: list[AscendVersion]) -> None:
    ordered = sorted(items)
    assert all(low <= high for low, high in itertools.pairwise(ordered))
    assert sorted(reversed(items)) == ordered
    assert sorted(ordered, key=lambda v: v.key) == ordered


@PROPERTY
@given(drawn_versions(stages=(Stage.RC,)), st.randoms(use_true_random=False))
def test_rc_case_never_changes_the_order(drawn: Drawn, rnd: random.Random) -> None:
    version = parse(drawn.raw)
    respelled = re.sub(
        r"\.(rc)(\d)",
        lambda m: "." + "".join(rnd.choice([c.lower(), c.upper()]) for c in m[1]) + m[2],
        drawn.raw, count=1, flags=re.IGNORECASE)
    for other in (parse(respelled), parse(version.upper()), parse(version.lower())):
        assert other == version
        assert other.key == version.key
        assert hash(other) == hash(version)


@PROPERTY
@given(drawn_versions(stages=(Stage.RC, Stage.RELEASE), pre=True))
def test_pre_tagged_version_is_below_its_release(drawn: Drawn) -> None:
    version = parse(drawn.raw)
    assert version.is_community
    assert version < version.release()
    assert not version.release().is_community


@PROPERTY
@given(drawn_versions(stages=(Stage.RC, Stage.RELEASE), build=True))
def test_build_suffix_follows_its_release(drawn: Drawn) -> None:
    version = parse(drawn.raw)
    assert version.release().build is None
    if not version.is_community:
        assert version > version.release()


@PROPERTY
@given(st.data())
def test_patched_rc_is_above_its_rc(data: st.DataObject) -> None:
    patched = data.draw(drawn_versions(stages=(Stage.RC,), patch=True))
    base = data.draw(drawn_versions(stages=(Stage.RC,), patch=False, line=patched.line))
    # X.Y.RCn.P against X.Y.RCn, whatever community tag or build either one carries.
    base_raw = re.sub(r"(?i)\.rc\d+", f".RC{patched.number}", base.raw, count=1)
    assert parse(patched.raw) > parse(base_raw)


@PROPERTY
@given(st.data())
def test_every_rc_is_below_every_release_of_its_line(data: st.DataObject) -> None:
    rc = data.draw(drawn_versions(stages=(Stage.RC,)).map(as_version))
    release = data.draw(
        drawn_versions(stages=(Stage.RELEASE,), line=(rc.major, rc.minor)).map(as_version))
    assert rc < release


# Forms that packaging orders correctly: plain RCs (with our `.postP` for patches)
# and plain releases. Trailing zero parts are left out: PEP 440 pads releases with zeros
# (8.0.0 == 8.0.0.0) while the vendor key keeps 8.0.0.0 apart from (and above) 8.0.0.
PLAIN = drawn_versions(
    stages=(Stage.RC, Stage.RELEASE), pre=False, build=False, trailing_zeros=False
).map(as_version)
# 9.x releases with and without `-beta.2` style tags.
NINE_X = drawn_versions(
    stages=(Stage.RELEASE,), pre_styles=("dash",), build=False, trailing_zeros=False
).map(as_version)


@PROPERTY
@given(PLAIN, PLAIN)
def test_pep440_order_agrees_for_plain_forms(a: AscendVersion, b: AscendVersion) -> None:
    assert (a < b) == (a.pep440() < b.pep440())
    assert (a == b) == (a.pep440() == b.pep440())


@PROPERTY
@given(NINE_X, NINE_X)
def test_pep440_order_agrees_for_9x_tags(a: AscendVersion, b: AscendVersion) -> None:
    # 9.0.0-beta.2 style tags map to real PEP 440 pre-releases.
    assert (a < b) == (a.pep440() < b.pep440())
    assert (a == b) == (a.pep440() == b.pep440())


# --------------------------------------------------------------------------------------------
# 5. Bad input and internal builds.
# --------------------------------------------------------------------------------------------

BAD = [
    "",
    "   ",
    "abc",
    "8",
    "8.",
    "8.0",
    "8.0.RC",
    "8.0.0-gamma.1",
    "1.2.3.4.5.6.x",
    "8.0.0rc1",  # PEP 440 spelling, not a vendor one
    "6.3.RC3.1.2",  # an RC takes one patch number
    "8.0.RC1.beta",
    "v8.0.RC1",
    "8.0.RC1\n8.0.RC2",
    "\u0668.0.RC1",  # Arabic-Indic digit eight
]


@pytest.mark.parametrize("text", BAD)
def test_bad_input_is_rejected_with_its_text(text: str) -> None:
    with pytest.raises(InvalidVersionError, match=re.escape(repr(text))):
        parse(text)
    with pytest.raises(InvalidVersionError):
        AscendVersion.parse(text)
    assert try_parse(text) is None


@PROPERTY
@given(st.text(max_size=20))
def test_arbitrary_text_parses_or_raises_invalid_version(text: str) -> None:
    version = try_parse(text)
    if version is not None:
        assert version.raw == text.strip()
        assert version.raw.isascii()


@pytest.mark.parametrize("raw", ["7.0.T10", "9.0.T2", "9.1.T6", "8.0.t63"])
def test_internal_builds_parse_but_have_no_pep440_view(raw: str) -> None:
    version = parse(raw)
    assert version.is_internal
    assert version.stage is Stage.INTERNAL
    assert version.raw == raw
    with pytest.raises(InvalidVersionError, match=re.escape(repr(raw))):
        version.pep440()


def test_invalid_version_error_is_a_value_error() -> None:
    assert issubclass(InvalidVersionError, ValueError)


# --- one HDK identity -------------------------------------------------------------------------

HDK = HdkIdentity({parse("25.0.RC1"): (parse("25.0.rc1.1"),)})


@pytest.mark.parametrize(("printed", "release"), [
    ("25.0.rc1.1", "25.0.RC1"),     # installer file, version.info, npu-smi (vllm-ascend #4621)
    ("25.0.RC1", "25.0.RC1"),       # release name
    ("25.0.rc1", "25.0.RC1"),       # lower-case release name
    ("25.0.rc1.b033", "25.0.RC1"),  # npu-smi title with a build suffix (vllm-ascend #3316)
    ("24.1.rc2", "24.1.RC2"),       # unmapped: case alone
    ("24.1.0", "24.1.0"),
])
def test_every_spelling_of_an_hdk_release_is_that_release(printed: str, release: str) -> None:
    assert HDK.release_of(parse(printed)) == parse(release)
    assert HDK.same(parse(printed), parse(release))


def test_a_patch_no_source_names_is_not_the_release() -> None:
    assert not HDK.same(parse("25.0.rc1.2"), parse("25.0.RC1"))
    assert not HDK.same(parse("24.1.0.3"), parse("24.1.0"))
    assert not HDK.same(parse("25.2.0"), parse("25.0.RC1"))


def test_file_version_is_what_the_release_installs() -> None:
    assert HDK.file_version(parse("25.0.RC1")) == "25.0.rc1.1"
    assert HDK.file_version(parse("25.0.rc1.1")) == "25.0.rc1.1"
    assert HDK.file_version(parse("25.3.RC1")) == "25.3.rc1"


def test_one_file_version_cannot_belong_to_two_releases() -> None:
    with pytest.raises(ValueError, match=re.escape("25.0.rc1.1")):
        HdkIdentity({parse("25.0.RC1"): (parse("25.0.rc1.1"),),
                     parse("25.0.RC2"): (parse("25.0.rc1.1"),)})


# --- inner release codes (vllm-ascend #451, #1047) ---------------------------------------------

def test_inner_code_drops_spc_and_build() -> None:
    code = InnerVersion.parse("V100R001C15SPC012B220")  # driver 23.0.7 (MC-FIX)
    assert code is not None and code.raw == "V100R001C15"
    assert code == InnerVersion.parse("V100R001C15SPC006B220")  # driver 24.1.rc1 (MC-LOGS)
    assert InnerVersion.parse("V100R001C13B222") == InnerVersion.parse("V100R001C13")
    assert InnerVersion.parse("not a code") is None
    assert InnerVersion.parse("") is None


def test_inner_codes_order_by_number_not_text() -> None:
    c9, c13 = InnerVersion.parse("V100R001C9"), InnerVersion.parse("V100R001C13")
    assert c9 is not None and c13 is not None and c9 < c13


@pytest.mark.parametrize(("code", "listed", "expected"), [
    # CANN 8.1.RC1's list (vllm-ascend #1047) and the codes of real drivers.
    ("V100R001C15SPC006B220", [("V100R001C15", "V100R001C15"), ("V100R001C21", "V100R001C21")],
     True),
    ("V100R001C17", [("V100R001C15", "V100R001C15"), ("V100R001C18", "V100R001C18")], False),
    # nnae 8.0.RC3's range form (MC-FIX).
    ("V100R001C17", [("V100R001C13", "V100R001C19"), ("V100R001C30", "V100R001C30")], True),
    ("V100R001C20", [("V100R001C13", "V100R001C19"), ("V100R001C30", "V100R001C30")], False),
    # A list with no readable code says nothing.
    ("V100R001C15", [("7.0.0", "7.5.99")], None),
    ("V100R001C15", [], None),
])
def test_inner_listed(code: str, listed: list[tuple[str, str]], expected: bool | None) -> None:
    parsed = InnerVersion.parse(code)
    assert parsed is not None
    assert inner_listed(parsed, listed) is expected


# -- one identity: same_release -------------------------------------------------------------------

# HDK 25.0.RC1's files, version.info and npu-smi carry 25.0.rc1.1 (ADEP26; vllm-ascend #4621).
HDK = HdkIdentity({parse("25.0.RC1"): (parse("25.0.rc1.1"),)})

SAME = [
    ("25.0.RC1", "25.0.rc1.1", "HDK release vs its file version (matrix hdk_files)"),
    ("25.0.rc1.1", "25.0.rc1", "file version vs lower-case release"),
    ("25.0.rc1.b033", "25.0.RC1", "npu-smi's build suffix (vllm-ascend #3316)"),
    ("24.1.RC2", "24.1.rc2", "case: release names upper, files lower"),
    ("8.0.RC1", "8.0.rc1", "CANN case"),
    ("7.0.T10", "7.0.t10", "an internal T build is itself, whatever the case"),
    ("9.0.0-beta.2", "9.0.0-BETA.2", "9.x pre-release tag case"),
    ("2.6.0-rc1", "2.6.0rc1", "MindSpore as ascend-deployer spells it vs the wheel"),
    ("2.7.1+cpu", "2.7.1", "torch's local label is a build of the same release"),
    ("2.8.0-dev", "2.8.0.dev0", "PEP 440 spellings of one dev build"),
    ("2.5.1.post1.dev20250528", "2.5.1.POST1.DEV20250528", "daily build, case"),
]
OTHER = [
    ("25.0.rc1.2", "25.0.RC1", "a patch no source names stays its own"),
    ("8.0.RC1.beta1", "8.0.RC1", "a community build is another build"),
    ("9.0.0-beta.2", "9.0.0", "a pre-release is not the release"),
    ("7.0.T10", "7.0.0", "a T build is no public release"),
    ("2.8.0.post1", "2.8.0", "a post release is another build"),
    ("2.5.1.dev20250320", "2.5.1", "a daily build is not the release"),
    ("24.1.0.3", "24.1.0", "an HDK patch driver is another release"),
]


@pytest.mark.parametrize(("a", "b", "why"), SAME, ids=[c[2] for c in SAME])
def test_same_release(a: str, b: str, why: str) -> None:
    assert same_release(a, b, HDK) and same_release(b, a, HDK), why


@pytest.mark.parametrize(("a", "b", "why"), OTHER, ids=[c[2] for c in OTHER])
def test_other_release(a: str, b: str, why: str) -> None:
    assert not same_release(a, b, HDK) and not same_release(b, a, HDK), why


def test_without_the_hdk_table_only_spelling_is_forgiven() -> None:
    assert same_release("25.0.RC1", "25.0.rc1")
    assert not same_release("25.0.RC1", "25.0.rc1.1")  # the table is what makes them one


def test_unreadable_strings_are_the_same_only_when_spelled_alike() -> None:
    assert same_release("n/a", "N/A") and not same_release("n/a", "8.0.0")


def test_nearest_names_releases_on_both_sides() -> None:
    known = [parse(v) for v in ("8.2.RC1", "8.3.RC1", "8.3.RC2", "8.5.0", "8.5.1", "9.0.0")]
    assert [v.raw for v in nearest(parse("8.4.0"), known)] == ["8.3.RC2", "8.3.RC1", "8.5.0",
                                                                "8.5.1"]
    assert [v.raw for v in nearest(parse("10.0.0"), known)] == ["9.0.0", "8.5.1"]
    assert [v.raw for v in nearest(parse("1.0.0"), known)] == ["8.2.RC1", "8.3.RC1"]
