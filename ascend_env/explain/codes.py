"""The numeric return codes of the ACL runtime, the operator API (aclnn) and HCCL
(ascend_env/data/signatures/codes/runtime.yaml): a line that prints one (`error code is 507046`,
`runtime result = 507018`, `errno:561000`, `HCCL function error: ..., error code is 11`), or the
sentence torch_npu prints for it (`[Error]: The aicpu execution is abnormal.`), and that no entry
knows is explained by the code's documented name, whatever program printed it.

A code whose name says the cause (207018 device out of memory, 507010 lost heartbeat) concludes
it, as an entry would, and ranks as one; the others say what failed and, like a CANN code's
family match, leave the first cause to the lines around them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache

from ascend_env.core.resources import load_yaml
from ascend_env.explain.signatures import (
    FALLBACK_PRIORITY,
    WHOLE_LOG,
    Cause,
    Signature,
    SignatureError,
)
from ascend_env.explain.vocabulary import load_vocabulary

FILE = "signatures/codes/runtime.yaml"
# Above the echo threshold (signatures.ECHO_PRIORITY): a code that names its cause explains its
# line; below every exact entry, which alone is asked first (match.Matcher.explain_line).
PRIORITY = 25
# The words the runtime, ACL, torch_npu and the frameworks print before a return code; a bare
# six-digit number elsewhere (a size, a pid) is not one.
CODE = re.compile(r"(?i:error ?code(?: is)?|errcode|errno|result|\bret(?:code)?|rt_?ret|failed"
                  r"|failure|error)\W{0,3}(?P<code>[125]07\d{3}|5079\d{2}|[135]61\d{3})\b")
# What any such code looks like, searched first: most lines of a log carry none, and this one
# scan turns them away before the patterns with their words.
NUMBER = re.compile(r"(?:[125]07|5079|[135]61)\d{3}")
# torch_npu's wrapper of a collective call, with HCCL's own code.
HCCL_CODE = re.compile(r"HCCL function error: .{0,300}?error code is (?P<code>\d{1,4})\b")
# torch_npu prints the code's sentence on a line of its own, after the code's line.
SAYS = re.compile(r"\[Error\]: (?P<says>[A-Z][^\[\]]{5,120}?\.)(?:\s|$)")
_FAMILIES = {"runtime", "aicpu", "driver", "hccl", "cann"}
_FIELDS = {"code", "name", "what", "family", "cause", "says"}


@dataclass(frozen=True)
class Code:
    number: int
    name: str
    what: str
    family: str
    cause: str | None
    says: str | None
    source: str  # the header that names it
    ident: str  # its answer's id: code.<number>, code.hccl-<number>


@dataclass(frozen=True)
class Table:
    codes: dict[int, Code]  # the ACL runtime's and the operator API's (aclnn), by number
    hccl: dict[int, Code]  # HCCL's
    said: dict[str, Code]  # torch_npu's sentence -> its ACL code
    said_source: str  # torch_npu's table of the sentences


@lru_cache(maxsize=1)
def load_codes() -> Table:
    """The shipped tables."""
    raw = load_yaml(FILE)
    tables = ("codes", "aclnn_codes", "hccl_codes")
    if not isinstance(raw, dict) or not all(isinstance(raw.get(key), list) for key in tables):
        raise SignatureError(f"{FILE}: a mapping with the lists {', '.join(tables)}")
    table = Table({}, {}, {}, str(raw.get("torch_npu_source", "")))
    for key, into, family, source in (
            ("codes", table.codes, "runtime", str(raw.get("source", ""))),
            ("aclnn_codes", table.codes, "cann", str(raw.get("aclnn_source", ""))),
            ("hccl_codes", table.hccl, "hccl", str(raw.get("hccl_source", "")))):
        prefix = "code.hccl-" if family == "hccl" else "code."
        for index, item in enumerate(raw[key]):
            code = _code(item, f"{FILE} {key} {index + 1}", family, source, prefix)
            if code.number in into or (code.says is not None and code.says in table.said):
                raise SignatureError(f"{FILE} {key} {index + 1}: {code.number} or its "
                                     "sentence is listed twice")
            into[code.number] = code
            if code.says is not None:
                table.said[code.says] = code
    return table


def _code(item: object, where: str, family: str, source: str, prefix: str) -> Code:
    if not isinstance(item, dict) or not {"code", "name", "what"} <= set(item) or \
            set(item) - _FIELDS:
        raise SignatureError(f"{where}: code, name, what and optional {sorted(_FIELDS)}")
    code = Code(int(item["code"]), str(item["name"]), str(item["what"]),
                str(item.get("family", family)), item.get("cause"), item.get("says"), source,
                f"{prefix}{int(item['code'])}")
    if code.family not in _FAMILIES or (code.cause is not None
                                        and code.cause not in load_vocabulary()):
        raise SignatureError(f"{where}: unknown family or cause ({code.family}, {code.cause})")
    return code


def code_signature(line: str) -> Signature | None:
    """The entry of the first known return code the line prints or states, or None."""
    table = load_codes()
    for found in CODE.finditer(line) if NUMBER.search(line) else ():
        code = table.codes.get(int(found.group("code")))
        if code is not None:
            return _signature(code, code.source, code.family)
    found_hccl = HCCL_CODE.search(line) if "HCCL function error" in line else None
    if found_hccl is not None and int(found_hccl.group("code")) in table.hccl:
        code = table.hccl[int(found_hccl.group("code"))]
        return _signature(code, code.source, code.family)
    stated = SAYS.search(line) if "[Error]: " in line else None
    if stated is not None and stated.group("says") in table.said:
        # The sentence is torch_npu's own line, so the line is torch_npu's (as the knowledge
        # base's entries for such sentences have it); the code says which layer failed.
        return _signature(table.said[stated.group("says")], table.said_source, "torch_npu")
    return None


@cache
def _signature(code: Code, source: str, family: str) -> Signature:
    said = f"{code.number} ({code.name})"
    if code.cause is None:
        causes = (Cause(text="the first error of the log, above this line (this code says what "
                             "failed, not why)", checks=()),)
        meaning = (f"The call returned {said}: {code.what}. The code says what failed; look "
                   f"for the first error above this line for why.")
    else:
        kind = load_vocabulary()[code.cause]
        causes = (Cause(text=kind.text, checks=kind.checks, id=kind.id),)
        meaning = f"The call returned {said}: {code.what}."
    return Signature(
        id=code.ident, family=family,
        pattern=re.compile("|".join([rf"\b{code.number}\b", *([re.escape(code.says)]
                                                               if code.says else [])])),
        severity="error", priority=PRIORITY if code.cause else FALLBACK_PRIORITY,
        meaning=meaning, causes=causes, fix=WHOLE_LOG, source=source,
        samples=(str(code.number),), role=None if code.cause else "family")
