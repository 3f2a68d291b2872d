"""The shipped data: every row of matrix.yaml and chips.yaml, its shape, its sources, real facts.

These rows are what operators trust, so each one is checked on its own (one test id per row)
and a handful of facts are checked against the public tables they come from (each row's
`sources`, defined in matrix.yaml).
"""

from __future__ import annotations

import re
from itertools import pairwise

import pytest

from ascend_env.core.resources import load_yaml
from ascend_env.core.versions import AscendVersion
from ascend_env.spec.matrix import (
    CannRow,
    Chip,
    Conflict,
    Matrix,
    MindSporeRow,
    TorchPython,
    TorchRow,
    load_chips,
    load_matrix,
)

MATRIX: Matrix = load_matrix()
CHIPS = load_chips()

# Conflicts about file names, paths, output labels or documentation: no matrix row can cite them.
DATA_ONLY_CONFLICTS = frozenset({13, 14, 15, 16, 17, 18, 19})

# Every CANN release with a published HDK pairing (the CANN release notes and install guides,
# ascend-deployer's version_match.json, Ascend/docs package_info.js).
SECTION_3_1_CANN = [
    "6.3.RC1",
    "6.3.RC2",
    "7.0.RC1",
    "7.0.0",
    "7.0.1",
    "8.0.RC1",
    "8.0.RC2",
    "8.0.RC3",
    "8.0.0",
    "8.1.RC1",
    "8.2.RC1",
    "8.3.RC1",
    "8.5.0",
    "8.5.1",
    "8.5.2",
    "9.0.0",
    "9.0.1",
    "9.1.0",
    "9.1.1",
    "9.2.0",
]

# Integers are legitimate only under these keys; every version must be a quoted string.
INT_KEYS = frozenset({"id", "conflict", "default", "allowed", "chips_per_card", "hbm_mb",
                      "min", "max"})

NOT_CONFIRMED = re.compile(r"not confirmed", re.IGNORECASE)


def _v(text: str) -> AscendVersion:
    return AscendVersion.parse(text)


def _cann_id(row: CannRow) -> str:
    return f"cann-{row.cann}"


def _torch_id(row: TorchRow) -> str:
    return f"cann-{row.cann}-torch_npu-{row.torch_npu}-{row.status}"


def _ms_id(row: MindSporeRow) -> str:
    return f"mindspore-{row.mindspore}-cann-{row.cann}-{row.status}"


def _tp_id(row: TorchPython) -> str:
    return "torch-" + "/".join(row.torch)


def _conflict_id(conflict: Conflict) -> str:
    return f"conflict-{conflict.id}"


ALL_ROWS: list[CannRow | TorchRow | MindSporeRow | TorchPython] = [
    *MATRIX.cann,
    *MATRIX.torch,
    *MATRIX.mindspore,
    *MATRIX.torch_python,
]
ALL_ROW_IDS = [
    *map(_cann_id, MATRIX.cann),
    *map(_torch_id, MATRIX.torch),
    *map(_ms_id, MATRIX.mindspore),
    *map(_tp_id, MATRIX.torch_python),
]


def _cited_conflicts() -> set[int]:
    rows: list[CannRow | TorchRow | MindSporeRow] = [*MATRIX.cann, *MATRIX.torch, *MATRIX.mindspore]
    return {row.conflict for row in rows if row.conflict is not None}


def _scalars(node: object, key: str = "") -> list[tuple[str, object]]:
    """Every (key, scalar) pair in parsed YAML, lists reporting their parent's key."""
    if isinstance(node, dict):
        return [pair for k, v in node.items() for pair in _scalars(v, str(k))]
    if isinstance(node, list):
        return [pair for item in node for pair in _scalars(item, key)]
    return [(key, node)]


# --- the files as YAML ---------------------------------------------------------------------


@pytest.mark.parametrize("name", ["matrix.yaml", "chips.yaml"])
def test_versions_are_quoted_strings(name: str) -> None:
    """Unquoted 3.10 is the float 3.1 and 910_9391 the int 9109391: only strings pass."""
    for key, value in _scalars(load_yaml(name)):
        assert not isinstance(value, float), f"{name}: {key}: {value!r} is a float; quote it"
        if isinstance(value, int) and not isinstance(value, bool):
            assert key in INT_KEYS, f"{name}: {key}: {value!r} is a number; quote it"


def test_source_registry_entries_are_complete() -> None:
    for label, source in MATRIX.sources.items():
        assert source.title.strip(), label
        assert source.url.startswith("https://"), f"{label}: {source.url}"


# --- every row -----------------------------------------------------------------------------


@pytest.mark.parametrize("row", ALL_ROWS, ids=ALL_ROW_IDS)
def test_row_cites_known_sources(row: CannRow | TorchRow | MindSporeRow | TorchPython) -> None:
    assert row.sources, "a row needs at least one source"
    unknown = [label for label in row.sources if label not in MATRIX.sources]
    assert not unknown, f"unknown source labels {unknown}"
    assert len(set(row.sources)) == len(row.sources), "a source is listed twice"


# --- CANN rows -----------------------------------------------------------------------------


def test_cann_rows_sorted_and_unique() -> None:
    versions = [row.cann for row in MATRIX.cann]
    for earlier, later in pairwise(versions):
        assert earlier < later, f"CANN rows out of order or repeated: {earlier} then {later}"


@pytest.mark.parametrize("cann", SECTION_3_1_CANN)
def test_every_section_3_1_cann_has_a_row(cann: str) -> None:
    row = MATRIX.cann_row(_v(cann))
    assert row is not None
    assert row.cann.raw == cann, "the row keeps the release spelling"


@pytest.mark.parametrize("row", MATRIX.cann, ids=_cann_id)
def test_cann_row_shape(row: CannRow) -> None:
    assert not row.cann.is_community and not row.cann.is_internal, "rows are releases"
    if row.hdk is None:
        assert NOT_CONFIRMED.search(row.note), "a missing HDK must be explained in the note"
    else:
        assert row.hdk.raw == row.hdk.upper(), "HDK releases are spelled upper-case (25.0.RC1)"
        assert row.accepts_hdk(row.hdk)
    for line in row.hdk_compatible:
        assert re.fullmatch(r"\d+\.\d+", line), f"{line!r} is not an X.Y HDK line"
    assert len(set(row.hdk_compatible)) == len(row.hdk_compatible)
    if row.hdk_min is not None and row.hdk is not None:
        assert row.hdk_min <= row.hdk
    if row.python is not None:
        assert row.python.low <= row.python.high


# --- torch rows ----------------------------------------------------------------------------


@pytest.mark.parametrize("row", MATRIX.torch, ids=_torch_id)
def test_torch_row_shape(row: TorchRow) -> None:
    assert MATRIX.cann_row(row.cann) is not None, f"no cann: row for {row.cann}"
    assert row.torch_npu.startswith(row.torch), "torch_npu is <torch version>[.postN|.rcN]"
    assert re.fullmatch(r"\d+\.\d+\.\d+", row.torch)
    if row.branch:
        assert row.branch.startswith(f"v{row.torch}-"), "branch is v<torch>-<extension>"
    if row.wheels is not None:
        assert "ADEP26" in row.sources, "wheel tags come from the ascend-deployer mirror"
    if row.status == "alternative":
        assert row.conflict is not None, "an alternative row names the conflict it stems from"


@pytest.mark.parametrize("row", MATRIX.torch, ids=_torch_id)
def test_torch_row_python_within_pytorch_range(row: TorchRow) -> None:
    pytorch = MATRIX.python_for_torch(row.torch)
    if pytorch is None:
        assert NOT_CONFIRMED.search(row.note), f"torch {row.torch} has no Python row; say so"
        return
    inside = pytorch.python.low <= row.python.low and row.python.high <= pytorch.python.high
    assert inside or NOT_CONFIRMED.search(row.note), (
        f"Python {row.python} is outside torch {row.torch}'s {pytorch.python}"
    )


def test_torch_rows_unique() -> None:
    keys = [(str(row.cann), row.torch_npu) for row in MATRIX.torch]
    assert len(keys) == len(set(keys))


def test_torch_python_rows_cover_each_torch_once() -> None:
    torches = [torch for row in MATRIX.torch_python for torch in row.torch]
    assert len(torches) == len(set(torches))


# --- MindSpore rows ------------------------------------------------------------------------


@pytest.mark.parametrize("row", MATRIX.mindspore, ids=_ms_id)
def test_mindspore_row_shape(row: MindSporeRow) -> None:
    assert MATRIX.cann_row(row.cann) is not None, f"no cann: row for {row.cann}"
    if row.community is not None:
        assert row.community.is_community
        assert row.community.release() == row.cann, "the community build is of the same CANN"
    if row.python is None:
        assert NOT_CONFIRMED.search(row.note)
    if row.status == "alternative":
        assert row.conflict is not None


def test_mindspore_rows_unique() -> None:
    keys = [(row.mindspore, str(row.cann)) for row in MATRIX.mindspore]
    assert len(keys) == len(set(keys))


# --- conflicts -----------------------------------------------------------------------------


def test_conflict_ids_unique_and_complete() -> None:
    ids = [conflict.id for conflict in MATRIX.conflicts]
    assert len(ids) == len(set(ids))
    assert sorted(ids) == list(range(1, 20)), "the matrix has conflicts 1-19"


@pytest.mark.parametrize("conflict", MATRIX.conflicts, ids=_conflict_id)
def test_conflict_is_cited_or_about_naming(conflict: Conflict) -> None:
    assert conflict.a.sources and conflict.b.sources
    assert conflict.a.says.strip() and conflict.b.says.strip() and conflict.why.strip()
    if conflict.id in DATA_ONLY_CONFLICTS:
        assert "naming/docs" in conflict.why.lower(), "say in `why` that no row depends on it"
        assert conflict.id not in _cited_conflicts()
    else:
        assert conflict.id in _cited_conflicts(), "no row cites this conflict"


@pytest.mark.parametrize(
    "conflict", [c for c in MATRIX.conflicts if c.follows != "both"], ids=_conflict_id
)
def test_alternative_rows_cite_the_side_not_followed(conflict: Conflict) -> None:
    """An alternative row names only sources of the claim that is not followed."""
    other = conflict.b if conflict.follows == "a" else conflict.a
    rows: list[TorchRow | MindSporeRow] = [*MATRIX.torch, *MATRIX.mindspore]
    for row in rows:
        if row.conflict == conflict.id and row.status == "alternative":
            assert set(row.sources) <= set(other.sources), row


# --- chips ---------------------------------------------------------------------------------


def test_chip_families() -> None:
    assert set(CHIPS.chips) == {"910", "910b", "910_93", "310p"}


@pytest.mark.parametrize("chip", CHIPS.chips.values(), ids=lambda chip: chip.name)
def test_chip_shape(chip: Chip) -> None:
    assert CHIPS.get(chip.name) is chip
    assert re.fullmatch(r"0x[0-9a-f]{4}", chip.pci_device_id)
    for subsystem in chip.pci_subsystems:
        assert re.fullmatch(r"0x[0-9a-f]{4}:0x[0-9a-f]{4}", subsystem), subsystem
    assert chip.npu_smi_names and chip.products
    for name in chip.npu_smi_names:
        assert f"Ascend{name}" in chip.soc_versions, "soc_version is Ascend + npu-smi name"
    allowed = chip.devices.allowed
    assert allowed == sorted(set(allowed)) and allowed[0] >= 1
    assert chip.devices.default in allowed
    assert chip.chips_per_card >= 1
    unknown = [label for label in chip.sources if label not in MATRIX.sources]
    assert chip.sources and not unknown, f"labels missing from matrix.yaml sources: {unknown}"
    if chip.hdk_token is None:
        assert NOT_CONFIRMED.search(chip.note)


def test_pci_device_ids_distinct() -> None:
    ids = [chip.pci_device_id for chip in CHIPS.chips.values()]
    assert len(ids) == len(set(ids))


# --- spot checks of real facts -------------------------------------------------------------


def test_torch_npu_2_9_0_pairs_with_cann_8_5_0() -> None:
    rows = [row for row in MATRIX.torch if row.torch_npu == "2.9.0"]
    assert [str(row.cann) for row in rows] == ["8.5.0"]
    assert rows[0].torch == "2.9.0" and rows[0].status == "followed"
    assert str(rows[0].python) == "3.10-3.13"


def test_cann_8_5_0_torch_rows() -> None:
    followed = {row.torch_npu for row in MATRIX.torch_rows(_v("8.5.0")) if row.status == "followed"}
    assert followed == {"2.6.0.post5", "2.7.1.post2", "2.8.0.post2", "2.9.0"}


def test_mindspore_2_7_2_only_with_cann_8_5_0() -> None:
    rows = [row for row in MATRIX.mindspore if row.mindspore == "2.7.2"]
    assert {str(row.cann) for row in rows} == {"8.5.0"}


def test_mindspore_2_6_0_conflict_keeps_both_sides() -> None:
    rows = {(str(row.cann), row.status) for row in MATRIX.mindspore if row.mindspore == "2.6.0"}
    assert rows == {("8.1.RC1", "followed"), ("8.2.RC1", "alternative")}


def test_cann_8_1_rc1_pairs_with_hdk_25_0_rc1() -> None:
    row = MATRIX.cann_row(_v("8.1.RC1"))
    assert row is not None and row.hdk is not None
    assert row.hdk.raw == "25.0.RC1"
    assert row.accepts_hdk(_v("25.0.rc1.1")), "the files of HDK 25.0.RC1 are 25.0.rc1.1"


def test_cann_9_1_0_rejects_hdk_25_0() -> None:
    row = MATRIX.cann_row(_v("9.1.0"))
    assert row is not None
    assert not row.accepts_hdk(_v("25.0.RC1"))
    assert not row.accepts_hdk(_v("25.0.rc1.1"))
    assert row.accepts_hdk(_v("26.0.RC1"))
    assert row.accepts_hdk(_v("26.1.0")), "MindCluster 26.1.0 pairing (conflict #12)"
    assert row.conflict == 12


def test_cann_8_5_0_hdk_range() -> None:
    row = MATRIX.cann_row(_v("8.5.0"))
    assert row is not None and row.hdk is not None
    assert row.hdk.raw == "25.5.0"
    assert row.accepts_hdk(_v("25.2.0")) and row.accepts_hdk(_v("25.3.RC1"))
    assert not row.accepts_hdk(_v("24.1.0"))
    assert row.minimum_hdk() == _v("25.0.RC1")


def test_cann_9_2_0_needs_hdk_25_3() -> None:
    row = MATRIX.cann_row(_v("9.2.0"))
    assert row is not None
    assert row.minimum_hdk() == _v("25.3.RC1")
    assert not row.accepts_hdk(_v("25.2.0"))


def test_cann_7_0_0_hdk_not_confirmed() -> None:
    row = MATRIX.cann_row(_v("7.0.0"))
    assert row is not None and row.hdk is None


def test_community_build_maps_onto_its_release() -> None:
    row = MATRIX.cann_row(_v("8.0.RC1.beta1"))
    assert row is not None and row.cann.raw == "8.0.RC1"


def test_python_for_local_torch_version() -> None:
    row = MATRIX.python_for_torch("2.7.1+cpu")
    assert row is not None and str(row.python) == "3.9-3.13"


def test_kept_decisions_of_the_starter_conflicts() -> None:
    assert MATRIX.conflict(9).follows == "a"
    assert MATRIX.conflict(11).follows == "b"


def test_910b_pci_device_id() -> None:
    chip = CHIPS.get("910b")
    assert chip is not None and chip.pci_device_id == "0xd802"


def test_310p_has_two_chips_per_card() -> None:
    chip = CHIPS.get("310p")
    assert chip is not None and chip.chips_per_card == 2


def test_a3_package_tokens() -> None:
    chip = CHIPS.get("910_93")
    assert chip is not None
    assert chip.hdk_token is None
    assert chip.kernels_token == "A3" and chip.ops_token == "A3"
