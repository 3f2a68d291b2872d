"""Family fallback: a code the knowledge base does not know exactly still says whose it is.

CANN error codes are six characters: level (E error, W warning), module, four digits; codes
9000-9999 are the module's internal errors. The module letters are CANN's own table:
https://www.hiascend.com/document/detail/en/canncommercial/850/maintenref/troubleshooting/troubleshooting_0225.html
torch_npu's codes are ERR + submodule (2 digits) + error kind (3 digits), as
torch_npu/utils/_error_code.py in https://github.com/Ascend/pytorch builds them.
"""

from __future__ import annotations

import re

from ascend_env.explain.codes import code_signature
from ascend_env.explain.signatures import FALLBACK_PRIORITY, WHOLE_LOG, Cause, Signature

CANN_SOURCE = ("https://www.hiascend.com/document/detail/en/canncommercial/850/maintenref/"
               "troubleshooting/troubleshooting_0225.html")
_TORCH_NPU_SOURCE = "https://github.com/Ascend/pytorch/blob/master/torch_npu/utils/_error_code.py"

# Module character -> (our family name, what the module is).
CANN_MODULES: dict[str, tuple[str, str]] = {
    "1": ("ge", "GE, the graph engine (graph build and compile)"),
    "2": ("ge", "FE, the fusion engine (operator selection and fusion)"),
    "3": ("aicpu", "AI CPU (operators and tasks run on the device's AI CPU)"),
    "4": ("tbe", "TE Fusion (the TBE operator compiler)"),
    "7": ("tbe", "vector operator plug-ins"),
    "8": ("tbe", "vector operators"),
    "B": ("tbe", "the TBE pass compilation tool"),
    "C": ("tune", "Auto Tune"),
    "D": ("tune", "RL Tune"),
    "E": ("runtime", "the runtime (streams, tasks, device memory)"),
    "F": ("ge", "LxFusion and AutoDeploy"),
    "G": ("tune", "AOE, the tuning engine"),
    "H": ("runtime", "ACL, the application interface over the runtime"),
    "I": ("hccl", "HCCL, collective communication"),
    "J": ("hccl", "HCCP, the communication processes and RoCE/HCCS links under HCCL"),
    "K": ("profiling", "profiling"),
    "L": ("driver", "the NPU driver"),
    "M": ("runtime", "queue scheduling"),
    "N": ("dvpp", "DVPP, the media (image/video) processing unit"),
    "O": ("amct", "AMCT, the model compression toolkit"),
    "P": ("dump", "data dump"),
    "Z": ("cann", "common operators and operator API (aclnn) execution"),
}
_TORCH_NPU_MODULES = {0: "PTA (the torch_npu adapter itself)", 1: "OPS (an operator)",
                      2: "DIST (torch.distributed over HCCL)", 3: "GRAPH (torchair graph mode)",
                      4: "PROF (the profiler)", 99: "an unknown module"}
_TORCH_NPU_KINDS = {1: "invalid parameter", 2: "invalid type", 3: "invalid value",
                    4: "invalid pointer", 5: "internal error", 6: "memory error",
                    7: "feature not supported", 8: "resource not found",
                    9: "resource unavailable", 10: "system call failed", 11: "timeout",
                    12: "permission error", 100: "an ACL call failed",
                    200: "an HCCL call failed", 300: "a GE call failed",
                    999: "application exception"}

CODE = re.compile(r"\b(?:(?P<level>[EW])(?P<module>[1-9A-Z])(?P<number>\d{4})"
                  r"|ERR(?P<sub>\d{2})(?P<kind>\d{3}))\b")
_LOOK_ABOVE = ("look for the first error above this line (the first cause); this code "
               "usually reports it again")


def _cann(level: str, module: str, number: str) -> Signature | None:
    known = CANN_MODULES.get(module)
    if known is None:
        return None
    family, what = known
    code = f"{level}{module}{number}"
    inner = "an internal error of" if int(number) >= 9000 else "a user-side error of"
    meaning = (f"{code} is not in this knowledge base exactly; by CANN's code classes it is "
               f"{inner} {what}. The words on the line say what failed; {_LOOK_ABOVE}.")
    return _signature(f"family.{code}", family, code, "error" if level == "E" else "warning",
                      meaning=meaning, source=CANN_SOURCE)


def _torch_npu(sub: str, kind: str) -> Signature | None:
    module = _TORCH_NPU_MODULES.get(int(sub))
    what = _TORCH_NPU_KINDS.get(int(kind))
    if module is None or what is None:
        return None
    code = f"ERR{sub}{kind}"
    meaning = (f"{code} is torch_npu's code for {what} in {module}; it wraps the error that "
               f"caused it: {_LOOK_ABOVE}.")
    return _signature(f"family.{code}", "torch_npu", code, "error", meaning=meaning,
                      source=_TORCH_NPU_SOURCE)


def _signature(ident: str, family: str, code: str, severity: str, *, meaning: str,
               source: str) -> Signature:
    return Signature(
        id=ident, family=family, pattern=re.compile(re.escape(code)),
        severity="error" if severity == "error" else "warning", priority=FALLBACK_PRIORITY,
        meaning=meaning,
        causes=(Cause(text="the first error of the log (this code is its consequence or "
                           "repeats it)", checks=()),),
        fix=WHOLE_LOG, source=source, samples=(code,), role="family")


# The runtime states why a call failed in its own words: `reason=[aicpu exception]` and
# `retCode=0x2a, [aicpu exception]` (its FuncErrorReason and task-error lines), and the device
# error report `there is an exception of aicore error` / `an exception occurred during AICPU
# execution` (lines quoted in https://github.com/vllm-project/vllm-ascend/issues/1006 and
# https://github.com/hw-native-sys/PTOAS/pull/720).
REASON = re.compile(r"reason=\[(?P<reason>[^\]]{3,60})\]"
                    r"|retCode=0x[0-9a-fA-F]+, \[(?P<task>[^\]]{3,60})\]"
                    r"|there is an exception of (?P<kind>[\w ]{3,30}?) error"
                    r"|an exception occurred during (?P<during>\w{3,20}) execution")
_RUNTIME_SOURCE = "https://github.com/vllm-project/vllm-ascend/issues/1006"


def _reason(line: str) -> Signature | None:
    found = REASON.search(line)
    if found is None:
        return None
    said = found.group("reason") or found.group("task") or \
        (f"{found.group('kind')} exception" if found.group("kind") else
         f"{found.group('during')} exception")
    said = said.strip()
    ident = "family.reason." + re.sub(r"[^a-z0-9]+", "-", said.lower()).strip("-")
    meaning = (f"The runtime reports why the device call failed: '{said}'. This knowledge base "
               f"has no entry for this exact line; {_LOOK_ABOVE}.")
    return _signature(ident, "runtime", said, "error", meaning=meaning, source=_RUNTIME_SOURCE)


def fallback(line: str) -> Signature | None:
    """A runtime return code that names its cause, else the runtime's own stated reason on the
    line, else the runtime code that names what failed, else the family entry of the first
    CANN or torch_npu code on it that has a known class, or None."""
    # The runtime's own words say more than a generic code class (EZ9999 on a device
    # exception report), so they come before it; a documented return code says more still.
    numbered = code_signature(line)
    if numbered is not None and numbered.role is None:
        return numbered
    stated = _reason(line) or numbered
    if stated is not None:
        return stated
    for found in CODE.finditer(line):
        if found.group("level"):
            entry = _cann(found.group("level"), found.group("module"), found.group("number"))
        else:
            entry = _torch_npu(found.group("sub"), found.group("kind"))
        if entry is not None:
            return entry
    return None
