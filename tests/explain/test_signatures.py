"""The knowledge base as data: enough entries over the failure families, each with a
public source, real ids of checks and fixes, and samples that are its tests."""

from __future__ import annotations

import pytest

from ascend_env.doctor.fix import FIX_IDS
from ascend_env.doctor.suite import list_checks
from ascend_env.explain.match import Matcher, default_matcher, required_literals
from ascend_env.explain.signatures import (
    Signature,
    SignatureError,
    load_signatures,
    parse_entry,
)

SIGNATURES = load_signatures()


def test_at_least_sixty_entries_over_every_family() -> None:
    assert len(SIGNATURES) >= 60
    families = {s.family for s in SIGNATURES}
    assert {"cann", "runtime", "dcmi", "torch_npu", "mindspore", "loader", "abi", "hccl",
            "aicpu", "containers"} <= families


@pytest.mark.parametrize("signature", SIGNATURES, ids=lambda s: s.id)
def test_every_sample_is_explained_by_its_own_entry(signature: Signature) -> None:
    matcher = default_matcher()
    assert signature in matcher.signatures
    for sample in signature.samples:
        assert signature.pattern.search(sample), sample
        assert matcher.best(sample) is signature, sample


def test_no_other_entry_of_equal_or_higher_priority_also_claims_a_sample() -> None:
    # A sample matched by a rival that ranks as high would be won by pattern length alone:
    # the rival must be strictly more generic (lower priority).
    clashes = []
    for signature in SIGNATURES:
        for sample in signature.samples:
            for other in SIGNATURES:
                if other is not signature and other.pattern.search(sample) and \
                        other.priority >= signature.priority:
                    clashes.append((signature.id, other.id, sample[:60]))
    assert clashes == []


def test_checks_and_fixes_are_the_doctors_own() -> None:
    known = {c.id for c in list_checks()}
    for signature in SIGNATURES:
        assert set(signature.checks) <= known, (signature.id, set(signature.checks) - known)
        assert signature.fix.id is None or signature.fix.id in FIX_IDS, signature.id
        assert signature.source.startswith("https://"), signature.id


def test_ids_are_unique() -> None:
    ids = [s.id for s in SIGNATURES]
    assert len(ids) == len(set(ids))


def _entry(**changes: object) -> dict[str, object]:
    entry: dict[str, object] = {
        "id": "x.y", "family": "x", "pattern": "boom", "severity": "error", "meaning": "m",
        "causes": [{"text": "t", "checks": []}], "fix": {"id": None, "command": "c"},
        "source": "https://example.org/a", "samples": ["boom"]}
    entry.update(changes)
    return entry


@pytest.mark.parametrize(("changes", "phrase"), [
    ({"pattern": "(unclosed"}, "does not compile"),
    ({"samples": []}, "at least one real line"),
    ({"severity": "fatal"}, "severity must be"),
    ({"source": "file:///tmp/x"}, "https URL"),
    ({"colour": "red"}, "unknown keys"),
    ({"causes": []}, "non-empty list"),
])
def test_a_malformed_entry_is_named_with_what_is_wrong(changes: dict[str, object],
                                                       phrase: str) -> None:
    with pytest.raises(SignatureError, match=phrase) as caught:
        parse_entry(_entry(**changes), "signatures/x.yaml entry 1")
    assert "signatures/x.yaml" in str(caught.value)


def test_the_most_specific_entry_wins_a_line() -> None:
    generic = parse_entry(_entry(id="g", pattern="Inner Error", priority=10), "t")
    specific = parse_entry(_entry(id="s", pattern="EZ9999: Inner Error", priority=60), "t")
    matcher = Matcher([generic, specific])
    assert matcher.best("EZ9999: Inner Error!") is specific
    assert matcher.best("EE9999 Inner Error!") is generic
    assert matcher.best("all fine") is None


@pytest.mark.parametrize(("pattern", "literals"), [
    (r"libhccl\.so: cannot open", ("libhccl.so: cannot open",)),
    (r"ret is -8005|is used\. ret is -8020", ("ret is -8005", "is used. ret is -8020")),
    (r"Op \S+ does not has any binary", (" does not has any binary",)),
    (r"E[ZH]9999:? Inner Error", (" Inner Error",)),
    (r"Check param failed, (dev|ctx) can not be (NULL|null)", ("Check param failed, ",)),
    (r"abcd(de)?fgh", ("abcd",)),
    (r"ab|\d+", None),  # an alternative with no literal: every line is tried
])
def test_required_literals_are_what_every_match_contains(
        pattern: str, literals: tuple[str, ...] | None) -> None:
    assert required_literals(pattern) == literals


def test_every_line_is_matched_whatever_its_level_but_quiet_lines_are_never_unknown() -> None:
    line = "dcmi module initialize failed. ret is -8005"
    scan = default_matcher().scan([("p", f"[INFO] X(1,y):t [a.cc:1] {line}\n"
                                         f"[ERROR] X(1,y):t [a.cc:2] {line}\n"
                                         "[INFO] X(1,y):t [a.cc:3] open failed, retry\n")])
    assert [(h.signature.id, h.line_number, h.count) for h in scan.hits] == [
        ("dcmi.init-8005", 1, 2)]
    assert scan.unknown == []
