"""PCI cards and the chip family they name."""

from __future__ import annotations

from ascend_env.facts.assemble import facts_from_capture
from ascend_env.facts.capture import (
    Capture,
)
from ascend_env.remote import probe
from tests.facts.captures import ok, sample


def test_pci_card_from_lspci_only_and_chip_family() -> None:
    capture = Capture(commands={probe.LSPCI: ok(sample("lspci", "910b-domain-numeric"))})
    facts = facts_from_capture(capture)
    assert [c.address for c in facts.pci] == ["0000:c1:00.0", "0000:c2:00.0"]
    assert facts.chip == "910b"
