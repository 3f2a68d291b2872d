"""The structure of an error record, read for the rules (rules.py): the exceptions raised and
the package each is raised in, the packages, symbols and libraries a message names, the chips
it names, its CANN and torch_npu codes with the reason written after them, and the compiler
that failed.

Read from the record's lines without the launcher's prefix (records.body); every reading is a
bounded regular expression over a bounded line, and a record is read once.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ascend_env.explain.records import body

MAX_READINGS = 32  # per feature and record: a runaway log cannot grow a shape without bound

# `pkg.mod.SomethingError: message`, `SomethingError('message')`, also nested
# (`InductorError: ModuleNotFoundError: No module named 'x'`).
_EXCEPTION = re.compile(
    r"(?:^|(?<=[\s:(\[]))(?P<qual>(?:[A-Za-z_]\w*\.){0,6}(?P<cls>[A-Z]\w*(?:Error|Exception)))"
    r"(?::(?:\s+|$)|\(['\"])(?P<msg>.*)")
_FRAME = re.compile(r"^\s*File \"(?P<path>[^\"]+)\", line \d+")
_SITE = re.compile(r"(?:site|dist)-packages/(?P<pkg>[A-Za-z_]\w*)")
# Packages a path names outside site-packages (a source checkout: /vllm-workspace/vllm-ascend/
# vllm_ascend/...). Only these, so that a user's own folders are not read as packages.
KNOWN_PACKAGES = frozenset({
    "torch", "torch_npu", "torchair", "torchvision", "torchvision_npu", "vllm", "vllm_ascend",
    "vllm_omni", "triton", "mindspore", "mindspeed", "mindspeed_llm", "megatron", "deepspeed",
    "transformers", "accelerate", "peft", "trl", "verl", "sglang", "sgl_kernel_npu",
    "lmdeploy", "dlinfer", "llamafactory", "swift", "mindie_llm", "atb_llm", "apex", "numpy",
    "te", "tbe", "op_plugin", "fla_npu", "paddle", "paddle_custom_device", "xformers"})
_NAMED = (
    re.compile(r"No module named '(?P<pkg>[\w.]+)'"),
    re.compile(r"cannot import name '(?P<sym>\w+)' from '(?P<pkg>[\w.]+)'"),
    re.compile(r"module '(?P<pkg>[\w.]+)' has no attribute '(?P<sym>\w+)'"),
    re.compile(r"Failed to (?:load the backend extension|import):? '?(?P<pkg>[A-Za-z_][\w.]*)"),
    re.compile(r"^\s*(?:from (?P<pkg>[\w.]+) import|import (?P<pkg2>[\w.]+))"),
)
_SYMBOLS = (
    re.compile(r"\b(?P<sym>aclnn[A-Z]\w+?)(?:GetWorkspaceSize)?\b"),
    re.compile(r"undefined symbol:? (?P<sym>[\w.@]+)"),
    re.compile(r"\bop\[(?P<sym>\w+)\]"),
    re.compile(r"(?:Failed to find function|OPS function error:|HCCL function error:) "
               r"(?P<sym>\w+)"),
    re.compile(r"'(?P<cls>\w+)' object has no attribute '(?P<sym>\w+)'"),
)
_LIBRARY = re.compile(r"(?:^|(?<=[/\s:'\"]))(?P<lib>[\w+-][\w+.-]*?\.so)(?:\.[\d.]+)?\b")
# Chips as CANN, torch_npu, npu-smi and users write them: Ascend910B3, Ascend910_9382,
# Ascend310P3, 910B4-1, Ascend950PR; soc_version / socversion fields.
_CHIP = re.compile(
    r"\b(?:Ascend[ _]?)?(?P<chip>910B\d?(?:-\d)?|910_\d{4}|910[ABC]\b|310P\d?|310B\d?"
    r"|950\w*|910(?=\b))(?![\w.])", re.IGNORECASE)
_SOC_FIELD = re.compile(r"soc[ _]?version[:=]?\s*(?:is\s+)?(?P<chip>[A-Za-z]\w*)", re.IGNORECASE)
# CANN error codes: level, module character, four digits (9000+ internal errors).
CANN_CODE = re.compile(r"(?<![\w])(?P<code>[EW](?P<module>[0-9A-Z])(?P<number>\d{4}))(?![\w])")
_REASON_NOISE = re.compile(
    r"^[\s:()\]]*(?:\[PID:\s*\d+\]\s*)?(?:\d{4}-\d\d-\d\d-[\d:.]+\s*)?(?:\([EW]\w{5}\):?\s*)?")
CATCH_ALL = re.compile(r"^(?:Inner Error!?|Inner Error, Please contact support engineer!?"
                       r"|UNKNOWN appl\w+ exception\.?)\s*$", re.IGNORECASE)
_TORCH_NPU_CODE = re.compile(r"\bERR(?P<sub>\d{2})(?P<kind>\d{3})\b")
_RESULT = re.compile(r"(?:runtime result|error code(?: is)?|errorCode|NPU error code is|ret)"
                     r"\s*[=:]?\s*(?P<num>[15]\d{5})\b")
_COMPILER = re.compile(
    r"\b(?P<tool>bishengir|bisheng|ccec|te_fusion|TBE|tbe|ATC|atc|triton|AscendC|ascendc"
    r"|MLIRCompilationError|CompileGraph|Failed to compile Op)\b")


@dataclass
class Code:
    """A CANN or torch_npu code on a line, with the reason written after it."""

    code: str
    line: int  # index in the record
    reason: str = ""

    @property
    def module(self) -> str:
        return self.code[1] if not self.code.startswith("ERR") else ""

    @property
    def internal(self) -> bool:
        """A CANN x9999-class code (the module's internal error) or torch_npu's unknown."""
        return self.code.endswith("99999") or (not self.code.startswith("ERR")
                                                and int(self.code[2:]) >= 9000)

    @property
    def detailed(self) -> bool:
        """Whether the line says more than the catch-all words."""
        return bool(self.reason) and not CATCH_ALL.match(self.reason)


@dataclass
class Shape:
    """What a record says, feature by feature; each reading keeps the record line it is on."""

    exceptions: list[tuple[str, str, int]] = field(default_factory=list)  # class, message, line
    raised_in: str | None = None  # the package of the frame an exception was raised in
    packages: list[str] = field(default_factory=list)
    frames: list[str] = field(default_factory=list)  # the known package of each frame, in order
    symbols: list[str] = field(default_factory=list)
    libraries: list[str] = field(default_factory=list)
    chips: list[str] = field(default_factory=list)
    codes: list[Code] = field(default_factory=list)
    results: list[str] = field(default_factory=list)  # runtime/ACL result numbers (507033...)
    compilers: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    raw: list[str] = field(default_factory=list)  # the lines as logged, launcher prefix kept

    def first_line(self) -> int:
        """The line the record's own reason is on: its last exception, else its first code
        with detail, else its first line."""
        if self.exceptions:
            return self.exceptions[-1][2]
        detailed = [c for c in self.codes if c.detailed]
        return detailed[0].line if detailed else 0

    def reading_order(self) -> list[int]:
        """The indexes of the lines as a layer is read from them: the reason line first, then
        the others in order."""
        first = self.first_line()
        return [first, *(i for i in range(len(self.lines)) if i != first)]


def _add(values: list[str], value: str | None) -> None:
    if value and value not in values and len(values) < MAX_READINGS:
        values.append(value)


def _package(path: str) -> str | None:
    site = _SITE.search(path)
    if site is not None:
        return site.group("pkg")
    return next((part for part in reversed(path.split("/")) if part in KNOWN_PACKAGES), None)


def _top(module: str) -> str:
    return module.split(".", 1)[0]


def read_shape(lines: Sequence[str]) -> Shape:
    """The record's structure (lines as they appear in the log, prefixes included)."""
    shape = Shape(lines=[body(line).rstrip() for line in lines],
                  raw=[line.rstrip() for line in lines])
    frame_package: str | None = None
    for index, text in enumerate(shape.lines):
        frame = _FRAME.match(text)
        if frame is not None:
            own = _package(frame.group("path"))
            frame_package = own or frame_package
            _add(shape.packages, frame_package)
            if own is not None:  # a record has at most records.MAX_RECORD_LINES
                shape.frames.append(own)
            continue
        _read_exceptions(shape, text, index, frame_package)
        _read_names(shape, text)
        _read_codes(shape, text, index)
        for found in _LIBRARY.finditer(text):
            _add(shape.libraries, found.group("lib"))
        for found in _CHIP.finditer(text):
            _add(shape.chips, found.group("chip").upper().replace("ASCEND", ""))
        soc = _SOC_FIELD.search(text)
        if soc is not None and soc.group("chip").lower().startswith("ascend"):
            _add(shape.chips, soc.group("chip")[6:].upper())
        for found in _COMPILER.finditer(text):
            _add(shape.compilers, found.group("tool"))
    return shape


def _read_exceptions(shape: Shape, text: str, index: int, frame_package: str | None) -> None:
    rest = text
    for _ in range(3):  # nested: `InductorError: ModuleNotFoundError: ...`
        found = _EXCEPTION.search(rest)
        if found is None or len(shape.exceptions) >= MAX_READINGS:
            return
        qual, cls, message = found.group("qual"), found.group("cls"), found.group("msg")
        shape.exceptions.append((cls, message.strip(), index))
        if frame_package:
            shape.raised_in = frame_package
        if "." in qual:
            _add(shape.packages, _top(qual))
        rest = message


def _read_names(shape: Shape, text: str) -> None:
    for pattern in _NAMED:
        found = pattern.search(text)
        if found is None:
            continue
        groups = found.groupdict()
        module = groups.get("pkg") or groups.get("pkg2")
        if module:
            _add(shape.packages, _top(module))
        _add(shape.symbols, groups.get("sym"))
    for pattern in _SYMBOLS:
        for found in pattern.finditer(text):
            _add(shape.symbols, found.group("sym"))
    site = _SITE.search(text)
    if site is not None:
        _add(shape.packages, site.group("pkg"))


def _read_codes(shape: Shape, text: str, index: int) -> None:
    seen: set[str] = set()
    for found in CANN_CODE.finditer(text):
        if found.group("code") in seen:  # `EH9999[PID..] (EH9999): why` names it twice
            continue
        seen.add(found.group("code"))
        reason = _REASON_NOISE.sub("", text[found.end():], count=1).strip()
        if len(shape.codes) < MAX_READINGS:
            shape.codes.append(Code(found.group("code"), index, reason))
    for found in _TORCH_NPU_CODE.finditer(text):
        if len(shape.codes) < MAX_READINGS:
            shape.codes.append(Code(found.group(0), index,
                                    text[found.end():].strip()))
    for found in _RESULT.finditer(text):
        _add(shape.results, found.group("num"))
