"""The literals every match of a regex must contain: a cheap screen before the regex.

Read from the pattern's text, conservatively: a branch whose needed text this reading cannot
vouch for has no literal, and its entry is then tried on every line.
"""

from __future__ import annotations

_META = set(".^$*+?{}[]()|\\")
_QUANTIFIERS = set("*+?{")
MIN_LITERAL = 3


def _branches(pattern: str) -> list[str]:
    """The pattern split at its top-level `|` (none inside groups or classes)."""
    out, depth, start, index, in_class = [], 0, 0, 0, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            out.append(pattern[start:index])
            start = index + 1
        index += 1
    out.append(pattern[start:])
    return out


def _group_end(branch: str, start: int) -> int:
    """The index just past the group opened at `start`."""
    depth, index = 0, start
    while index < len(branch):
        char = branch[index]
        if char == "\\":
            index += 2
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    return len(branch)


def _longest_literal(branch: str) -> str | None:
    """The longest run of plain characters every match of the branch contains (a group is
    skipped whole: what is outside it is needed whatever it matches), or None."""
    runs, current, index = [], "", 0
    while index < len(branch):
        char = branch[index]
        if char == "\\" and index + 1 < len(branch):
            nxt = branch[index + 1]
            index += 2
            if nxt.isalnum():  # a class (\d \S \w) or an anchor (\b): ends the run
                runs.append(current)
                current = ""
            else:
                current += nxt
            continue
        if char in _QUANTIFIERS:  # the character before may be absent or repeated
            current = current[:-1]
            runs.append(current)
            current = ""
            if char == "{":
                index = branch.find("}", index) + 1 or len(branch)
                continue
        elif char == "[":
            runs.append(current)
            current = ""
            index = branch.find("]", index + 2) + 1 or len(branch)
            continue
        elif char == "(":
            runs.append(current)
            current = ""
            index = _group_end(branch, index)
            if index < len(branch) and branch[index] in _QUANTIFIERS:
                index += 1
            continue
        elif char in _META:
            runs.append(current)
            current = ""
        else:
            current += char
        index += 1
    runs.append(current)
    best = max(runs, key=len)
    return best if len(best) >= MIN_LITERAL else None


def required_literals(pattern: str) -> tuple[str, ...] | None:
    """Literals one of which every match of `pattern` contains (one per top-level
    alternative); None when some alternative has none this reading can vouch for."""
    literals = []
    for branch in _branches(pattern):
        literal = _longest_literal(branch)
        if literal is None:
            return None
        literals.append(literal)
    return tuple(literals)
