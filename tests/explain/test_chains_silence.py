"""Chains by specificity and no silent pass, on real records: the line that states the reason
leads (a CANN code with its reason over the wrappers that report it), a catch-all never leads
while another line explains more, and a record that looks like an error that nothing explains
is listed as not known (exit 1), never passed as "all clear".

Records: the corpus's train part (tests/data/real/explain/corpus.yaml, by thread) and
tests/data/explain/unexplained.yaml (real records outside what the knowledge base knows).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from ascend_env.explain.chains import CATCH_ALL, ECHO, specificity
from ascend_env.explain.match import ERROR_LIKE, Scan, default_matcher
from ascend_env.explain.plog import Inputs, Source
from ascend_env.explain.report import Explanation
from tests.cli_invoke import invoke
from tests.explain.corpus_score import HELDOUT, TRAIN, load

UNEXPLAINED = Path(__file__).resolve().parents[1] / "data" / "explain" / "unexplained.yaml"


def _train(thread: str, contains: str) -> str:
    """The text of the train record of this thread that contains the words."""
    return str(next(item["text"] for item in load(TRAIN)
                    if item["thread"] == thread and contains in item["text"]))


def _scan(text: str) -> Scan:
    return default_matcher().scan([("log", text)])


def test_a_cann_code_with_its_reason_leads_over_the_wrappers_that_report_it() -> None:
    # torch_npu's RuntimeError and ERR00100 come first; the EE1001 line below them says why
    # (https://github.com/gpustack/gpustack/issues/3352).
    text = _train("https://github.com/gpustack/gpustack/issues/3352", "ERR00100")
    (chain,) = _scan(text).chains
    assert chain.lead.line.startswith("EE1001:")
    assert "ASCEND_RT_VISIBLE_DEVICES:4" in chain.lead.line
    assert chain.lead.signature.cause_id == "visible-devices"
    wrapper = next(e for e in chain.echoes if e.signature.id == "torch-npu.err00100-acl-api")
    assert wrapper.line_number < chain.lead.line_number
    assert specificity(wrapper) == ECHO
    assert chain.cause_found


def test_a_reason_inside_the_call_that_failed_is_read_from_that_line() -> None:
    # "call aclnnCast failed, detail:EZ1001: ... not implemented for DT_BFLOAT16": the code's
    # reason is on the wrapper's own line; the rule that reads it leads, not the code's family
    # (https://github.com/hiyouga/LlamaFactory/issues/4165).
    text = _train("https://github.com/hiyouga/LlamaFactory/issues/4165", "modeling_chatglm")
    (chain,) = _scan(text).chains
    assert chain.lead.signature.id == "rule.aclnn-dtype-not-implemented"
    assert chain.lead.signature.cause_id == "op-unsupported"
    assert chain.lead.line.startswith("RuntimeError: call aclnnCast failed")


def test_inner_error_without_detail_never_leads_the_line_with_detail_does() -> None:
    # EZ9999 "Inner Error!" first, then the EZ9999 record that says what failed
    # (https://github.com/hiyouga/LlamaFactory/issues/4610).
    text = _train("https://github.com/hiyouga/LlamaFactory/issues/4610", "Op Cast")
    (chain,) = _scan(text).chains
    inner = next(e for e in chain.echoes if e.signature.id == "cann.inner-error")
    assert specificity(inner) == CATCH_ALL
    assert inner.line_number < chain.lead.line_number
    assert "Parse dynamic kernel config fail" in chain.lead.line


def test_err99999_is_never_the_cause_when_the_exception_above_it_is_explained() -> None:
    # torch_npu's ERR99999 says "see the Python exception above it"; the AttributeError
    # leads (https://github.com/Ascend/pytorch/issues/53).
    text = _train("https://github.com/Ascend/pytorch/issues/53", "ERR99999")
    (chain,) = _scan(text).chains
    assert "AttributeError" in chain.lead.line
    catch_all = next(e for e in chain.echoes if e.signature.id == "torch-npu.err99999-unknown")
    assert specificity(catch_all) == CATCH_ALL and not chain.catch_all


def test_a_catch_all_alone_leads_but_says_no_cause_was_found_and_exits_1() -> None:
    text = next(r["text"] for r in _unexplained() if "applicaiton exception" in r["text"]
                and "pydantic" in r["text"])
    scan = _scan(text)
    (chain,) = scan.chains
    assert chain.catch_all and not chain.cause_found
    assert _exit(text, scan) == 1


def test_the_section_titles_of_mindspores_error_report_are_not_errors_of_their_own() -> None:
    # MindSpore frames the CANN message in titled sections; the titles are explained with the
    # record they frame, and listed as not known where nothing near them is explained.
    text = _train("https://github.com/modelbox-ai/modelbox/issues/357", "Error Message:")
    titles = [line for line in text.splitlines() if "Error Message:" in line]
    assert len(titles) == 2 and all(ERROR_LIKE.search(line) for line in titles)
    scan = _scan(text)
    assert scan.chains and not {u.line.strip() for u in scan.unknown} & set(titles)
    alone = _scan("\n".join(titles))
    assert {u.line for u in alone.unknown} == set(titles)


def _unexplained() -> list[dict[str, Any]]:
    items = yaml.safe_load(UNEXPLAINED.read_text(encoding="utf-8"))
    assert isinstance(items, list)
    return items


def _exit(text: str, scan: Scan) -> int:
    return Explanation(inputs=Inputs(sources=[Source("log", text)]), scan=scan).exit_code()


def test_the_unexplained_records_are_real_and_none_is_held_out() -> None:
    held = {item["thread"] for item in load(HELDOUT)}
    items = _unexplained()
    assert len(items) >= 20
    for item in items:
        assert item["thread"].startswith("https://github.com/"), item
        assert item["thread"] not in held, item["thread"]


@pytest.mark.parametrize("index", range(len(yaml.safe_load(UNEXPLAINED.read_text()))))
def test_no_silent_pass_on_a_record_nothing_explains(index: int) -> None:
    text = _unexplained()[index]["text"]
    scan = _scan(text)
    # Either its error lines are listed as not known, or the only lines explain matched
    # report an error this record does not show (an echo or a catch-all): exit 1 both ways.
    assert scan.unknown or (scan.chains and not scan.chains[0].cause_found), text
    assert _exit(text, scan) == 1


def test_the_command_line_lists_them_as_not_known_with_exit_1(tmp_path: Path) -> None:
    log = tmp_path / "records.log"
    log.write_text("\n\n".join(item["text"] for item in _unexplained()) + "\n",
                   encoding="utf-8")
    done = invoke("explain", str(log), "--json")
    assert done.code == 1, done.err
    document = json.loads(done.out)
    unknown = {u["line"] for u in document["unknown"]}
    assert "AttributeError: 'str' object has no attribute '__module__'. Did you mean: '__mod__'?" \
        in unknown
    assert any("MIE04E02041C" in line for line in unknown)
    assert any(line.startswith("E20241122 10:02:57") for line in unknown)  # a glog E line
    text = invoke("explain", str(log))
    assert text.code == 1 and "not known (" in text.out


@pytest.mark.parametrize("line", [
    # https://github.com/vllm-project/vllm-ascend/issues/382
    "  what():  [Rank 1] HCCL watchdog thread terminated with exception: [Rank 1] Watchdog "
    "caught collective operation timeout: WorkHCCL(SeqNum=196, OpType=ALLREDUCE, "
    "Timeout(ms)=3600000) ran for 3600185 milliseconds before timing out.",
    # https://github.com/gpustack/gpustack/issues/3284
    "gpustack_runtime.detector.pydcmi.DCMIError_LibraryNotFound: Library Not Found",
    # https://github.com/hiyouga/LlamaFactory/issues/3796
    "        Op Cast does not has any binary.",
])
def test_these_real_lines_look_like_errors(line: str) -> None:
    assert ERROR_LIKE.search(line), line
