"""`explain --from CAPTURE`: where a cause is a version mismatch or a missing package, the
installed versions of the packages involved and whether the compatibility matrix pairs them,
read from a saved capture (the doctor's pairing checks decide; no live host is needed).

The records are real (the corpus's train part); the captures are the facts tests' provisioned
910B host (torch 2.1.0+cpu, torch_npu 2.1.0.post8, CANN 8.0.0, driver 24.1.rc3) and copies of it
with other framework packages installed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ascend_env.explain.confirm import installed_versions, involved_packages, pairings
from ascend_env.explain.match import default_matcher
from ascend_env.facts.assemble import facts_from_capture
from ascend_env.facts.capture import Capture, save_captures
from ascend_env.remote import probe
from tests.cli_invoke import invoke
from tests.explain.corpus_score import TRAIN, load
from tests.facts.captures import host_910b, ok

AUTOLOAD = "https://github.com/flashserve/flash-linear-attention-npu/issues/2"
ACLNN = "https://github.com/vllm-project/vllm-ascend/issues/9258"
TRITON = "https://github.com/flagos-ai/FlagGems/issues/5791"


def _record(thread: str) -> str:
    """The first train record of a thread (a real error text)."""
    text: str = next(r["text"] for r in load(TRAIN) if r["thread"] == thread)
    return text


def _with_packages(distributions: list[list[str]] | None) -> Capture:
    """The 910B host with these distributions in its framework Python (None: not captured)."""
    capture = host_910b().model_copy(deep=True)
    if distributions is None:
        del capture.commands[probe.FRAMEWORK_PYTHON]
    else:
        capture.commands[probe.FRAMEWORK_PYTHON] = ok(json.dumps({
            "executable": "/opt/venv/bin/python", "version": "3.10.14",
            "distributions": [[name, version, ""] for name, version in distributions]}))
    return capture


def _explain(tmp_path: Path, thread: str, capture: Capture) -> tuple[int, dict[str, Any], str]:
    log, saved = tmp_path / "job.log", tmp_path / "capture.json"
    log.write_text(_record(thread) + "\n")
    save_captures(saved, [capture])
    done = invoke("explain", str(log), "--from", str(saved), "--json")
    text = invoke("explain", str(log), "--from", str(saved))
    return done.code, json.loads(done.out), text.out


def test_a_torch_newer_than_torch_npu_extends_holds_with_both_versions(tmp_path: Path) -> None:
    code, document, text = _explain(tmp_path, AUTOLOAD, _with_packages(
        [["torch", "2.4.0"], ["torch_npu", "2.1.0.post8"]]))
    assert code == 0  # explained; the host confirms the cause, which is no failure to run
    (host,) = document["hosts"]
    assert {i["name"]: i["version"] for i in host["installed"]} == {
        "torch": "2.4.0", "torch-npu": "2.1.0.post8"}
    (pair,) = host["pairings"]
    assert pair["packages"] == ["torch-npu", "torch"] and pair["verdict"] == "not paired"
    assert "torch_npu 2.1.0.post8 extends torch 2.1.0, torch 2.4.0 is installed" in \
        pair["message"]
    lead = next(m for m in document["matches"] if m["role"] == "cause")
    assert lead["id"] == "rule.torch-npu-autoload"
    assert lead["causes"][0]["id"] == "torch-npu-torch-mismatch"
    assert lead["causes"][0]["verdict"] == {"node-1.example.com": "holds"}
    assert "on node-1.example.com: torch 2.4.0, torch-npu 2.1.0.post8" in text
    assert "torch-npu + torch: NOT PAIRED by the matrix" in text


def test_the_pair_the_matrix_names_rules_the_cause_out(tmp_path: Path) -> None:
    code, document, text = _explain(tmp_path, AUTOLOAD, host_910b())
    assert code == 0
    (host,) = document["hosts"]
    (pair,) = host["pairings"]
    assert pair["verdict"] == "paired"
    lead = next(m for m in document["matches"] if m["role"] == "cause")
    assert lead["causes"][0]["verdict"] == {"node-1.example.com": "ruled out"}
    assert "torch-npu + torch: PAIRED by the matrix" in text


def test_an_operator_cann_lacks_states_cann_and_the_plugin_versions(tmp_path: Path) -> None:
    code, document, text = _explain(tmp_path, ACLNN, host_910b())
    assert code == 0
    (host,) = document["hosts"]
    installed = {i["name"]: (i["version"], i["state"]) for i in host["installed"]}
    assert installed["cann"] == ("8.0.0", "installed")
    assert installed["torch-npu"] == ("2.1.0.post8", "installed")
    assert installed["vllm-ascend"] == (None, "not installed")
    # torch_npu 2.1.0.post8 is built for CANN 8.0.RC3: the same line, no source pairs them.
    (pair,) = [p for p in host["pairings"] if p["packages"] == ["torch-npu", "cann"]]
    assert pair["verdict"] == "in doubt" and "8.0.RC3" in pair["message"]
    assert host["unpaired"] == ["vllm-ascend"]
    assert "the matrix states no pairing for vllm-ascend" in text


def test_the_packages_a_record_names_are_stated(tmp_path: Path) -> None:
    # A triton attribute missing under torch_npu's inductor: triton is triton-ascend's module.
    code, document, _ = _explain(tmp_path, TRITON, _with_packages(
        [["torch", "2.1.0+cpu"], ["torch_npu", "2.1.0.post8"], ["triton-ascend", "3.2.0"]]))
    assert code == 0
    lead = next(m for m in document["matches"] if m["role"] == "cause")
    assert {"torch", "triton-ascend"} <= set(lead["packages"])
    (host,) = document["hosts"]
    assert {i["name"]: i["version"] for i in host["installed"]}["triton-ascend"] == "3.2.0"


def test_a_capture_without_the_framework_python_says_not_read() -> None:
    facts = facts_from_capture(_with_packages(None))
    states = {i.name: (i.version, i.state)
              for i in installed_versions(facts, ("torch-npu", "cann", "driver"))}
    assert states == {"torch-npu": (None, "not read"), "cann": ("8.0.0", "installed"),
                      "driver": (facts.driver.version_raw if facts.driver else None,
                                 "installed")}


def test_a_pair_whose_check_did_not_run_is_undecided() -> None:
    found, unpaired = pairings(("torch-npu", "torch", "numpy"), {})
    assert [(p.packages, p.verdict) for p in found] == [(("torch-npu", "torch"), "undecided")]
    assert unpaired == ["numpy"]


def test_a_cause_s_packages_are_the_vocabulary_s_unless_it_lists_named() -> None:
    # cann-too-old lists its packages; the record's own (torch_npu's frames) are read only
    # for a cause that lists `named`.
    scan = default_matcher().scan([("x", _record(ACLNN))])
    assert involved_packages(scan.hits) == ("cann", "torch-npu", "vllm-ascend")


def test_from_with_host_is_a_usage_error(tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    log.write_text(_record(AUTOLOAD) + "\n")
    done = invoke("explain", str(log), "--from", str(tmp_path / "c.json"), "--host", "node")
    assert done.code == 2 and "name one of --host, --from, not several" in done.err


def test_an_unreadable_capture_is_exit_2(tmp_path: Path) -> None:
    log, saved = tmp_path / "job.log", tmp_path / "capture.json"
    log.write_text(_record(AUTOLOAD) + "\n")
    saved.write_text("[" * 100_000 + "]" * 100_000)
    done = invoke("explain", str(log), "--from", str(saved))
    assert done.code == 2 and "nested too deeply" in done.err and "Traceback" not in done.err


def test_an_area_s_checks_are_judged_on_the_host_and_the_record_stays_unknown(
        tmp_path: Path) -> None:
    # The deepspeed extension's own symbol: no entry or rule knows it; its area (abi) names
    # the pairing checks, which the capture decides. The record is still not explained.
    code, document, _ = _explain(
        tmp_path, "https://github.com/deepspeedai/DeepSpeed/pull/7894", host_910b())
    assert code == 1
    (area,) = [m for m in document["matches"] if m["id"] == "area.abi"]
    assert area["match"] == "family" and document["chains"][0]["cause_found"] is False
    # torch_npu 2.1.0.post8 under CANN 8.0.0 is "in doubt" (a warning): the layer's checks
    # find something there.
    assert area["causes"][0]["verdict"] == {"node-1.example.com": "holds"}
    checks = {c["id"]: c["status"] for c in area["checks"]}
    assert checks["frameworks.torch-pair"] == "pass"
    assert checks["frameworks.torch-npu-cann"] == "warn"
    assert document["unknown"]
