"""Split log text into records: the lines that make one message, matched as one.

A record is one line, or a line and the lines that continue it: a Python traceback (header,
frames, the exception line and its indented continuation), an error code line and CANN's
indented `TraceBack (most recent call last):` block under it, C++ frames, and a plog record
that CANN wrote in pieces (each piece repeats the record's header).

Launchers prefix every line of a worker's output (`[rank0]: `, vLLM's `(EngineCore_DP0
pid=12) ` and its `ERROR 08-12 10:00:00 [core.py:1] ` log header); the prefix is ignored when
deciding what continues what.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

MAX_RECORD_LINES = 400  # a runaway traceback (recursion) is cut into several records
WRAP_WIDTH = 60  # shorter exception lines are whole messages, not wrapped ones

PREFIX = re.compile(
    r"^(?:\[rank\d+\]:\s?|\([\w.\- ]+? pid=\d+\)\s?"
    r"|(?:ERROR|WARNING|INFO|DEBUG|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \[[^\]]*\]\s?)+")
PY_TRACEBACK = re.compile(r"^\s*Traceback \(most recent call last\):")
PY_FRAME = re.compile(r"^\s*File \"[^\"]*\", line \d+")
CONTINUES = re.compile(r"^(?:frame #\d+:|Exception raised from )")
# A Python exception line; its message may wrap onto lines that go on mid-sentence (lower case).
EXCEPTION = re.compile(r"^[\w.]*(?:Error|Exception|Exit|Interrupt)\b[^:]{0,40}: ")
WRAPPED = re.compile(r"^[a-z(]")
# CANN's plog record header: [LEVEL] MODULE(pid,process):time [file:line]
PLOG_HEAD = re.compile(r"^\[[A-Z]+\] [\w-]+\(\d+,[^)]*\):\S+ \[[^\]]*\]")


def body(line: str) -> str:
    """The line without the launcher's prefix."""
    if line[:1] in "[(EWIDC":
        found = PREFIX.match(line)
        if found:
            return line[found.end():]
    return line


def _cut(text: str) -> bool:
    """An exception line that a terminal or a paste cut mid-sentence: long, no final stop."""
    stripped = text.rstrip()
    return len(stripped) >= WRAP_WIDTH and stripped[-1:] not in ".!?)]'\"" and \
        bool(EXCEPTION.match(stripped))


def _indented(text: str) -> bool:
    return text[:1] in (" ", "\t") and bool(text.strip())


def split(lines: Sequence[str]) -> list[tuple[int, int]]:
    """The records as (first index, index past the last), covering every line in order."""
    out: list[tuple[int, int]] = []
    start, count = 0, len(lines)
    while start < count:
        end = _record_end(lines, start)
        out.append((start, end))
        start = end
    return out


def _record_end(lines: Sequence[str], start: int) -> int:
    first = body(lines[start])
    limit = min(len(lines), start + MAX_RECORD_LINES)
    index = start + 1
    if PY_TRACEBACK.match(first) or PY_FRAME.match(first):
        # Frames (indented, or a pasted `File "..."` that lost its indent) up to the exception;
        # a paste often starts at a frame, without the traceback's header.
        while index < limit:
            text = body(lines[index])
            if not text.strip():
                return index
            if not (_indented(text) or PY_FRAME.match(text) or CONTINUES.match(text)):
                index += 1  # the exception line itself
                return _continuation_end(lines, index, limit, wrapped=_cut(text))
            index += 1
        return _continuation_end(lines, index, limit)
    if not first.strip():
        return index
    head = PLOG_HEAD.match(first) if first[:1] == "[" else None
    if head is not None:
        key = head.group(0)
        while index < limit and lines[index].startswith(key):
            index += 1
    return _continuation_end(lines, index, limit, wrapped=_cut(first))


def _continuation_end(lines: Sequence[str], index: int, limit: int, *,
                      wrapped: bool = False) -> int:
    while index < limit:
        text = body(lines[index])
        if PY_TRACEBACK.match(text) or not (
                _indented(text) or CONTINUES.match(text) or (wrapped and WRAPPED.match(text))):
            break
        index += 1
    return index


def joined(lines: Sequence[str], start: int, end: int) -> str:
    """A record's text on one line: prefixes dropped, a plog record's pieces rejoined, other
    lines joined by a space."""
    parts: list[str] = []
    key = None
    for raw in lines[start:end]:
        text = body(raw.rstrip())
        head = PLOG_HEAD.match(text) if text[:1] == "[" else None
        if head is not None and head.group(0) == key and parts:
            parts[-1] += text[head.end():].lstrip()
            continue
        key = head.group(0) if head is not None else None
        parts.append(text.strip())
    return " ".join(p for p in parts if p)
