"""Numeric return codes (ascend_env/explain/codes.py: the ACL runtime's, the operator API's,
HCCL's) on lines quoted in public threads: the code found in each phrasing that prints one, its
documented name, and a cause only where the name says it."""

from __future__ import annotations

import pytest

from ascend_env.explain.codes import code_signature, load_codes
from ascend_env.explain.families import fallback
from ascend_env.explain.match import Matcher
from ascend_env.explain.signatures import load_signatures
from ascend_env.explain.vocabulary import load_vocabulary

# (line, code, family, cause id or None); each line is a record of the explain corpus
# (tests/data/real/explain/corpus.yaml), quoted from the thread named.
REAL = [
    # https://github.com/gpustack/gpustack/issues/3352
    ("RuntimeError: init:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:292 NPU function "
     "error: aclrtGetDeviceCount(&device_count), error code is 207004",
     207004, "runtime", "visible-devices"),
    # https://github.com/vllm-project/vllm-ascend/issues/2105
    ("EH9999: [PID: 56178] 2025-07-30-06:16:22.730.302 wait for compute device to finish "
     "failed, runtime result = 507018.[FUNC:ReportCallError][FILE:log_inner.cpp][LINE:161]",
     507018, "aicpu", None),
    # https://github.com/Ascend/samples/issues/16
    ("[ERROR]  reset device 0 failed, errorCode = 507007", 507007, "runtime", None),
    # https://github.com/vllm-project/vllm-ascend/issues/800
    ("ERROR 05-09 08:06:34 [engine.py:448]         [Init][Version]init soc version failed, "
     "ret = 507008[FUNC:ReportInnerError][FILE:log_inner.cpp][LINE:145]", 507008, "runtime", None),
    # https://github.com/microsoft/onnxruntime/issues/15677
    ("CANN failure 507013: (look for ACL_ERROR_xxx in acl. h); NPU=0 ; hostname=davinci-mini ; "
     "expr=aclrtSynchronizeStream(GetStream(kCannStreamDefault));", 507013, "runtime", None),
    # https://github.com/Ascend/pytorch/issues/62
    ("# RuntimeError: npuSynchronizeDevice:torch_npu/csrc/core/npu/NPUStream.cpp:435 NPU "
     "function error: aclrtSynchronizeDevice, error code is 507046", 507046, "runtime",
     "rank-failed"),
]


@pytest.mark.parametrize(("line", "code", "family", "cause"), REAL, ids=[r[1] for r in REAL])
def test_the_code_of_a_real_line_with_its_name(line: str, code: int, family: str,
                                               cause: str | None) -> None:
    found = code_signature(line)
    assert found is not None
    assert found.id == f"code.{code}" and found.family == family
    name = load_codes().codes[code].name
    assert name.startswith("ACL_ERROR_") and name in found.meaning
    assert found.causes[0].id == cause
    # A code that names no cause is a family match: it leaves the first cause to other lines.
    assert (found.role == "family") is (cause is None)


def test_a_code_that_names_its_cause_outranks_the_runtimes_bare_words() -> None:
    # The same line also carries EH9999, a CANN code class: the return code says more.
    line = REAL[1][0]
    assert fallback(line) is code_signature(line)


@pytest.mark.parametrize("line", [
    "Tried to allocate 207018 bytes",
    "(VllmWorker rank=0 pid=507014) INFO loading weights",
    "step 107020 loss 2.31",
    "error code is 5070460",
])
def test_a_six_digit_number_that_is_not_a_return_code(line: str) -> None:
    assert code_signature(line) is None


def test_the_table_follows_the_headers_classes() -> None:
    table = load_codes()
    assert len(table.codes) >= 100 and table.said_source.endswith("NPUErrorCodes.h")
    causes = load_vocabulary()
    for number, code in table.codes.items():
        assert code.source.startswith("https://github.com/")
        if code.family == "cann":  # the operator API's
            assert number // 1000 in (161, 361, 561) and code.name.startswith("ACLNN_ERR_")
            assert code.source.endswith("aclnn_return_code.md")
            continue
        assert number // 1000 in (107, 207, 507), number
        assert code.name.startswith("ACL_ERROR_"), code
        assert code.source.endswith("rt_error_codes.h")
        assert code.cause is None or code.cause in causes
    assert sorted(table.hccl) == list(range(1, 25))
    for number, code in table.hccl.items():
        assert code.name.startswith("HCCL_E_") and code.source.endswith("hccl_types.h")
        assert code.family == "hccl" and code.ident == f"code.hccl-{number}"


def test_hccls_code_in_torch_npus_wrapper_of_a_collective() -> None:
    # A record of the corpus's train part, quoted from
    # https://github.com/vllm-project/vllm-ascend/issues/672
    line = ("[rank1]: RuntimeError: create_config:build/CMakeFiles/torch_npu.dir/compiler_depend"
            ".ts:102 HCCL function error: hcclCommInitRootInfoConfig(numRanks, &rootInfo, rank, "
            "config, &(comm->hcclComm_)), error code is 15")
    found = code_signature(line)
    assert found is not None and (found.id, found.family) == ("code.hccl-15", "hccl")
    assert "HCCL_E_RUNTIME" in found.meaning and found.role == "family"
    # The same number outside HCCL's wrapper is no HCCL code.
    assert code_signature("step 15 failed, error code is 15") is None


def test_an_entry_for_the_line_wins_over_the_code() -> None:
    # torch_npu's own entry for this line says more than the code's name.
    line = REAL[5][0]
    matcher = Matcher(load_signatures())
    exact = matcher.explain_line(line)
    assert exact is not None and not exact.id.startswith("code.")
    without = Matcher([s for s in load_signatures() if s.id != exact.id])
    assert without.explain_line(line) is code_signature(line)


def test_a_code_that_names_its_cause_explains_the_record() -> None:
    matcher = Matcher([s for s in load_signatures() if not s.pattern.search(REAL[0][0])])
    scan = matcher.scan([("record", REAL[0][0])])
    assert scan.chains and scan.chains[0].cause_found
    assert scan.chains[0].lead.signature.id == "code.207004"
    assert not scan.unknown


@pytest.mark.parametrize(("line", "code"), [
    # https://github.com/hiyouga/LlamaFactory/issues/3796
    ("launch failed for Cast, errno:561000.", 561000),
    # https://github.com/vllm-project/vllm-ascend/pull/12201
    ("aclnnQuantMatmulV5 ... error code 161002 Invalid_Argument(EZ0027):", 161002),
])
def test_the_operator_apis_codes(line: str, code: int) -> None:
    found = code_signature(line)
    assert found is not None and (found.id, found.family) == (f"code.{code}", "cann")
    assert "ACLNN_ERR_" in found.meaning and found.source.endswith("aclnn_return_code.md")


# torch_npu's sentence for a code, on a line of its own; each is a record of the explain corpus.
SAID = [
    # https://github.com/vllm-project/vllm-ascend/issues/2105
    ("[Error]: The aicpu execution is abnormal.", 507018),
    # https://github.com/gpustack/gpustack/issues/3352
    ("[Error]: The device is unavailable.", 207004),
    # https://github.com/vllm-project/vllm-ascend/issues/800
    ("ERROR 05-09 08:06:34 [engine.py:448] [Error]: The context is empty.", 107002),
]


@pytest.mark.parametrize(("line", "code"), SAID, ids=[str(s[1]) for s in SAID])
def test_torch_npus_sentence_for_a_code(line: str, code: int) -> None:
    found = code_signature(line)
    assert found is not None and found.id == f"code.{code}"
    assert found.pattern.search(line) and "NPUErrorCodes.h" in found.source
    # torch_npu printed the line, whichever layer the code names.
    assert found.family == "torch_npu"


def test_a_sentence_torch_npu_does_not_print_for_a_code() -> None:
    assert code_signature("[Error]: The weather is fine.") is None
    # 207005 prints 207001's sentence, so the sentence names 207001 only.
    assert load_codes().codes[207005].says is None
