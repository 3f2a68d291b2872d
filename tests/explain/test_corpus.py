"""explain on a corpus of real error lines from public threads (tests/data/real/explain/
corpus.yaml: each line with its thread and the cause the thread found): the share of lines
whose top answer gives that cause."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ascend_env.explain.match import default_matcher

CORPUS = Path(__file__).resolve().parents[1] / "data" / "real" / "explain" / "corpus.yaml"
MIN_LINES = 150
MIN_SHARE = 0.90


def _corpus() -> list[dict[str, Any]]:
    items = yaml.safe_load(CORPUS.read_text(encoding="utf-8"))
    assert isinstance(items, list)
    return items


def top_answer(line: str) -> str | None:
    """The id explain leads with for the line pasted alone (its first cause or first hit)."""
    scan = default_matcher().scan([("corpus", line)])
    return scan.hits[0].signature.id if scan.hits else None


def test_every_item_names_its_public_thread_and_cause() -> None:
    items = _corpus()
    assert len(items) >= MIN_LINES
    for item in items:
        assert item["source"].startswith("https://"), item
        assert item["line"].strip() and item["cause"].strip(), item
        assert isinstance(item["expect"], list), item


def test_most_lines_get_the_cause_their_thread_found() -> None:
    items = _corpus()
    right = [i for i in items if top_answer(i["line"]) in i["expect"]]
    share = len(right) / len(items)
    missed = [(top_answer(i["line"]), i["line"][:80]) for i in items if i not in right]
    assert share >= MIN_SHARE, (f"{len(right)}/{len(items)} = {share:.1%}", missed)


def test_expected_ids_are_entries_of_the_base_or_code_families() -> None:
    known = {s.id for s in default_matcher().signatures}
    for item in _corpus():
        for ident in item["expect"]:
            assert ident in known or ident.startswith("family."), ident

