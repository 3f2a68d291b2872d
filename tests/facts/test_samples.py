"""Every parser against its real samples (tests/data/<parser>/, each with its public source),
and odd input never raises."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pydantic_core import to_jsonable_python

from ascend_env.facts.assemble import AREAS, PARSERS
from tests.facts.captures import DATA

JSON_INPUT = ".input.json"


def _samples() -> list[tuple[str, Path]]:
    found = []
    for folder in sorted(p for p in DATA.iterdir() if p.is_dir()):
        for item in sorted(folder.iterdir()):
            if item.suffix == ".txt" or item.name.endswith(JSON_INPUT):
                found.append((folder.name, item))
    return found


def _stem(path: Path) -> str:
    return path.name[: -len(JSON_INPUT)] if path.name.endswith(JSON_INPUT) else path.stem


def _read_input(path: Path) -> Any:
    return json.loads(path.read_text()) if path.name.endswith(JSON_INPUT) else path.read_text()


SAMPLES = _samples()


# -- 1. the data files --------------------------------------------------------------------------

@pytest.mark.parametrize(("parser", "sample"), SAMPLES,
                         ids=[f"{p}/{_stem(s)}" for p, s in SAMPLES])
def test_sample_parses_to_expected(parser: str, sample: Path) -> None:
    """Adding a sample is adding files: <name>.txt, <name>.expected.json, <name>.source."""
    assert parser in PARSERS, f"tests/data/{parser}/ names no parser in facts.assemble.PARSERS"
    expected_file = sample.with_name(_stem(sample) + ".expected.json")
    source_file = sample.with_name(_stem(sample) + ".source")
    assert source_file.is_file() and source_file.read_text().strip(), "a sample names its source"
    result = to_jsonable_python(PARSERS[parser](_read_input(sample)))
    assert result == json.loads(expected_file.read_text())


def test_parser_names_are_unique_across_areas() -> None:
    assert len(PARSERS) == sum(len(area.PARSERS) for area in AREAS)


def test_every_parser_has_a_sample() -> None:
    covered = {parser for parser, _ in SAMPLES}
    assert set(PARSERS) <= covered, f"parsers without a sample: {set(PARSERS) - covered}"


def test_samples_cover_the_reference() -> None:
    """One pair per real sample of the published version files and npu-smi outputs."""
    by_parser: dict[str, int] = {}
    for parser, _ in SAMPLES:
        by_parser[parser] = by_parser.get(parser, 0) + 1
    # 910B, 910ProB, 310P (vllm-ascend #198, #1047; Syllo/nvtop #421)
    assert by_parser["npu_smi_info"] >= 3
    assert by_parser["npu_smi_list"] >= 2  # Total Count and Card Count forms
    assert by_parser["version_info"] >= 4  # three drivers and a firmware
    assert len(SAMPLES) >= 40


# -- 2. odd input never raises --------------------------------------------------------------------

GARBAGE = [
    "",
    "\n\n\n",
    "garbage \x00\xff with no structure at all",
    "=====\n:::::\n|||||\n[[[]]]\n",
    "| 0 | | |\n| x |\n+---+\n",
    "NPU ID : abc\nChip Count : -1\n : continuation without key\n",
    "Version=\ncompatible_version_fw=[7.0.0\n",
    "{not json",
    "[1, 2, 3]",
    '{"distributions": [[null, null], "x", [1]]}',
    "\t" * 50 + ":" * 50,
]


def _parse(parser: str, text: str) -> Any:
    """The parser's result as JSON data (pci_sysfs reads a folder's files: the text is each)."""
    if parser == "pci_sysfs":
        return to_jsonable_python(PARSERS[parser](
            {"0000:zz": {"vendor": text, "device": text, "numa_node": text}}))
    return to_jsonable_python(PARSERS[parser](text))


def _values(data: Any) -> list[str]:
    """Every value of a result (not its field names), as text; absent values left out."""
    if isinstance(data, dict):
        return [v for item in data.values() for v in _values(item)]
    if isinstance(data, list):
        return [v for item in data for v in _values(item)]
    return [] if data is None or isinstance(data, bool) else [str(data)]


def _said_by(value: str, text: str) -> bool:
    """The value is text of the input: each of its lines, the part a note quotes after ': ',
    or each 'quoted' cell of a note (npu-smi's `Column 'raw'`)."""
    flat = " ".join(text.lower().split())
    if value.startswith(("unparsed ", "distributions ")) and ": " in value:
        value = value.split(": ", 1)[1]
    elif "'" in value:
        return all(_said_by(cell, text) for cell in re.findall(r"'([^']*)'", value))
    lines = [" ".join(line.lower().split()) for line in value.splitlines()]
    return all(line in flat for line in lines) or value.endswith("is not an object")


def _in_a_stated_range(value: str, text: str) -> bool:
    """A CPU list's `0-2` says 1 too: the value lies in a range the input writes."""
    return value.isdigit() and any(int(low) <= int(value) <= int(high)
                                   for low, high in re.findall(r"(\d+)-(\d+)", text))


def invented(parser: str, text: str) -> list[str]:
    """What the parser's result holds that the input does not say (nor its empty result)."""
    empty = set(_values(_parse(parser, "")))
    return [v for v in _values(_parse(parser, text)) if v not in empty and not _said_by(v, text)
            and not (parser == "cpu_list" and _in_a_stated_range(v, text))]


@pytest.mark.parametrize("parser", sorted(PARSERS))
@pytest.mark.parametrize("text", GARBAGE, ids=range(len(GARBAGE)))
def test_parsers_invent_nothing_from_garbage(parser: str, text: str) -> None:
    """Garbage raises nothing (parsers have no error type: what they cannot read is a note or
    left out), and every value of the result is the input's own text or a note quoting it:
    nothing a check could take for a reading. tests/facts/test_garbage_doctor.py shows that no
    check passes on it."""
    assert invented(parser, text) == []


def test_invented_values_are_caught() -> None:
    """The rule above is not vacuous: a value the input does not say is found."""
    assert invented("cpu_list", "0-2,7") == []
    assert not _in_a_stated_range("5", "0-2,7") and not _in_a_stated_range("1", "0,2")
    assert _said_by("910B3", "garbage 910b3 here")
    assert not _said_by("OK", "garbage | : = [ ]")
    assert not _said_by("unparsed npu-smi info line: Health OK", "| 0 | | |")


@pytest.mark.parametrize(("parser", "sample"), [s for s in SAMPLES if s[1].suffix == ".txt"],
                         ids=[f"{p}/{_stem(s)}" for p, s in SAMPLES if s.suffix == ".txt"])
def test_parsers_survive_truncation(parser: str, sample: Path) -> None:
    """A capture cut off mid-way (timeout, size cap) still parses, at every cut, into nothing
    but readings of the whole (a line cut short gives a value cut short: see the note in
    docs/doctor.md) and notes quoting what it could not read."""
    text = sample.read_text()
    whole = set(_values(_parse(parser, text)))
    for cut in range(0, len(text), max(1, len(text) // 40)):
        part = text[:cut]
        assert [v for v in _values(_parse(parser, part)) if not any(v in w for w in whole)
                and not _said_by(v, part)] == [], f"cut at {cut}"


# derandomize: the same examples every run, so a failure here is a failure everywhere.
@settings(database=None, max_examples=150, deadline=None, derandomize=True)
@given(st.text(alphabet=st.sampled_from(list("|+-=: \t\n0123456789abNAOK./[],xX")), max_size=400))
@example("0-2")
def test_text_parsers_fuzz(text: str) -> None:
    for name in PARSERS:
        if name != "pci_sysfs":
            assert invented(name, text) == [], name
