"""explain on real error records it has never seen: the held-out score, against the train score
and against the knowledge base's entries alone, in one process.

Usage:
    .venv/bin/python benchmarks/explain_corpus.py [--part P] [--misses train|heldout] [--json]

Parts (tests/data/real/explain/): `train` (corpus.yaml: entries and rules may be written from
it and quote it) and `heldout` (heldout.yaml: no entry, rule or sample quotes it or cites its
thread; tests/explain/test_corpus.py enforces it). Each record is pasted alone; the answer is
the lead of its chain (tests/explain/corpus_score.py). Per part it prints:
- recognised: the answer's family is the record's (the area of the symptom);
- cause first: the answer's first cause is the cause the thread established;
- silent: records that look like errors with no answer and nothing listed unknown (should be
  0); `no error mark` counts records with none of the marks of an error (match.ERROR_LIKE),
  which explain does not list as unknown by design.
Both for `entries` (the knowledge base's exact entries and code families, no rules and no
areas: the reference) and `explain` (entries, rules and areas), with the ratio explain /
entries; and recognised by the layer the record's words name alone (explain's areas, no entry
and no rule: corpus_score.by_words), what the family score owes to knowing nothing of the
message; and by those words, else the package whose code raises the message (origins.py,
`placed`): what the tables of the stack's own messages add to the words. Then the train part
with each thread left out (corpus_score.leave_thread_out: a record answered without the
entries and rules written from its own thread alone), the figure to develop against: it says
what generalises, on records that may be read.

`--misses train` lists what the train part misses (what rules may be written from);
`--misses left-out` what it misses with each thread left out (what does not generalise);
`--misses heldout` lists the held-out misses, for reporting only: rules are never written from
them (docs/explain.md).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ascend_env.explain.match import Matcher  # noqa: E402
from tests.explain.corpus_score import (  # noqa: E402
    HELDOUT,
    TRAIN,
    Score,
    by_words,
    leave_thread_out,
    load,
    score,
)

PARTS = {"train": TRAIN, "heldout": HELDOUT}
LEFT_OUT = "left-out"  # the train part, each thread without what was written from it alone


def _pct(part: Score, count: int) -> str:
    return f"{count:>3}/{part.records:<3} {part.share(count):6.1%}"


def _ratio(new: float, old: float) -> str:
    return f"x{new / old:.2f}" if old else "-"


def _figures(name: str, s: Score) -> dict[str, int]:
    counts = {"records": s.records, "threads": len(s.threads), "recognised": s.family}
    if name in ("words", "placed"):  # a layer alone names no cause, lists nothing unknown
        return counts
    return counts | {"cause_first": s.cause, "silent": s.silent, "no_error_mark": s.quiet}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=sorted(PARTS), help="score this part only")
    parser.add_argument("--misses", choices=[*sorted(PARTS), LEFT_OUT],
                        help="list the part's misses")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    matchers = {"entries": Matcher(rules=(), areas=()), "explain": Matcher()}
    results = {part: {name: score(m, load(path)) for name, m in matchers.items()}
               | {"words": by_words(load(path)), "placed": by_words(load(path), origins=True)}
               for part, path in PARTS.items() if args.part in (None, part)}
    if args.part in (None, "train"):
        results[LEFT_OUT] = {"explain": leave_thread_out(load(TRAIN))}
    if args.json:
        print(json.dumps({part: {name: _figures(name, s) for name, s in by.items()}
                          for part, by in results.items()}, indent=2))
        return 0
    for part, by in results.items():
        if part == LEFT_OUT:
            new = by["explain"]
            print(f"train, each thread left out: recognised {_pct(new, new.family)}, "
                  f"cause first {_pct(new, new.cause)}")
            continue
        ref, new = by["entries"], by["explain"]
        print(f"{part}: {new.records} records from {len(new.threads)} threads")
        print(f"  {'':<12}{'entries (reference)':>22}{'explain':>22}{'ratio':>8}")
        for label, attr in (("recognised", "family"), ("cause first", "cause"),
                            ("silent", "silent"), ("no error mark", "quiet")):
            old_n, new_n = getattr(ref, attr), getattr(new, attr)
            print(f"  {label:<12}{_pct(ref, old_n):>22}{_pct(new, new_n):>22}"
                  f"{_ratio(new.share(new_n), ref.share(old_n)):>8}")
        words, placed = by["words"], by["placed"]
        print(f"  the layer its words name alone (areas, no entry or rule): recognised "
              f"{_pct(words, words.family)}")
        print(f"  its words, else its message's origin (no entry or rule): recognised "
              f"{_pct(placed, placed.family)}")
    if args.misses and args.misses in results:
        print(f"\n{args.misses} misses (record family/cause -> answer family/cause):")
        for item, got in results[args.misses]["explain"].misses:
            first = item["text"].strip().splitlines()[-1][:110]
            print(f"- {item['family']}/{item['cause']} -> {got.family}/{got.cause} "
                  f"[{got.ident}] {item['thread']}\n    {first}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
