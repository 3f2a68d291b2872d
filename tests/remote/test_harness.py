"""The workloads' shared harness: parsers fed with real outputs, device strings, the evidence
emitter under its watchdog, and the verbatim copies inside each workload."""

# ruff: noqa: E501  (verbatim vendor output wider than the line limit)
from __future__ import annotations

import ast
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ascend_env.remote import harness
from tests.vendor_samples import sample

SMOKE = Path(harness.__file__).resolve().parent

# https://github.com/vllm-project/vllm-ascend/issues/198, with the process table of a busy NPU 1 in the
# layout the same output uses for rows (NPU and chip, pid, name, memory).
NPU_SMI_910B = sample("npu_smi_info", "910b3-23.0.7").replace(
    "| No running processes found in NPU 1                                                            |",
    "| 1       0                 | 41711         | python3                  | 3105                    |")

# The warning torch_npu prints for an operator without an NPU kernel: the C++ form (MinerU
# #1695, pytorch #136302) and the same text raised as a Python warning.
FALLBACK_LOG = """\
[W compiler_depend.ts:51] Warning: CAUTION: The operator 'torchvision::nms' is not currently supported on the NPU backend and will fall back to run on the CPU. This may have performance implications. (function npu_cpu_fallback)
[W VariableFallbackKernel.cpp:51] Warning: CAUTION: The operator 'aten::isin.Tensor_Tensor_out' is not currently supported on the NPU backend and will fall back to run on the CPU. This may have performance implications. (function npu_cpu_fallback)
train.py:12: UserWarning: CAUTION: The operator 'aten::isin.Tensor_Tensor_out' is not currently supported on the NPU backend and will fall back to run on the CPU. This may have performance implications.
"""

KERNEL_DETAILS = """\
Step Id,Model ID,Task ID,Stream ID,Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Dim
1,4294967295,10,2,aclnnMatmul_MatMulV2_MatMulV2,MatMulV2,AI_CORE,1700000000000.1,12.3,0.0,24
1,4294967295,11,2,aclnnNonzero_NonZero_NonZero,NonZero,AI_CPU,1700000000020.5,80.1,1.2,1
1,4294967295,12,2,aclnnAdd_Add_Add,Add,AI_VECTOR_CORE,1700000000101.0,2.0,0.1,40
"""

# The same table from an older profiler: "OP Type" and "Task Type" instead.
OP_SUMMARY = """\
Op Name,OP Type,Task Type,Task Start Time(us),Task Duration(us)
UniqueWithPad,UniqueWithPad,AI_CPU,1.0,5.0
MatMul,MatMul,AI_CORE,6.0,1.0
"""

# MindSpore 2.10.0 (the unified wheel) asked for Ascend on a host without CANN, verbatim.
MINDSPORE_NO_CANN = """\
Unsupported device target Ascend. This process only supports one of the ['CPU']. Please check whether the Ascend environment is installed and configured correctly, and check whether current mindspore wheel package was built with "-e Ascend". For details, please refer to "Device load error message".

----------------------------------------------------
- Device load error message:
----------------------------------------------------
Load dynamic library: libmindspore_ascend.so.2 failed. libge_runner.so: cannot open shared object file: No such file or directory
Load dynamic library: libmindspore_ops_ascend.so failed. libmindspore_ascend_res_manager.so: cannot open shared object file: No such file or directory
"""


def _runtime_imports(tree: ast.Module) -> set[str]:
    """Top-level names of the modules a file imports at run time (not for type checking)."""
    skipped = {id(node) for branch in ast.walk(tree) if isinstance(branch, ast.If)
               and isinstance(branch.test, ast.Name) and branch.test.id == "TYPE_CHECKING"
               for statement in branch.body for node in ast.walk(statement)}
    found = {alias.name.split(".")[0] for node in ast.walk(tree)
             if isinstance(node, ast.Import) and id(node) not in skipped for alias in node.names}
    return found | {(node.module or "").split(".")[0] for node in ast.walk(tree)
                    if isinstance(node, ast.ImportFrom) and id(node) not in skipped}


@pytest.mark.parametrize("name", [*harness.WORKLOADS, *harness.COMPANIONS])
def test_workloads_need_only_the_standard_library_and_the_framework(name: str) -> None:
    """They run on the target, where ascend-env and pydantic are not installed."""
    tree = ast.parse((SMOKE / name).read_text(encoding="utf-8"))
    # Frameworks are imported through the harness's load("name") (harness.load in workloads).
    loaded = {node.args[0].value for node in ast.walk(tree)
              if isinstance(node, ast.Call) and node.args
              and isinstance(node.args[0], ast.Constant)
              and ((isinstance(node.func, ast.Name) and node.func.id == "load")
                   or (isinstance(node.func, ast.Attribute) and node.func.attr == "load"
                       and isinstance(node.func.value, ast.Name)
                       and node.func.value.id == "harness"))}
    # The companions are the neighbour files the runner ships with every workload ("" is
    # their package-relative spelling, `from . import harness`, when imported from the package).
    neighbours = {Path(companion).stem for companion in harness.COMPANIONS}
    allowed = set(sys.stdlib_module_names) | {"__future__", "torch", ""} | neighbours
    imported = _runtime_imports(tree)
    assert imported <= allowed, imported - allowed
    assert loaded <= {"torch_npu", "mindspore", "numpy"}
    if name in harness.WORKLOADS:
        assert loaded, "the workload loads its framework through harness.load"


def test_npu_smi_process_rows() -> None:
    rows = harness.npu_smi_processes(NPU_SMI_910B)
    assert rows == [{"npu": 1, "chip": 0, "pid": 41711, "name": "python3", "memory_mb": 3105}]


def test_npu_smi_idle_table_has_no_rows() -> None:
    idle = NPU_SMI_910B.rsplit("| 1       0", 1)[0]
    assert harness.npu_smi_processes(idle) == []


def test_nvidia_smi_rows() -> None:
    rows = harness.nvidia_smi_processes("4242, python, 1503\n77, /usr/bin/python3, 10\n")
    assert [row["pid"] for row in rows] == [4242, 77]
    assert rows[0]["memory_mb"] == 1503


def test_cpu_fallbacks_from_both_warning_forms() -> None:
    assert harness.cpu_fallback_ops(FALLBACK_LOG) == ["aten::isin.Tensor_Tensor_out",
                                                      "torchvision::nms"]
    assert harness.cpu_fallback_ops("loss 0.1\n") == []


@pytest.mark.parametrize("table", [KERNEL_DETAILS, OP_SUMMARY])
def test_aicpu_operators_from_profiler_tables(table: str) -> None:
    found = harness.aicpu_ops(table)
    assert found in (["NonZero"], ["UniqueWithPad"])


@pytest.mark.parametrize(("text", "expected"), [
    ("npu:0", ("npu", 0)), ("NPU:3", ("npu", 3)), ("npu", ("npu", None)), ("cpu", ("cpu", None)),
    ("cuda:1", ("cuda", 1)), ("all", ("all", None)),
])
def test_device_strings(text: str, expected: tuple[str, int | None]) -> None:
    assert harness.parse_device(text) == expected


@pytest.mark.parametrize("text", ["gpu:0", "npu:x", "cpu:0", "all:1", ""])
def test_bad_device_strings(text: str) -> None:
    with pytest.raises(ValueError, match="device"):
        harness.parse_device(text)


def test_import_failures_name_what_is_missing() -> None:
    absent = ModuleNotFoundError("No module named 'torch_npu'", name="torch_npu")
    assert harness.import_failure("torch_npu", absent) == ["torch_npu"]
    no_cann = ImportError("libhccl.so: cannot open shared object file: No such file or directory")
    assert harness.import_failure("torch_npu", no_cann) == ["cann"]
    no_driver = ImportError("libascend_hal.so: cannot open shared object file: No such file")
    assert harness.import_failure("torch_npu", no_driver) == ["driver"]
    assert harness.import_failure("mindspore", RuntimeError(MINDSPORE_NO_CANN)) == ["cann"]
    other = ModuleNotFoundError("No module named 'yaml'", name="yaml")
    assert harness.import_failure("torch_npu", other) == []


def test_missing_list_adds_what_the_host_lacks() -> None:
    nothing: dict[str, object] = {"cann_home": None, "davinci_nodes": [], "npu_smi": None}
    assert harness.npu_missing(nothing, ["torch_npu"]) == ["torch_npu", "cann", "device"]
    installed: dict[str, object] = {"cann_home": "/usr/local/Ascend/cann",
                                    "davinci_nodes": ["/dev/davinci0"]}
    assert harness.npu_missing(installed, ["driver"]) == ["driver"]


@pytest.mark.parametrize(("losses", "fell"), [
    ([4.0, 3.0, 2.0, 1.0, 0.5, 0.4, 0.3, 0.2, 0.1, 0.1], True),
    ([1.0, 1.0, 1.0, 1.0, 1.0, 1.0], False),
    ([1.0, 2.0, 3.0, 4.0, 5.0], False),
    ([4.0, 3.0, None, 1.0, 0.5], False),  # a non-finite loss is never "fell"
    ([1.0], False),
])
def test_loss_summary(losses: list[float | None], fell: bool) -> None:
    assert harness.loss_summary(losses)["fell"] is fell


EMITTER = """\
import os, sys, time
from ascend_env.remote import harness
from tests.vendor_samples import sample
doc = harness.new_document("ascend-env/smoke/torch/v1", "torch", {"device": "cpu"})
emitter = harness.Emitter(doc)
emitter.arm(float(sys.argv[1]))
print("framework chatter on stdout")
os.write(2, b"C++ warning on fd 2\\n")
doc["phase"] = "sleeping"
if len(sys.argv) > 3:
    open(sys.argv[3], "w").close()  # tell the test the handlers are in place
time.sleep(float(sys.argv[2]))
doc["status"] = "ok"
sys.exit(emitter.emit(0))
"""


def _emit(timeout: str, sleep: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", EMITTER, timeout, sleep], capture_output=True,
                          text=True, timeout=30, check=False)


def test_emitter_prints_one_clean_json_document() -> None:
    done = _emit("30", "0")
    assert done.returncode == 0
    document = json.loads(done.stdout)  # stdout holds the JSON and nothing else
    assert document["status"] == "ok"
    assert "framework chatter on stdout" in document["log_tail"]
    assert "C++ warning on fd 2" in document["log_tail"]
    assert done.stderr == ""


def test_watchdog_prints_the_evidence_so_far_and_exits_3() -> None:
    done = _emit("0.5", "20")
    assert done.returncode == harness.EXIT_TIMEOUT
    document = json.loads(done.stdout)
    assert document["status"] == "timeout"
    assert document["reason"] == "time limit of 0.5 s reached during sleeping"
    assert document["duration_s"] < 5


def test_nan_becomes_null() -> None:
    text = harness.dumps({"schema": "s", "loss": [1.0, float("nan"), float("inf")]})
    assert json.loads(text)["loss"] == [1.0, None, None]


def test_sigterm_prints_the_evidence_so_far(tmp_path: Path) -> None:
    """What a transport's own time limit (coreutils timeout) or the hccl coordinator sends."""
    ready = tmp_path / "ready"
    worker = subprocess.Popen([sys.executable, "-c", EMITTER, "60", "30", str(ready)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    worker.send_signal(signal.SIGTERM)
    out, _ = worker.communicate(timeout=20)
    assert worker.returncode == harness.EXIT_FAILED
    document = json.loads(out)
    assert document["status"] == "error"
    assert document["reason"] == f"terminated by signal {signal.SIGTERM.value} during sleeping"
