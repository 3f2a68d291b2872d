"""Do the capture parsers and the redactor stay linear in their input? Each reads every shape at
two sizes; the ratio of the times should be near the ratio of the sizes (10), not its square
(100). The goal: at most 25 for every parser and shape.

Usage: .venv/bin/python benchmarks/parsers.py [--small 20000]

Printed: per parser, `NAME: time(10x) / time(1x) = R (worst shape)`, then the worst ratio.
Exit 1 when one is over 25. The shapes (tests/facts/shapes.py, shared with
tests/facts/test_linear.py) are what a host's answer may hold: one long word, a long quoted
value, a long table cell, runs of newlines, spaces and colons, and labels whose value never
comes. A parser whose R is far above 10 is quadratic somewhere.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

# This checkout's code and its tests' shapes, not an installed copy.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.facts.shapes import SHAPES, TEXT_PARSERS

GOAL = 25.0


def _time(parse: Callable[[str], object], text: str) -> float:
    """The best of five runs of this process's CPU time: the least disturbed by the rest of
    the machine."""
    best = float("inf")
    for _ in range(5):
        start = time.process_time()
        parse(text)
        best = min(best, time.process_time() - start)
    return best


def ratio(parse: Callable[[str], object], shape: Callable[[int], str], size: int) -> float:
    """time(10 x size) / time(size)."""
    return _time(parse, shape(size * 10)) / max(_time(parse, shape(size)), 1e-6)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--small", type=int, default=20_000)
    args = parser.parse_args()
    worst = (0.0, "", "")
    for name, parse in sorted(TEXT_PARSERS.items()):
        ratios = {shape: ratio(parse, make, args.small) for shape, make in SHAPES.items()}
        shape = max(ratios, key=lambda s: ratios[s])
        worst = max(worst, (ratios[shape], name, shape))
        print(f"{name}: time(10x) / time(1x) = {ratios[shape]:.1f} ({shape})")
    print(f"worst: {worst[0]:.1f}, {worst[1]} on {worst[2]} "
          f"(linear: about 10; quadratic: about 100; goal: at most {GOAL:.0f})")
    return 0 if worst[0] <= GOAL else 1


if __name__ == "__main__":
    raise SystemExit(main())
