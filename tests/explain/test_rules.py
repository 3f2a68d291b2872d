"""Rules over families (ascend_env/data/signatures/rules/): each fires on its samples (real
records of the corpus's train part), says what it concluded and which checks confirm it, and
reads the structure of a record rather than one fixed line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ascend_env.doctor.suite import list_checks
from ascend_env.explain.match import default_matcher
from ascend_env.explain.rules import FEATURES, Rule, load_rules, parse_rule
from ascend_env.explain.signatures import SignatureError
from ascend_env.explain.structure import read_shape
from ascend_env.explain.vocabulary import load_vocabulary
from tests.cli_invoke import invoke

RULES = load_rules()


def test_the_rules_cover_the_families_the_corpus_misses_most() -> None:
    families = {r.family for r in RULES}
    assert {"packaging", "abi", "cann", "compilers", "runtime", "vllm_ascend"} <= families
    assert len(RULES) >= 20


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_every_sample_fires_its_rule_and_explain_names_it(rule: Rule) -> None:
    for sample in rule.samples:
        assert rule.bind(read_shape(sample.splitlines())) is not None, sample
        scan = default_matcher().scan([("sample", sample)])
        hit = next((h for h in scan.hits if h.signature.id == rule.id), None)
        # Where an entry of the base knows the exact line and ranks higher, it leads; the
        # rule's own reading is still there for any record its entries do not know.
        assert hit is not None or scan.hits, sample
        assert scan.unknown == [], (sample, scan.unknown)


def test_checks_and_causes_are_the_doctors_and_the_vocabularys() -> None:
    known = {c.id for c in list_checks()}
    for rule in RULES:
        for cause in (rule.concludes, *rule.also):
            assert set(cause.checks) <= known, (rule.id, set(cause.checks) - known)
            assert cause.id is None or cause.id in load_vocabulary(), rule.id
        assert rule.concludes.id is not None
        assert rule.source.startswith("https://"), rule.id


def test_a_rule_reads_the_exception_package_and_symbol_of_an_unseen_record() -> None:
    # A traceback no sample quotes (made of parts the rules read: the frame's package, the
    # module and the attribute), the way an import of a mismatched pair fails.
    record = ("Traceback (most recent call last):\n"
              '  File "/usr/lib/python3.11/site-packages/mindspeed/core/fusions.py", line 3\n'
              "    from megatron.core import tensor_parallel\n"
              "AttributeError: module 'megatron.core' has no attribute 'tensor_parallel'\n")
    shape = read_shape(record.splitlines())
    assert shape.raised_in == "mindspeed"
    assert {"mindspeed", "megatron"} <= set(shape.packages)
    assert ("AttributeError", "module 'megatron.core' has no attribute 'tensor_parallel'",
            3) in shape.exceptions
    (chain,) = default_matcher().scan([("log", record)]).chains
    assert chain.lead.signature.id == "rule.python-module-attribute-missing"
    assert chain.lead.signature.cause_id == "package-mismatch"
    assert chain.lead.line_number == 4  # the exception's line, not the traceback's header
    assert "megatron.core" in chain.lead.signature.meaning


def test_pips_header_leads_nothing_the_conflict_it_introduces_does() -> None:
    # https://github.com/vllm-project/vllm-ascend/issues/13061: pip's header, then the pin.
    header = ("ERROR: pip's dependency resolver does not currently take into account all the "
              "packages that are installed. This behaviour is the source of the following "
              "dependency conflicts.")
    record = header + "\nvllm 0.22.1 requires torch==2.11.0, but you have torch 2.10.0 " \
        "which is incompatible."
    scan = default_matcher().scan([("log", record)])
    (chain,) = scan.chains
    assert chain.lead.signature.id == "rule.pip-vllm-wants-another-torch"
    assert scan.unknown == []  # the header belongs to the line it introduces
    # Alone, the header says nothing known: it is listed, never passed.
    assert [u.line for u in default_matcher().scan([("log", header)]).unknown] == [header]


def test_a_rule_that_repeats_an_entrys_cause_is_not_listed_twice() -> None:
    # https://github.com/vllm-project/vllm-ascend/issues/486: the EI0006 entry and the rule for
    # a wait on other ranks both say rank-failed; the entry, which knows the line, stays alone.
    line = ("EI0006: [PID: 1292363] 2025-04-08-18:07:20.444.436 Getting socket times out. "
            "Reason: Remote Rank did not send the data in time. Please check the reason for "
            "the rank being stuck")
    scan = default_matcher().scan([("log", line)])
    assert [h.signature.id for h in scan.hits] == ["hccl.ei0006-socket-timeout"]
    # The rule answers the same family of message where no entry knows the line.
    other = "[E ProcessGroupHCCL.cpp:563] [Rank 3] Watchdog caught collective operation timeout"
    (chain,) = default_matcher().scan([("log", other)]).chains
    assert chain.lead.signature.id == "rule.collective-wait-timeout"
    assert chain.lead.signature.cause_id == "rank-failed"


def test_the_json_says_what_a_rule_concluded_and_what_confirms_it(tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    log.write_text("ERROR: Could not find a version that satisfies the requirement "
                   "torch-npu==9.9.9\n")
    done = invoke("explain", str(log), "--json")
    assert done.code == 0, done.err
    (match,) = json.loads(done.out)["matches"]
    assert (match["id"], match["match"], match["family"]) == (
        "rule.pip-no-matching-version", "rule", "packaging")
    assert match["causes"][0]["id"] == "pip-index"
    assert match["numbers"]["matched"].startswith("Could not find a version")


def test_a_malformed_rule_is_refused_with_its_name() -> None:
    good = {"id": "rule.x", "family": "packaging", "when": {"text": "x"},
            "concludes": {"id": "package-mismatch"}, "meaning": "m",
            "fix": {"id": None, "command": "c"}, "source": "https://example.org/t",
            "samples": ["x"]}
    assert parse_rule(good, "t").concludes.text  # text and checks from the vocabulary
    for broken, words in (({"when": {"colour": "x"}}, "unknown feature"),
                          ({"concludes": {"id": "no-such-cause"}}, "not in the vocabulary"),
                          ({"when": {"text": "("}}, "does not compile"),
                          ({"id": "x"}, "starts with 'rule.'"),
                          ({"source": "http://x"}, "https URL")):
        with pytest.raises(SignatureError, match=words):
            parse_rule(good | broken, "t")
    assert set(FEATURES) >= {"exception", "package", "symbol", "chip", "module", "compiler"}


def test_the_frames_name_only_the_packages_they_are_in() -> None:
    # A real traceback's frames (https://github.com/vllm-project/vllm-ascend/pull/2051) with a
    # frame of the user's own script between them: it names no package.
    shape = read_shape([
        '  File "/home/xxx/vllm_ascend/models/qwen2_5_vl_without_padding.py", line 84, in forward',
        '  File "/home/me/run.py", line 3, in <module>',
        '  File "/home/anaconda3/envs/xxx/lib/python3.10/site-packages/torch/_ops.py", line 1116,'
        " in __call__",
        "RuntimeError: Expected all tensors to be on the same device"])
    assert shape.frames == ["vllm_ascend", "torch"]
