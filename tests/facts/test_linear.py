"""Every text parser of ascend_env/facts and the redactor read 200,000 newlines, spaces, colons,
one long word and the other shapes of tests/facts/shapes.py, and invent nothing from them.

Linear by construction: the parsers go line by line, and the patterns that search a whole text
cannot cross a line (tests below). The cost ratio (time for 10x the input over time for 1x,
goal at most 25) is printed by benchmarks/parsers.py: no test here times anything.
"""

from __future__ import annotations

import pytest

from ascend_env.facts import capture, network
from ascend_env.facts.capture import Redactor
from tests.facts.shapes import SHAPES, TEXT_PARSERS
from tests.facts.test_samples import invented

SIZE = 200_000


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("name", sorted(TEXT_PARSERS))
def test_parser_reads_a_large_odd_answer(name: str, shape: str) -> None:
    text = SHAPES[shape](SIZE)
    TEXT_PARSERS[name](text)  # a quadratic parser takes hours here, not a fraction of a second
    if name != "redactor":
        assert invented(name, text) == []


def test_the_serial_pattern_stays_on_its_line() -> None:
    """It once ate the line breaks after a serial number (`\\s*$` under MULTILINE), and
    rescanned every blank line below a label from each line start."""
    assert capture._SERIAL.pattern.count(r"\s") == 0
    text = "Serial Number : 2102312AB  \n\n\nSN: NA\nSN=abc def\n\nSerial:\n\n"
    assert Redactor().text(text, []) == (
        "Serial Number : <serial-1>\n\n\nSN: NA\nSN=<serial-2>\n\nSerial:\n\n")


def test_a_label_reads_only_its_own_line() -> None:
    assert network.parse_hccn_ip("ipaddr:\n\n\nnetmask:255.255.255.0\n") is None
    assert network.parse_hccn_ip("  IPADDR : 10.0.0.1 \nnetmask:255.255.0.0") == {
        "address": "10.0.0.1", "netmask": "255.255.0.0"}
    assert network.parse_hccn_link("link status:\nlink status: UP\n") == "UP"
