"""The corpus of real error records (tests/data/real/explain/) and how explain is scored on it,
shared by tests/explain/test_corpus.py and benchmarks/explain_corpus.py.

A record is explain's input pasted alone. Its answer is the lead of the chain explain builds
(the first cause), else its first finding. Two scores per part:
- recognised: the answer's family is the record's family (the area the symptom belongs to);
- cause first: the answer's first cause is the cause the record's thread established (an id
  of ascend_env/data/signatures/causes/causes.yaml, or an entry's own id).
A record that looks like an error (match.ERROR_LIKE) that explain answers nothing for and lists
nothing unknown for is a silent pass; a record with no mark of an error at all is counted apart.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ascend_env.explain.match import ERROR_LIKE, Matcher

DATA = Path(__file__).resolve().parents[1] / "data" / "real" / "explain"
TRAIN, HELDOUT = DATA / "corpus.yaml", DATA / "heldout.yaml"
# A thread is held out when its bucket is below this share (unless the knowledge base cites it):
# fixed before the split was first computed, never tuned.
HELDOUT_SHARE = 60
FIELDS = {"thread", "text", "family", "cause", "note", "train_because"}


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


def score(matcher: Matcher, items: list[dict[str, Any]]) -> Score:
    result = Score()
    for item in items:
        got = answer(matcher, item["text"])
        result.records += 1
        result.threads.add(item["thread"])
        result.family += got.family == item["family"]
        result.cause += got.cause == item["cause"]
        unanswered = got.ident is None and got.unknown == 0
        result.silent += unanswered and got.error_like
        result.quiet += unanswered and not got.error_like
        if got.family != item["family"] or got.cause != item["cause"]:
            result.misses.append((item, got))
    return result
