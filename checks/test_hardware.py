"""Hardware: the Ascend cards on the PCI bus, their family and number."""

from __future__ import annotations

import pytest

from ascend_env.doctor.findings import fail, failure, observe, warn
from ascend_env.facts.model import Facts
from ascend_env.spec.envspec import EnvSpec
from ascend_env.spec.matrix import Chip, load_chips

pytestmark = [pytest.mark.category("hardware"), pytest.mark.level(1)]


def test_cards(facts: Facts, spec: EnvSpec | None, chip: Chip | None) -> None:
    """hardware.cards: the expected number of Ascend cards is on the PCI bus."""
    if not facts.pci:
        if facts.container.in_container:
            pytest.skip("the PCI bus is not visible inside a container")
        wanted = (f"{spec.hardware.devices or 'the'} {chip.family if chip else ''} NPU(s)"
                  if spec else "at least one Ascend NPU card")
        fail(message="no Ascend card on the PCI bus (vendor 0x19e5)",
             observed="no PCI function of vendor 0x19e5", expected=wanted,
             why="without a card there is no NPU for the driver, CANN or any job",
             manual="lspci -nn -d 19e5: ; check the cards are seated, enabled in the BIOS, "
                    "or passed through to this VM")
    if chip is None:
        families = sorted({c.chip or f"unknown device {c.device}" for c in facts.pci})
        fail(message=f"the Ascend cards are not of one known chip family: {', '.join(families)}",
             observed=", ".join(f"{c.address} {c.device}" for c in facts.pci),
             expected="cards of one family from chips.yaml",
             why="one host runs one chip's operator package; mixed or unknown cards cannot "
                 "share a CANN install",
             manual="lspci -nn -d 19e5: ; compare with ascend_env/data/chips.yaml")
    cards = [c for c in facts.pci if c.chip == chip.name]
    devices = len(cards) * chip.chips_per_card
    product = next((c.product for c in cards if c.product), None)
    seen = f"{len(cards)} x {chip.family}" + (f" ({product})" if product else "")
    if spec is not None:
        count = spec.hardware.devices or chip.devices.default
        assert devices == count, failure(
            message=f"{len(cards)} {chip.family} card(s) on the PCI bus, the spec expects "
                    f"{count // chip.chips_per_card}",
            observed=seen + f" = {devices} device(s)",
            expected=f"{count} device(s) (hardware.devices of spec {spec.name})",
            why="a card missing from the bus is dead, unseated or not passed through; jobs "
                "sized for the full host will not start",
            manual="lspci -nn -d 19e5: ; reseat or replace the card, or set hardware.devices")
    else:
        assert devices in chip.devices.allowed, failure(
            message=f"{len(cards)} {chip.family} card(s): a {chip.family} host has "
                    f"{', '.join(str(n) for n in chip.devices.allowed)} device(s)",
            observed=seen + f" = {devices} device(s)",
            expected=f"one of {chip.devices.allowed} device(s)",
            why="an odd card count usually means a card fell off the bus",
            manual="lspci -nn -d 19e5: ; dmesg | grep -i pci")
    observe(seen, None)


def test_chip(facts: Facts, with_spec: EnvSpec) -> None:
    """hardware.chip: the cards are the chip family the spec names."""
    wanted = load_chips().get(with_spec.hardware.chip)
    if not facts.pci:
        pytest.skip("no Ascend card on the PCI bus (see hardware.cards)")
    assert facts.chip == with_spec.hardware.chip, failure(
        message=f"the cards are {facts.chip or 'of mixed or unknown family'}, the spec is for "
                f"{with_spec.hardware.chip}",
        observed=", ".join(sorted({c.chip or str(c.device) for c in facts.pci})),
        expected=wanted.family if wanted else with_spec.hardware.chip,
        why="driver, firmware and operator packages are built per chip family",
        manual="use the profile of this hardware (ascend-env profiles list)")
    observe(wanted.family if wanted else facts.chip)


def test_names(facts: Facts) -> None:
    """hardware.names: every NPU name npu-smi prints is a chip family chips.yaml knows."""
    if not facts.npu_smi.available:
        pytest.skip("npu-smi is not installed (it comes with the driver)")
    named = [d for d in facts.devices if d.name is not None or d.unparsed]
    if not named:
        pytest.skip("npu-smi shows no device names")
    unknown: dict[str, list[str]] = {}
    for d in named:
        if d.chip is None:
            unknown.setdefault(d.name or "(unreadable)", []).append(str(d.npu_id))
    if unknown:
        # A warning, not a failure: the cards may be fine; only the doctor cannot tell which
        # driver, firmware and operator packages they need.
        listed = "; ".join(f"'{name}' (NPU {', '.join(dict.fromkeys(ids))})"
                           for name, ids in unknown.items())
        warn(message=f"npu-smi names a chip that chips.yaml does not know: {listed}",
             observed=listed,
             expected="an npu-smi name of ascend_env/data/chips.yaml",
             why="without the chip family the doctor cannot say which packages the host needs; "
                 "the PCI device id (hardware.cards) tells it where the bus is visible",
             manual="lspci -nn -d 19e5: ; npu-smi info -t board -i <id> ; add the name to "
                    "chips.yaml with the public output that shows it")
    families = sorted({d.chip for d in named if d.chip})
    observe(", ".join(families) + f" ({len(named)} device(s))")
