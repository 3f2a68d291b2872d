"""Comments, docstrings and data notes cite public sources (a URL or a file in the repository),
never the team's reference notes outside the repository, and carry no issue numbers of this
project.

Every text file under the shipped folders and tests/ is read, except the samples in
tests/data/ (verbatim vendor text); their provenance notes there (`*.source`, `SOURCE`) are
read. The scanner itself is checked on planted lines in memory, so a pattern that stopped
matching would fail here rather than pass quietly.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("ascend_env", "checks", "playbooks", "containers", "scripts", "benchmarks", "tests")
DATA = ROOT / "tests" / "data"
SKIPPED = (DATA,)
THIS = Path(__file__).resolve()
MAX_BYTES = 8 * 1024 * 1024

# The notes outside the repository, by the names code used to cite them. The strings are
# split so that this file does not cite them itself.
NOTE_NAMES = re.compile("|".join((
    r"ascend" + r"-facts",
    r"compat" + r"-matrix",
    r"os" + r"-and-upgrades",
    r"\bpeers" + r"\.md\b",
    r"shared" + r"/reference",
    r"vendor" + r"-catalogue\.json",
)))
# "issue 15", "Issue #2", "issues 16 and 17": this project's tracker. Another project's issue
# named with its repository ("vllm-project/vllm-ascend issue #3403", "Syllo/nvtop issue 421")
# or by URL (".../issues/486") is a public source and stays.
ISSUE = re.compile(r"\b[Ii]ssues? #?\d+")
ANOTHER_PROJECT = re.compile(r"[\w.-]+/[\w.-]+,? (?:[Ii]ssues?|PR|pull request) #?\d+$")
# Source labels of the notes that never had a public entry in matrix.yaml's `sources:`
# registry; a label that the registry defines (with its URL) is a citation of a repo file.
NOTE_LABELS = ("CANN-850", "CANN-DRV", "CANN-PARAM", "DRV-PARAM", "ENVREF", "INSTG-ERR",
               "HWC-BMS", "HWC-CCE", "HWC-A5", "HWC-MA", "FACT-FILES", "ACL-VER")


def registry_labels() -> set[str]:
    matrix = yaml.safe_load((ROOT / "ascend_env" / "data" / "matrix.yaml").read_text())
    return set(matrix["sources"])


def label_pattern(registry: set[str]) -> re.Pattern[str]:
    unknown = [label for label in NOTE_LABELS if label not in registry]
    return re.compile(r"(?<![\w-])(?:" + "|".join(map(re.escape, unknown)) + r")(?![\w-])")


def findings(text: str, labels: re.Pattern[str]) -> list[str]:
    """Each offending line as `line N: what`."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        for match in NOTE_NAMES.finditer(line):
            found.append(f"line {number}: cites the note {match.group(0)!r}")
        for match in ISSUE.finditer(line):
            if not ANOTHER_PROJECT.search(line[:match.end()]):
                found.append(f"line {number}: issue number {match.group(0)!r}")
        for match in labels.finditer(line):
            found.append(f"line {number}: the notes' source label {match.group(0)!r}")
    return found


def is_provenance_note(path: Path) -> bool:
    """A data folder's note of where its samples came from: ours, so it cites like code."""
    return path.suffix == ".source" or path.name == "SOURCE"


def scanned_files() -> list[Path]:
    files = []
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*")):
            if (not path.is_file() or path.is_symlink() or "__pycache__" in path.parts
                    or path.suffix == ".pyc" or path.resolve() == THIS
                    or (any(path.is_relative_to(skip) for skip in SKIPPED)
                        and not is_provenance_note(path))):
                continue
            files.append(path)
    return files


LABELS = label_pattern(registry_labels())


def test_the_scan_reads_the_repository() -> None:
    files = scanned_files()
    assert len(files) > 300, f"only {len(files)} files found under {FOLDERS}"
    assert ROOT / "ascend_env" / "data" / "matrix.yaml" in files
    data = [path for path in files if path.is_relative_to(DATA)]
    assert all(is_provenance_note(path) for path in data), "a sample of tests/data was read"


def test_the_scan_reads_the_provenance_notes() -> None:
    notes = [path for path in scanned_files() if path.is_relative_to(DATA)]
    assert len(notes) > 100, f"only {len(notes)} provenance notes found under {DATA}"
    assert DATA / "version_info" / "driver-23.0.7.source" in notes
    assert DATA / "real" / "910b3-23.0.7" / "SOURCE" in notes
    assert DATA / "version_info" / "driver-23.0.7.txt" not in notes


def test_no_file_cites_the_notes_or_an_issue_number() -> None:
    problems = []
    for path in scanned_files():
        if path.stat().st_size > MAX_BYTES:
            problems.append(f"{path.relative_to(ROOT)}: larger than {MAX_BYTES} bytes, not read")
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # binary files carry no comments
        problems += [f"{path.relative_to(ROOT)}: {what}" for what in findings(text, LABELS)]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("planted", [
    "    # Firmware first on an upgraded host (ascend-facts §5.1).",
    "# the pairings of compat-matrix.md §3.1",
    "# pairings (compat-matrix §3.1)",
    '"""Images run as HwHiAiUser (peers.md §5.3)."""',
    "(../shared/reference/compat-matrix.md, ascend-facts.md)",
    "# file names as in vendor-catalogue.json",
    "# the upgrade order of os-and-upgrades.md §2",
    "ascend-facts.md §3.1: /usr/local/Ascend/driver/version.info, HDK 24.1.rc3",
    "npu-smi info; layout of ascend-facts.md §4.1, process row shape per §4.4",
    "    # the build's output explained in place (issue 18)",
    '"""Every command fed bad input (issue 15, item 7)."""',
    "Issue #2's goal: the command takes no more than 1.5x the reference.",
    "# probes before issues 16 and 17 did not",
    "    # their own path (CANN-850).",
    "# the text is the driver installer's, INSTG-ERR.",
    "# 9.x: ACL-VER's verbatim chain",
])
def test_a_planted_citation_is_found(planted: str) -> None:
    text = f"first line\n{planted}\nlast line\n"
    found = findings(text, LABELS)
    assert found and all(item.startswith("line 2: ") for item in found), found


@pytest.mark.parametrize("legitimate", [
    "    title: vllm-project/vllm-ascend issue #3403: a 910B1 host",
    "    title: npu-smi info on an Atlas 300I Duo (310P3), HDK 25.0.2, in Syllo/nvtop issue 421",
    "# the ImportError text of https://github.com/vllm-project/vllm-ascend/issues/1440",
    "    title `npu-smi 25.0.rc1.1`, vllm-project/vllm-ascend#4621). The table",
    "# Python 3.10 and 3.11 agreed by every source, conflict #9",
    "# CANN 8.5.0 install guide, https://www.hiascend.com/document/detail/zh/canncommercial/850/",
    "    sources: [ADEP26, CANN-RN850, CANN-INST]",
    "# HwHiAiUser's ids in the legacy official images (https://github.com/Ascend/ascend-docker-image).",
    "# the tissue 5 of a peer",
    "Ascend-cann-850-ops is not a file name but must not read as a label",
])
def test_a_legitimate_line_is_not_flagged(legitimate: str) -> None:
    assert findings(legitimate, LABELS) == []


def test_labels_the_registry_defines_are_citations() -> None:
    registry = registry_labels()
    assert {"ADEP26", "CANN-RN850", "PT-COMPAT"} <= registry
    assert not set(NOTE_LABELS) & registry, "a label now in matrix.yaml is a repo citation"
    assert label_pattern(registry | {"CANN-850"}).search("(CANN-850)") is None
