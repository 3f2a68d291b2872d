"""Areas (ascend_env/explain/areas.py): a record no entry and no rule explains is placed in its
layer by the words it names, the reason line first, and still counts as not explained.

Records are real: the corpus's train part (tests/data/real/explain/corpus.yaml) and
tests/data/explain/unexplained.yaml.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from ascend_env.doctor.suite import list_checks
from ascend_env.explain.areas import AREA, area_of, load_areas
from ascend_env.explain.families import CANN_MODULES
from ascend_env.explain.inline import explain_text
from ascend_env.explain.match import Matcher, default_matcher
from ascend_env.explain.rules import BY_AREA, UNPLACED, load_rules
from ascend_env.explain.signatures import load_signatures
from ascend_env.explain.structure import read_shape
from tests.cli_invoke import invoke
from tests.explain.corpus_score import TRAIN, load

UNEXPLAINED = Path(__file__).resolve().parents[1] / "data" / "explain" / "unexplained.yaml"


def _train(thread: str) -> str:
    return str(next(item["text"] for item in load(TRAIN) if item["thread"] == thread))


def _lead(text: str) -> str:
    (chain,) = default_matcher().scan([("log", text)]).chains
    return chain.lead.signature.id


def test_every_area_names_a_family_of_the_base_and_the_doctors_own_checks() -> None:
    families = {s.family for s in load_signatures()} | {f for f, _ in CANN_MODULES.values()}
    known = {c.id for c in list_checks()}
    areas = load_areas()
    assert len({a.family for a in areas}) == len(areas)  # one area per family
    for area in areas:
        assert area.family in families, area.family
        assert area.checks and set(area.checks) <= known, (area.family, area.checks)


def test_the_reason_line_places_the_record_before_the_words_around_it() -> None:
    # The ImportError names a library of deepspeed, but the loader's words say why: an ABI
    # question (https://github.com/deepspeedai/DeepSpeed/pull/7894).
    assert _lead(_train("https://github.com/deepspeedai/DeepSpeed/pull/7894")) == f"{AREA}abi"
    # A device-side report with no code the base knows: its words name the AI CPU.
    assert _lead(_train("https://github.com/pytorch/pytorch/issues/136302")) == f"{AREA}aicpu"


def _area(thread: str, says: str) -> str | None:
    text = next(item["text"] for item in load(TRAIN)
                if item["thread"] == thread and says in item["text"])
    placed = area_of(load_areas(), read_shape(text.splitlines()))
    return placed[0].family if placed is not None else None


def test_the_message_places_the_record_before_the_launchers_prefix() -> None:
    # vLLM's worker logs torch_npu's out-of-memory error: the message names the layer, the
    # `(VllmWorkerProcess pid=...)` prefix only says which process printed it.
    assert _area("https://github.com/vllm-project/vllm-ascend/issues/19",
                 "NPU out of memory") == "torch_npu"
    # With no layer named in the message, the prefix still says which program wrote it.
    assert _area("https://github.com/vllm-project/vllm-ascend/issues/5707",
                 "cache blocks") == "vllm_ascend"


def test_an_import_that_fails_is_a_packaging_question_whatever_package_it_names() -> None:
    # Triton is a compiler, but a module of it that cannot be imported is a release that does
    # not pair (https://github.com/flagos-ai/FlagGems/issues/5791).
    assert _area("https://github.com/flagos-ai/FlagGems/issues/5791",
                 "No module named") == "packaging"
    # A library the loader cannot open stays the loader's, inside an ImportError too.
    assert _area("https://github.com/vllm-project/vllm-ascend/pull/6976",
                 "cannot open shared object") == "loader"


def test_a_build_tool_and_a_kernel_binary_name_their_layers() -> None:
    # CMake that finds no compiler is the compilers' layer; an operator without a kernel binary
    # is CANN's (https://github.com/hiyouga/LlamaFactory/issues/3796).
    assert _area("https://github.com/vllm-project/vllm-ascend/issues/439",
                 "CMAKE_CXX_COMPILER") == "compilers"
    assert _area("https://github.com/hiyouga/LlamaFactory/issues/3796",
                 "does not has any binary") == "cann"


def test_an_area_is_no_explanation_the_record_is_still_unknown_and_exits_1() -> None:
    text = _train("https://github.com/deepspeedai/DeepSpeed/pull/7894")
    scan = default_matcher().scan([("log", text)])
    (chain,) = scan.chains
    assert not chain.cause_found
    assert [u.line for u in scan.unknown] == [text.strip()]
    # The views of smoke, install and image build list what is known only.
    assert explain_text(text) == []


def test_every_unexplained_record_keeps_its_unknown_lines_whatever_area_it_gets(
        tmp_path: Path) -> None:
    items = yaml.safe_load(UNEXPLAINED.read_text(encoding="utf-8"))
    log = tmp_path / "job.log"
    log.write_text("\n\n".join(item["text"] for item in items) + "\n", encoding="utf-8")
    done = invoke("explain", str(log), "--json")
    assert done.code == 1, done.err
    document = json.loads(done.out)
    areas = [m for m in document["matches"] if m["id"].startswith(AREA)]
    assert areas and all(m["match"] == "family" for m in areas)
    assert all(m["causes"][0]["id"] is None for m in areas)  # an area concludes no cause
    for m in areas:
        assert m["line"] in {u["line"] for u in document["unknown"]}, m["line"]


def test_the_entries_alone_reference_has_no_areas() -> None:
    text = _train("https://github.com/deepspeedai/DeepSpeed/pull/7894")
    assert Matcher(rules=(), areas=()).scan([("log", text)]).chains == []


def test_a_rule_by_area_takes_the_records_area_or_only_hints() -> None:
    (rule,) = [r for r in load_rules() if r.id == "rule.python-called-before-init"]
    assert rule.family == BY_AREA
    sample = "RuntimeError: Ascend config is not initialized. Please call init_ascend_config first."
    (chain,) = default_matcher().scan([("log", sample)]).chains
    assert (chain.lead.signature.id, chain.lead.signature.family) == (rule.id, "vllm_ascend")
    assert chain.cause_found
    # The same words with nothing that names a layer: the rule does not guess a family. It
    # names its cause as a family match does, and the line stays not known (exit 1).
    bare = "RuntimeError: the cache is not initialized. Please call setup first."
    scan = default_matcher().scan([("log", bare)])
    (chain,) = scan.chains
    assert (chain.lead.signature.id, chain.lead.signature.family) == (rule.id, UNPLACED)
    assert not chain.cause_found and chain.lead.signature.causes[0].id == rule.concludes.id
    assert [u.line for u in scan.unknown] == [bare]


def test_a_programming_error_without_a_layer_says_so() -> None:
    # A record of the corpus's train part, quoted from
    # https://github.com/vllm-project/vllm-ascend/pull/1803
    line = "AttributeError: 'Qwen2AudioConfig' object has no attribute 'num_hidden_layers'"
    (chain,) = default_matcher().scan([("log", line)]).chains
    lead = chain.lead.signature
    assert (lead.id, lead.family, lead.cause_id) == \
        ("rule.python-code-error", UNPLACED, "framework-bug")
    assert "a layer the record does not name" in lead.meaning


def test_a_programming_error_belongs_to_the_frame_that_made_the_call() -> None:
    # A record of the corpus's train part, quoted from
    # https://github.com/vllm-project/vllm-ascend/pull/2051: the message names the NPU (words
    # of torch_npu's area), the innermost Ascend-stack frame is vLLM Ascend's model code.
    record = "\n".join([
        '[rank0]:   File "/home/xxx/vllm_ascend/models/qwen2_5_vl_without_padding.py", line 84,'
        ' in forward',
        "[rank0]:     q = torch_npu.npu_rotary_mul(q, cos, sin)",
        '[rank0]:   File "/home/anaconda3/envs/xxx/lib/python3.10/site-packages/torch/_ops.py", '
        "line 1116, in __call__",
        "[rank0]:     return self._op(*args, **(kwargs or {}))",
        "[rank0]: RuntimeError: Expected all tensors to be on the same device, but found at least"
        " two devices, npu:0 and cpu! (when checking argument for argument r1 in method "
        "wrapper__npu_rotary_mul)"])
    (chain,) = default_matcher().scan([("log", record)]).chains
    assert (chain.lead.signature.id, chain.lead.signature.family) == \
        ("rule.tensors-on-two-devices", "vllm_ascend")
    # Without the frames, the message's words place it.
    (chain,) = default_matcher().scan([("log", record.splitlines()[-1])]).chains
    assert chain.lead.signature.family == "torch_npu"
