"""Every line tried, records matched whole, chains led by their first cause, code families,
numbers read: explain on real lines (tests/data/explain/, sources in SOURCE and the tests)."""

from __future__ import annotations

from pathlib import Path

from ascend_env.explain import records
from ascend_env.explain.families import fallback
from ascend_env.explain.match import Scan, default_matcher
from ascend_env.explain.numbers import fault_levels
from ascend_env.explain.plog import read_inputs

DATA = Path(__file__).resolve().parents[1] / "data" / "explain"


def test_a_bare_message_without_level_or_prefix_is_matched() -> None:
    # The part people paste: no ERROR prefix, no timestamp
    # (https://github.com/vllm-project/vllm-ascend/issues/4502).
    scan = default_matcher().scan([("paste", "RuntimeError: Cannot re-initialize NPU in forked "
                                             "subprocess. To use NPU with multiprocessing, you "
                                             "must use the 'spawn' start method\n")])
    assert [h.signature.id for h in scan.hits] == ["torch-npu.fork-reinit"]
    assert scan.unknown == []


def test_an_info_level_line_is_matched_too() -> None:
    # vLLM logs a worker's consequence at INFO (https://github.com/vllm-project/vllm-ascend/issues/2763).
    line = ("(VllmWorker TP0 pid=838) INFO 09-04 09:50:12 [multiproc_executor.py:520] Parent "
            "process exited, terminating worker")
    scan = default_matcher().scan([("w", line + "\n")])
    assert [h.signature.id for h in scan.hits] == ["vllm-ascend.parent-exited"]


def _scan(name: str) -> Scan:
    return default_matcher().scan(read_inputs([str(DATA / name)]).texts())


def test_a_traceback_is_one_record_and_its_header_and_frames_are_explained() -> None:
    lines = (DATA / "vllm-ascend-117-import-traceback.log").read_text().splitlines()
    assert records.split(lines) == [(0, 8)]
    scan = _scan("vllm-ascend-117-import-traceback.log")
    assert [(h.signature.id, h.line_number) for h in scan.hits] == [
        ("abi.atb-create-operation", 8)]
    assert scan.unknown == []


def test_a_message_wrapped_onto_two_lines_is_matched_as_one() -> None:
    # The second line alone says how many devices are visible; only the record does.
    lines = (DATA / "vllm-ascend-14631-no-devices.log").read_text().splitlines()
    assert records.split(lines) == [(0, 2)]
    (hit,) = _scan("vllm-ascend-14631-no-devices.log").hits
    assert hit.signature.id == "vllm-ascend.no-visible-devices"
    assert (hit.numbers["asked"], hit.numbers["visible"]) == ("8", "0")


def test_a_lone_traceback_stays_unknown_line_by_line() -> None:
    scan = default_matcher().scan([("t", "Traceback (most recent call last):\n"
                                         "  File \"x.py\", line 1, in <module>\n"
                                         "ValueError: bad widget\n")])
    assert scan.hits == []
    assert [u.line for u in scan.unknown] == ["Traceback (most recent call last):",
                                              "ValueError: bad widget"]


def test_a_chain_is_led_by_its_first_cause_with_the_wrappers_as_echoes() -> None:
    # torch_npu's wrappers come first, then the HCCP code that says why, then CANN's
    # TraceBack block under it.
    scan = _scan("llamafactory-3839-hccp-chain.log")
    (chain,) = scan.chains
    assert chain.lead.line.startswith("EJ0001:")
    assert chain.lead.signature.family != "torch_npu"  # the HCCP code's own entry
    echoes = {e.signature.id for e in chain.echoes}
    assert {"torch-npu.hccl-error-in-process-group", "torch-npu.err02200-dist-hccl"} <= echoes
    assert scan.hits[0] is chain.lead  # the answer leads with the cause
    assert all(e.echo_of == chain.lead.signature.id for e in chain.echoes)
    err = next(e for e in chain.echoes if e.signature.id == "torch-npu.err02200-dist-hccl")
    assert (err.numbers["rank"], err.numbers["device"]) == ("3", "3")


def test_a_code_the_base_does_not_know_gets_its_family() -> None:
    # An HCCL code with no entry of its own, and an AI CPU inner error code.
    hccl = fallback("EI0099: [PID: 1] 2025-01-01-00:00:00 something new broke")
    assert hccl is not None and hccl.family == "hccl" and hccl.role == "family"
    assert "HCCL" in hccl.meaning and "first error above" in hccl.meaning
    aicpu = fallback("E39123: Inner Error!")
    assert aicpu is not None and aicpu.family == "aicpu"
    assert "internal error of AI CPU" in aicpu.meaning
    torch = fallback("[ERROR] 2025-01-01-00:00:00 (PID:1, Device:0, RankID:-1) ERR03011 GRAPH x")
    assert torch is not None and "timeout" in torch.meaning and "GRAPH" in torch.meaning
    assert fallback("EQ0001 is not a CANN module") is None
    scan = default_matcher().scan([("l", "EI0099: something new broke on rank 2\n")])
    (hit,) = scan.hits
    assert hit.kind == "family" and hit.signature.id == "family.EI0099"
    assert scan.unknown == []


def test_an_oom_line_says_asked_free_and_total() -> None:
    # https://github.com/vllm-project/vllm-omni/issues/1199 (title), then the full form of
    # https://github.com/vllm-project/vllm-ascend/issues/19.
    line = ("RuntimeError: NPU out of memory. Tried to allocate 22.00 MiB (NPU 0; 60.97 GiB total "
            "capacity; 10.24 GiB already allocated; 10.24 GiB current active; 19.52 MiB free; "
            "10.65 GiB reserved in total by PyTorch)")
    (hit,) = default_matcher().scan([("o", line)]).hits
    assert hit.signature.id == "torch-npu.oom"
    assert hit.numbers == {"asked": "22.00 MiB", "npu": "0", "total": "60.97 GiB",
                           "allocated": "10.24 GiB", "free": "19.52 MiB",
                           "reserved": "10.65 GiB"}
    short = ("RuntimeError: NPU out of memory. Tried to allocate 52.00 MiB (NPU 0; 60.96 GiB "
             "total capacity; 59.36 GiB already allocated;")
    (hit,) = default_matcher().scan([("o", short)]).hits
    assert (hit.numbers["asked"], hit.numbers["total"]) == ("52.00 MiB", "60.96 GiB")


def test_an_npu_smi_health_page_names_the_npu_and_the_fault_level() -> None:
    scan = _scan("mindcluster-npu-smi-health.log")
    (chain,) = scan.chains
    assert chain.lead.signature.id == "npu-smi.health-error-code"
    assert chain.lead.numbers["npu"] == "0"
    assert chain.lead.numbers["codes"] == "A4025021 8C03A000 8C084E00"
    # 8C03A000 is filed under 'reset the NPU', 8C084E00 under 'reset once idle': the worst wins.
    assert fault_levels()["8C03A000"] == "restart-npu"
    assert chain.lead.numbers["level"] == "restart-npu"


def test_a_traceback_pasted_from_its_first_frame_is_one_record() -> None:
    # A record of the corpus's train part, quoted from
    # https://github.com/vllm-project/vllm-ascend/pull/1803 (the paste starts at a frame).
    lines = [
        '  File "/vllm-workspace/vllm-ascend/vllm_ascend/utils.py", line 307, in '
        'update_aclgraph_sizes',
        "    num_hidden_layers = vllm_config.model_config.hf_config.num_hidden_layers",
        '  File "/usr/local/python3.10.17/lib/python3.10/site-packages/transformers/'
        'configuration_utils.py", line 211, in __getattribute__',
        "    return super().__getattribute__(key)",
        "AttributeError: 'Qwen2AudioConfig' object has no attribute 'num_hidden_layers'",
    ]
    assert records.split(lines) == [(0, 5)]
    # So the frames place the error: vLLM Ascend's code called what raised it.
    (chain,) = default_matcher().scan([("log", "\n".join(lines))]).chains
    assert (chain.lead.signature.id, chain.lead.signature.family) == \
        ("rule.python-code-error", "vllm_ascend")
