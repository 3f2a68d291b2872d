"""explain on real logs that are not the knowledge base's samples (tests/data/explain/, with
SOURCE): the right entries, repeats grouped, unknown error lines kept apart."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascend_env.explain.match import Matcher, default_matcher
from ascend_env.explain.plog import read_inputs

DATA = Path(__file__).resolve().parents[1] / "data" / "explain"


@pytest.mark.parametrize(("name", "expected"), [
    ("vllm-ascend-4284-set-device.log",
     {"runtime.set-device-507033", "torch-npu.err00100-acl-api", "aicpu.opp-verify-e30006",
      "aicpu.tsd-wait-response", "aicpu.executor-start-0x7020009"}),
    ("pytorch-54-hccl-timeout.log",
     {"runtime.acl-stream-sync-failed", "cann.inner-error", "hccl.fftsplus-timeout"}),
    ("ptoas-1037-set-device.log",
     {"runtime.set-device-507033", "runtime.invalid-argument-ee1001", "aicpu.tsd-open-failed",
      "runtime.device-retain-failed"}),
    ("vllm-ascend-5493-aicore-timeout.log",
     {"runtime.aicore-timeout-507014", "cann.inner-error", "torch-npu.err00100-acl-api"}),
])
def test_real_logs_find_their_entries(name: str, expected: set[str]) -> None:
    scan = default_matcher().scan(read_inputs([str(DATA / name)]).texts())
    assert {h.signature.id for h in scan.hits} == expected
    assert scan.unknown == []


def test_repeats_are_grouped_with_their_first_line() -> None:
    scan = default_matcher().scan(read_inputs([str(DATA / "ptoas-1037-set-device.log")]).texts())
    by_id = {h.signature.id: h for h in scan.hits}
    retain = by_id["runtime.device-retain-failed"]
    assert retain.count == 5
    assert retain.line_number == 6
    assert by_id["runtime.set-device-507033"].count == 2
    assert by_id["runtime.set-device-507033"].line_number == 1


def test_a_plog_folder_is_walked_and_its_info_records_are_not_errors() -> None:
    inputs = read_inputs([str(DATA / "plog")])
    assert len(inputs.sources) == 2
    scan = default_matcher().scan(inputs.texts())
    assert [(h.signature.id, h.count) for h in scan.hits] == [("hccl.wait-socket-establish", 3)]
    assert scan.unknown == []
    assert scan.hits[0].source.endswith("plog-3977573_20251122173604447.log")


def test_unknown_error_lines_are_kept_and_grouped() -> None:
    text = ("[INFO] all good\nRuntimeError: the widget broke\nRuntimeError: the widget broke\n"
            "dcmi module initialize failed. ret is -8005\nnothing to see\n")
    scan = default_matcher().scan([("job.log", text)])
    assert [h.signature.id for h in scan.hits] == ["dcmi.init-8005"]
    assert [(u.line, u.line_number, u.count) for u in scan.unknown] == [
        ("RuntimeError: the widget broke", 2, 2)]


def test_a_traceback_header_is_explained_by_the_error_it_leads_to() -> None:
    text = ("Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n"
            "ImportError: libhccl.so: cannot open shared object file: No such file or "
            "directory\n")
    scan = default_matcher().scan([("t", text)])
    assert [h.signature.id for h in scan.hits] == ["loader.libhccl"]
    assert scan.unknown == []


def test_a_lone_traceback_header_is_unknown() -> None:
    scan = default_matcher().scan([("t", "Traceback (most recent call last):\n"
                                         "ValueError: bad\n")])
    assert [u.line for u in scan.unknown] == ["Traceback (most recent call last):",
                                              "ValueError: bad"]


def test_the_library_screen_and_the_hand_written_one_give_the_same_answers() -> None:
    # pyahocorasick is the screen explain uses; the loops serve where it is absent. Both
    # must pick the same entry for every real line we have.
    import yaml  # noqa: PLC0415

    from ascend_env.explain.signatures import load_signatures  # noqa: PLC0415

    corpus = Path(__file__).resolve().parents[1] / "data" / "real" / "explain" / "corpus.yaml"
    lines = [line for i in yaml.safe_load(corpus.read_text(encoding="utf-8"))
             for line in i["text"].splitlines()]
    lines += [s for sig in load_signatures() for s in sig.samples]
    lines += ["nothing to see here", "", "x" * 10000]
    fast, plain = default_matcher(), Matcher(use_library=False)
    assert fast._automaton is not None  # the dependency is installed
    assert [fast.best(line) for line in lines] == [plain.best(line) for line in lines]
