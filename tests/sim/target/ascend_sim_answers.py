"""Answers a fake vendor tool renders for its sh front (answered.sh), which replays them.

Layout: <state folder>/answers/<tool>/ holds <key>.out and <key>.rc per query (the key: the
arguments joined with commas; .rc: the exit status, then the seconds the front waits before
answering where the real tool waits on a wire, as a ping does), `inputs` (the files the
answers were computed from, one per line) and `stamp`, whose modification time is when those
inputs were read: an input whose status changed after it (ctime: a rewrite with its old mtime
put back moves it too) makes every answer stale. Installed beside each fake; only the
standard library.
"""

from __future__ import annotations

import contextlib
import fcntl
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    # A query's exit status and output, and where the real tool waits on a wire, the seconds.
    Answer = Callable[[list[str]], tuple[int, str] | tuple[int, str, float]]


# The kernel dates files from a clock that lags time.time_ns() by up to a tick: the stamp is
# put this much earlier, so a change made while the inputs were read is never older than it.
CLOCK_MARGIN_NS = 50_000_000


def key_of(argv: list[str]) -> str:
    return ",".join(argv)


def folder_of(state: str, tool: str) -> str:
    return os.path.join(os.path.dirname(state), "answers", tool)


def fresh(folder: str) -> bool:
    """What the front tests: no input changed after the stamp (a missing one never is)."""
    try:
        stamp = os.stat(os.path.join(folder, "stamp")).st_mtime_ns
        with open(os.path.join(folder, "inputs"), encoding="utf-8") as fh:
            inputs = fh.read().splitlines()
        return bool(inputs) and all(os.stat(path).st_ctime_ns <= stamp for path in inputs)
    except OSError:
        return False


def render(folder: str, since_ns: int, queries: Iterable[list[str]], answer: Answer,
           inputs: Callable[[], list[str]]) -> None:
    """Every query's answer, stamped with `since_ns` (taken before the inputs were read).

    One render at a time: a probe starts a dozen queries at once, and those that find the
    answers stale wait for the first to render them instead of each rendering its own. A
    caller that may not write them (a tool run by a user, not root) renders nothing: the
    front then runs the Python fake every time, which answers all the same. An answer is the
    exit status and output, and the seconds to wait where the real tool waits on a wire."""
    with contextlib.suppress(PermissionError):
        _render(folder, since_ns, queries, answer, inputs)


def _render(folder: str, since_ns: int, queries: Iterable[list[str]], answer: Answer,
            inputs: Callable[[], list[str]]) -> None:
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, ".lock"), "a", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if fresh(folder):
            return
        rendered = {}
        for argv in queries:
            code, text, *wait = answer(argv)
            key = key_of(argv)
            rendered[key + ".out"] = str(text)
            rendered[key + ".rc"] = " ".join(str(v) for v in (code, *wait)) + "\n"
        rendered["inputs"] = "".join(path + "\n" for path in dict.fromkeys(inputs()))
        for name, text in rendered.items():
            tmp = os.path.join(folder, f".{name}.{os.getpid()}")
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, os.path.join(folder, name))
        # An earlier render's query this one has no answer for (an NPU gone): the stamp is
        # stale until the new one is written, so nothing serves it meanwhile.
        for name in os.listdir(folder):
            if name.endswith((".out", ".rc")) and name not in rendered:
                os.remove(os.path.join(folder, name))
        stamp = os.path.join(folder, "stamp")
        with open(stamp, "w", encoding="utf-8"):
            pass
        since_ns -= CLOCK_MARGIN_NS
        os.utime(stamp, ns=(since_ns, since_ns))
