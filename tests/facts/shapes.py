"""What a host's answer may hold that no parser expects, in any size: the shapes that
tests/facts/test_linear.py and benchmarks/parsers.py feed every text parser and the redactor."""

from __future__ import annotations

from collections.abc import Callable

from ascend_env.facts.assemble import PARSERS
from ascend_env.facts.capture import Redactor

# Each shape makes a text of about n characters (the last one 3n).
SHAPES: dict[str, Callable[[int], str]] = {
    "long word": lambda n: "x" * n,
    "quoted value": lambda n: 'KEY="' + "x" * n + '"\n',
    "table cell": lambda n: "| " + "x" * n + " |\n",
    "newlines": lambda n: "\n" * n,
    "spaces": lambda n: " " * n,
    "colons": lambda n: ":" * n,
    # A label whose value never comes: a pattern free to cross lines rescans them all.
    "labelled blank lines": lambda n: "ipaddr:\n" + "\n" * n + "Serial Number:\n" + " \n" * n,
}


def _text_parsers() -> dict[str, Callable[[str], object]]:
    """Every parser that reads a text (pci_sysfs reads a mapping of sysfs files), and the
    redactor that `collect --redact` runs over every text of a capture."""
    parsers: dict[str, Callable[[str], object]] = {
        name: parse for name, parse in PARSERS.items() if name != "pci_sysfs"}
    parsers["redactor"] = lambda text: Redactor().text(text, ["node1.example"])
    return parsers


TEXT_PARSERS = _text_parsers()
