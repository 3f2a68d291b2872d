"""The corpus of real error records (tests/data/real/explain/) and how explain is scored on it,
shared by tests/explain/test_corpus.py and benchmarks/explain_corpus.py.

A record is explain's input pasted alone. Its answer is the lead of the chain explain builds
(the first cause), else its first finding. Two scores per part:
- recognised: the answer's family is the record's family (the area the symptom belongs to);
- cause first: the answer's first cause is the cause the record's thread established (an id
  of ascend_env/data/signatures/causes/causes.yaml, or an entry's own id).
A record that looks like an error (match.ERROR_LIKE) that explain answers nothing for and lists
nothing unknown for is a silent pass; a record with no mark of an error at all is counted apart.

The train part is also scored with each thread left out (`leave_thread_out`): a record is
answered by a knowledge base without the entries and rules its own thread gave, so the score
says what the rules know beyond the threads they were written from, on records that may be
read (the held-out part may not): the proxy to develop against.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ascend_env.explain.areas import load_areas
from ascend_env.explain.match import ERROR_LIKE, Matcher
from ascend_env.explain.origins import load_origins, place
from ascend_env.explain.rules import load_rules
from ascend_env.explain.signatures import load_signatures
from ascend_env.explain.structure import read_shape

DATA = Path(__file__).resolve().parents[1] / "data" / "real" / "explain"
TRAIN, HELDOUT = DATA / "corpus.yaml", DATA / "heldout.yaml"
# A thread is held out when its bucket is below this share (unless the knowledge base cites it):
# fixed before the split was first computed, never tuned.
HELDOUT_SHARE = 60
FIELDS = {"thread", "text", "family", "cause", "note", "train_because"}
MIN_QUOTE = 24  # shorter lines ("Traceback (most recent call last):") quote nothing


def bucket(thread: str) -> int:
    """The thread's place in 0..99: sha256 of its URL, so that no one chooses the split."""
    return int(hashlib.sha256(thread.encode()).hexdigest()[:8], 16) % 100


def load(path: Path) -> list[dict[str, Any]]:
    items = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(items, list), path
    return items


@dataclass
class Answer:
    family: str | None
    cause: str | None
    ident: str | None
    unknown: int
    catch_all: bool = False
    error_like: bool = True  # some line has a mark of an error (match.ERROR_LIKE)


def answer(matcher: Matcher, text: str) -> Answer:
    """What explain leads with for the record pasted alone."""
    scan = matcher.scan([("record", text)])
    error_like = any(ERROR_LIKE.search(line) for line in text.splitlines())
    if scan.chains:
        lead = scan.chains[0].lead
        catch_all = scan.chains[0].catch_all
    elif scan.hits:
        lead, catch_all = scan.hits[0], False
    else:
        return Answer(None, None, None, len(scan.unknown), error_like=error_like)
    return Answer(lead.signature.family, lead.signature.cause_id, lead.signature.id,
                  len(scan.unknown), catch_all, error_like)


@dataclass
class Score:
    records: int = 0
    threads: set[str] = field(default_factory=set)
    family: int = 0
    cause: int = 0
    silent: int = 0  # looks like an error, yet no answer and nothing listed unknown
    quiet: int = 0  # no mark of an error at all (not listed unknown by design)
    misses: list[tuple[dict[str, Any], Answer]] = field(default_factory=list)

    def share(self, count: int) -> float:
        return count / self.records if self.records else 0.0


def _tally(result: Score, item: dict[str, Any], got: Answer) -> None:
    result.records += 1
    result.threads.add(item["thread"])
    result.family += got.family == item["family"]
    result.cause += got.cause == item["cause"]
    unanswered = got.ident is None and got.unknown == 0
    result.silent += unanswered and got.error_like
    result.quiet += unanswered and not got.error_like
    if got.family != item["family"] or got.cause != item["cause"]:
        result.misses.append((item, got))


def score(matcher: Matcher, items: list[dict[str, Any]]) -> Score:
    result = Score()
    for item in items:
        _tally(result, item, answer(matcher, item["text"]))
    return result


def by_words(items: list[dict[str, Any]], *, origins: bool = False) -> Score:
    """Recognised by the layer the record's words name alone (explain's areas, no entry and no
    rule): what the family score owes to knowing nothing of the message. With `origins`, as
    explain places a record (origins.place): the words, else the package whose code raises
    the record's message. `cause` stays 0."""
    areas, result = load_areas(), Score()
    for item in items:
        placed = place(areas, read_shape(item["text"].splitlines()),
                       load_origins() if origins else None)
        result.records += 1
        result.threads.add(item["thread"])
        result.family += placed is not None and placed[0].family == item["family"]
    return result


def quotes(sample: str, text: str) -> bool:
    """The sample quotes the record: it contains one of the record's lines (24 characters or
    more), or the record contains the whole sample."""
    sample = sample.strip()
    return (len(sample) >= MIN_QUOTE and sample in text) or any(
        len(line.strip()) >= MIN_QUOTE and line.strip() in sample for line in text.splitlines())


def _support(source: str, samples: Sequence[str],
             texts: dict[str, list[str]]) -> frozenset[str]:
    """The corpus threads an entry or rule was written from: its source, and the threads whose
    records its samples quote."""
    return frozenset(thread for thread, own in texts.items()
                     if thread == source or any(quotes(s, t) for s in samples for t in own))


def leave_thread_out(items: list[dict[str, Any]]) -> Score:
    """Each thread's records answered without the entries and rules that thread gave."""
    sigs, rule_set = load_signatures(), load_rules()
    by_thread: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        by_thread.setdefault(item["thread"], []).append(item)
    texts = {thread: [item["text"] for item in own] for thread, own in by_thread.items()}
    # An entry or rule is left out for a thread when that thread is all it was written from:
    # one written from two threads (the same message printed in both) stays for either.
    support = {s.id: _support(s.source, s.samples, texts) for s in sigs} | \
        {r.id: _support(r.source, r.samples, texts) for r in rule_set}
    result = Score()
    matchers: dict[frozenset[str], Matcher] = {}
    for thread, own in by_thread.items():
        left = frozenset(ident for ident, threads in support.items() if threads == {thread})
        if left not in matchers:
            matchers[left] = Matcher([s for s in sigs if s.id not in left],
                                     rules=[r for r in rule_set if r.id not in left])
        for item in own:
            _tally(result, item, answer(matchers[left], item["text"]))
    return result
