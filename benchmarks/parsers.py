"""Do the capture parsers stay linear in their input? Each parser reads one long value at two
sizes; the ratio of the times should be near the ratio of the sizes (10), not its square (100).

Usage: .venv/bin/python benchmarks/parsers.py [--small 100000]

Printed: per parser, `NAME: time(10x) / time(1x) = R`. A parser whose R is far above 10 is
quadratic somewhere. Every parser of facts.assemble.PARSERS is fed the same shapes: one long
line of a single token, and the same token in double quotes as os-release writes values.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from ascend_env.facts.assemble import PARSERS


def _time(parse: Callable[[str], object], text: str) -> float:
    """The best of three runs: the least disturbed by the rest of the machine."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        parse(text)
        best = min(best, time.perf_counter() - start)
    return best


def _ratio(parse: Callable[[str], object], shape: str, size: int) -> float:
    """time(10 x size) / time(size), the size first grown until one run is long enough to
    time (a few milliseconds), so that the ratio is not a ratio of clock noise."""
    while size < 50_000_000 and _time(parse, shape.format("x" * size)) < 0.005:
        size *= 4
    return _time(parse, shape.format("x" * size * 10)) / _time(parse, shape.format("x" * size))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--small", type=int, default=100_000)
    args = parser.parse_args()
    worst = 0.0
    for name, parse in sorted(PARSERS.items()):
        if name == "pci_sysfs":  # reads a mapping of sysfs files, not a text
            continue
        ratio = max(_ratio(parse, shape, args.small)
                    for shape in ('KEY="{}"\n', "KEY={}\n", "| {} |\n"))
        worst = max(worst, ratio)
        print(f"{name}: time(10x) / time(1x) = {ratio:.1f}")
    print(f"worst: {worst:.1f} (linear: about 10; quadratic: about 100)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
