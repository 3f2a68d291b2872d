"""`ascend-env explain` from the command line: exit codes, the v1 JSON, bad input."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from ascend_env.explain import plog
from ascend_env.explain.plog import read_inputs
from tests.cli_invoke import invoke

DATA = Path(__file__).resolve().parents[1] / "data" / "explain"


def test_every_line_explained_is_exit_0_with_meaning_causes_and_fix() -> None:
    done = invoke("explain", str(DATA / "vllm-ascend-4284-set-device.log"))
    assert done.code == 0, done.err
    # The CANN code's line states the why below torch_npu's report of the failed call: it
    # leads, and the wrappers and the runtime's TraceBack lines are listed as its echoes.
    assert "x aicpu.opp-verify-e30006  [first cause]" in done.out
    assert "likely causes:" in done.out and "(checks: cann.ops, cann.version)" in done.out
    assert "source: https://github.com/vllm-project/vllm-ascend/issues/4284" in done.out
    echoes = done.out.split("echoes of it (4)")[1]
    assert "- aicpu.executor-start-0x7020009 at" in echoes
    assert "- torch-npu.err00100-acl-api at" in echoes


def test_json_is_explain_v1_with_matches_and_unknown(tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    log.write_text("ImportError: libascend_hal.so: cannot open shared object file: No such "
                   "file or directory\nImportError: libascend_hal.so: cannot open shared "
                   "object file: No such file or directory\nKeyError: 'weights'\n")
    done = invoke("explain", str(log), "--json")
    assert done.code == 1  # one error-looking line is not known
    document = json.loads(done.out)
    assert document["schema"] == "ascend-env/explain/v1"
    match, hint = document["matches"]
    assert match["id"] == "loader.libascend-hal"
    # The KeyError names no layer: a rule names its likely cause as a family match only.
    assert (hint["id"], hint["family"], hint["match"], hint["line_number"]) == \
        ("rule.python-code-error", "unplaced", "family", 3)
    assert (match["line_number"], match["count"], match["file"]) == (1, 2, str(log))
    assert match["fix"]["id"] == "ld-library-path"
    assert match["source"].startswith("https://")
    assert {c["text"]: c["checks"] for c in match["causes"]}[
        "the NPU driver is not installed"] == ["driver.installed"]
    assert document["unknown"] == [{"line": "KeyError: 'weights'", "file": str(log),
                                    "line_number": 3, "count": 1}]


def test_unknown_text_says_so_and_points_to_collect(tmp_path: Path) -> None:
    log = tmp_path / "odd.log"
    log.write_text("Segmentation fault: worker 3 failed\n")
    done = invoke("explain", str(log))
    assert done.code == 1
    assert "not known (1 line(s) that look like errors)" in done.out
    assert "ascend-env collect" in done.out


def test_a_missing_file_is_exit_2() -> None:
    done = invoke("explain", "/nonexistent/x.log")
    assert done.code == 2
    assert "/nonexistent/x.log" in done.err and "Traceback" not in done.err


def test_a_named_binary_file_is_exit_2(tmp_path: Path) -> None:
    blob = tmp_path / "core"
    blob.write_bytes(b"\x7fELF\0\0\0binary")
    done = invoke("explain", str(blob))
    assert done.code == 2
    assert "binary" in done.err


def test_spec_without_a_host_is_a_usage_error(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_text("ok\n")
    done = invoke("explain", str(log), "--profile", "910b")
    assert done.code == 2


def test_standard_input_is_read_with_dash() -> None:
    inputs = read_inputs(["-"], stdin=io.BytesIO(
        b"dcmi module initialize failed. ret is -8005\n"))
    assert [s.name for s in inputs.sources] == ["<stdin>"]
    assert "-8005" in inputs.sources[0].text


def test_a_folder_walk_skips_links_binaries_and_keeps_going(tmp_path: Path) -> None:
    (tmp_path / "plog").mkdir()
    (tmp_path / "plog" / "a.log").write_text("dcmi module initialize failed. ret is -8005\n")
    (tmp_path / "plog" / "b.bin").write_bytes(b"\0\1\2")
    (tmp_path / "plog" / "link.log").symlink_to("/etc/passwd")
    os.mkfifo(tmp_path / "plog" / "fifo")  # a walk must never block on a pipe
    inputs = read_inputs([str(tmp_path / "plog")])
    assert [Path(s.name).name for s in inputs.sources] == ["a.log"]
    reasons = {Path(p).name: r for p, r in inputs.skipped}
    assert reasons == {"b.bin": "binary", "link.log": "not a regular file",
                       "fifo": "not a regular file"}


def test_a_large_file_is_read_from_its_end_with_exact_line_numbers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plog, "MAX_FILE_BYTES", 64)
    big = tmp_path / "big.log"
    big.write_text("".join(f"line {i:04d} fine\n" for i in range(50)) +
                   "dcmi module initialize failed. ret is -8005\n")
    (source,) = read_inputs([str(big)]).sources
    lines = source.text.splitlines()
    assert lines[-1].startswith("dcmi module")
    assert source.skipped_lines + len(lines) == 51
    assert source.note is not None


def test_the_file_count_limit_is_reported_not_fatal(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plog, "MAX_FILES", 2)
    for i in range(4):
        (tmp_path / f"{i}.log").write_text("x\n")
    inputs = read_inputs([str(tmp_path)])
    assert len(inputs.sources) == 2
    assert len(inputs.skipped) == 2 and "limit" in inputs.skipped[0][1]


def test_a_host_is_not_contacted_when_no_cause_has_a_check(tmp_path: Path) -> None:
    # The mooncake transport's loader error has one cause, and no host check for it: the
    # unreachable address is never tried.
    log = tmp_path / "a.log"
    log.write_text("ImportError: ascend_transport.so: cannot open shared object file: No such "
                   "file or directory\n")
    done = invoke("explain", str(log), "--host", "ssh://root@127.255.255.254")
    assert done.code == 0, done
    assert "nothing was run" in done.out


def test_json_leads_with_the_first_cause_and_marks_echoes() -> None:
    done = invoke("explain", str(DATA / "llamafactory-3839-hccp-chain.log"), "--json")
    document = json.loads(done.out)
    (chain,) = document["chains"]
    first = document["matches"][0]
    assert first["id"] == chain["cause"] and first["role"] == "cause"
    assert first["line"].startswith("EJ0001:") and first["match"] == "exact"
    echoes = {m["id"]: m for m in document["matches"] if m["role"] == "echo"}
    assert set(chain["echoes"]) == set(echoes)
    wrapper = echoes["torch-npu.err02200-dist-hccl"]
    assert wrapper["echo_of"] == chain["cause"]
    assert (wrapper["numbers"]["rank"], wrapper["numbers"]["device"]) == ("3", "3")


def test_list_shows_the_base_by_family_with_counts() -> None:
    from ascend_env.explain.signatures import load_signatures  # noqa: PLC0415

    signatures = load_signatures()
    total = len(signatures)
    npu_smi = sum(1 for s in signatures if s.family == "npu_smi")
    done = invoke("explain", "--list")
    assert done.code == 0, done.err
    assert done.out.startswith(f"{total} entries in ")
    assert "torch-npu.oom" in done.out and f"\nnpu_smi ({npu_smi})\n" in done.out
    document = json.loads(invoke("explain", "--list", "--json").out)
    assert document["schema"] == "ascend-env/explain-list/v1"
    assert sum(f["count"] for f in document["families"]) == total == document["total"]
    assert invoke("explain", "--list", "x.log").code == 2


def test_a_rule_on_a_record_without_a_layer_is_a_likely_cause_only(tmp_path: Path) -> None:
    # A record of the corpus's train part, quoted from
    # https://github.com/vllm-project/vllm-ascend/pull/1803
    log = tmp_path / "job.log"
    log.write_text("AttributeError: 'Qwen2AudioConfig' object has no attribute "
                   "'num_hidden_layers'\n")
    done = invoke("explain", str(log))
    assert done.code == 1
    assert "rule.python-code-error  [a likely cause only: the record names no layer" in done.out
    assert "not known (1 line(s) that look like errors)" in done.out
