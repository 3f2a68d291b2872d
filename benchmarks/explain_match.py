"""Which lines of a log can match which knowledge-base entries: the hand-written literal
screen against well-kept multi-pattern libraries, measured in one process (explain uses
pyahocorasick when it is installed, the hand-written screen otherwise).

Usage:
    .venv/bin/python benchmarks/explain_match.py [--repeat 5] [--background 20000]

Libraries that are not installed are reported and skipped (PYTHONPATH=DIR to try them without
installing into the project: pip install --target DIR google-re2 pyahocorasick hyperscan).

Workloads, both real text:
- corpus: the real error lines of tests/data/real/explain/corpus.yaml and every entry's
  samples, repeated (what a failing log is made of);
- background: the lines of this repository's own Python sources, none an Ascend error (what
  most of a large plog is: lines that match nothing and must be turned away cheaply).

Each method answers the same question per line, "the best entry" (highest priority, then
longest pattern), and the answers are compared with the current method's: a method that
disagrees on any line is reported, not timed as if equal. Times are the median of --repeat
rounds, methods interleaved within a round; ratios are library time / current time (below 1:
the library is faster).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ascend_env.explain.match import MAX_LINE, Matcher  # noqa: E402
from ascend_env.explain.signatures import Signature, load_signatures  # noqa: E402

Best = Callable[[str], "Signature | None"]


def _rank(found: Sequence[Signature]) -> Signature | None:
    return max(found, key=lambda s: (s.priority, len(s.pattern.pattern))) if found else None


def current(signatures: Sequence[Signature]) -> Best:
    """The hand-written screen: literal `in` tests in Python loops, then the regexes."""
    return Matcher(signatures, use_library=False).best


def ahocorasick_screen(signatures: Sequence[Signature]) -> Best:
    """explain's default: one Aho-Corasick pass (pyahocorasick) finds every literal in the
    line; only the entries owning one run their regex."""
    import ahocorasick  # type: ignore[import-not-found]  # noqa: PLC0415, F401 - skip if absent

    return Matcher(signatures).best


def re2_set(signatures: Sequence[Signature]) -> Best:
    """RE2's multi-pattern Set says which patterns match in one pass; patterns RE2 cannot
    compile (look-arounds) are tried with Python's re on every line."""
    import re2  # type: ignore[import-not-found]  # noqa: PLC0415

    compiled = re2.Set.SearchSet()
    inside: list[int] = []
    outside: list[int] = []
    for index, signature in enumerate(signatures):
        try:
            compiled.Add(signature.pattern.pattern)
        except Exception:  # RE2 refuses syntax it does not support (look-arounds)
            outside.append(index)
            continue
        inside.append(index)
    compiled.Compile()

    def best(line: str) -> Signature | None:
        line = line[:MAX_LINE]
        found = [signatures[inside[i]] for i in compiled.Match(line) or ()]
        found += [signatures[i] for i in outside if signatures[i].pattern.search(line)]
        return _rank(found)

    return best


def hyperscan_db(signatures: Sequence[Signature]) -> Best:
    """Hyperscan's compiled database reports matching pattern ids; patterns it rejects are
    tried with Python's re on every line."""
    import hyperscan  # type: ignore[import-not-found]  # noqa: PLC0415

    accepted: list[int] = []
    outside: list[int] = []
    for index, signature in enumerate(signatures):
        database = hyperscan.Database()
        try:
            database.compile(expressions=[signature.pattern.pattern.encode()], ids=[0],
                             elements=1, flags=[hyperscan.HS_FLAG_SINGLEMATCH])
        except hyperscan.error:
            outside.append(index)
            continue
        accepted.append(index)
    database = hyperscan.Database()
    database.compile(expressions=[signatures[i].pattern.pattern.encode() for i in accepted],
                     ids=list(range(len(accepted))), elements=len(accepted),
                     flags=[hyperscan.HS_FLAG_SINGLEMATCH] * len(accepted))

    def best(line: str) -> Signature | None:
        line = line[:MAX_LINE]
        hits: set[int] = set()

        def on_match(ident: int, *_: object) -> None:
            hits.add(ident)

        database.scan(line.encode("utf-8", "replace"), match_event_handler=on_match)
        found = [signatures[accepted[i]] for i in hits]
        found += [signatures[i] for i in outside if signatures[i].pattern.search(line)]
        return _rank(found)

    return best


def workloads(background: int) -> dict[str, list[str]]:
    corpus = yaml.safe_load((ROOT / "tests/data/real/explain/corpus.yaml").read_text())
    errors = [line for item in corpus for line in item["text"].splitlines()]
    errors += [sample for s in load_signatures() for sample in s.samples]
    quiet: list[str] = []
    for path in sorted((ROOT / "ascend_env").rglob("*.py")):
        quiet.extend(line for line in path.read_text().splitlines() if line.strip())
    quiet = (quiet * (background // max(len(quiet), 1) + 1))[:background]
    return {"corpus": errors * 20, "background": quiet}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--background", type=int, default=20000)
    args = parser.parse_args()
    signatures = load_signatures()
    methods: dict[str, Best] = {"current": current(signatures)}
    for name, build in (("pyahocorasick", ahocorasick_screen), ("google-re2 Set", re2_set),
                        ("hyperscan", hyperscan_db)):
        try:
            methods[name] = build(signatures)
        except ImportError as exc:
            print(f"{name}: not installed ({exc.name}); skipped")
    print(f"{len(signatures)} entries")
    for label, lines in workloads(args.background).items():
        reference = [methods["current"](line) for line in lines]
        times: dict[str, list[float]] = {name: [] for name in methods}
        agree = {name: all(best(line) is want for line, want in zip(lines, reference, strict=True))
                 for name, best in methods.items()}
        for _ in range(args.repeat):
            for name, best in methods.items():
                start = time.perf_counter()
                for line in lines:
                    best(line)
                times[name].append(time.perf_counter() - start)
        base = statistics.median(times["current"])
        print(f"\n{label}: {len(lines)} lines")
        for name in methods:
            median = statistics.median(times[name])
            note = "" if agree[name] else "  (DISAGREES with current on some lines)"
            print(f"  {name:<16} {median * 1e6 / len(lines):8.2f} us/line  "
                  f"ratio {median / base:5.2f}{note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
