"""Real vendor outputs, kept once under tests/data/<parser>/<name>.txt (sources beside them)."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"


def sample(parser: str, name: str) -> str:
    """The verbatim text of one sample, without the file's trailing newline."""
    return (DATA / parser / f"{name}.txt").read_text(encoding="utf-8").rstrip("\n")
