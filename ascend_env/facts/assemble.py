"""One host's Facts from its capture: each area's builder fills its part; nothing parses here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ascend_env.facts import (
    accounts,
    cann,
    cpus,
    environment,
    frameworks,
    installed,
    network,
    npu_smi,
    pci,
    selinux,
    superpod,
    system,
)
from ascend_env.facts.capture import Capture
from ascend_env.facts.model import AscendInstallRecord, Facts
from ascend_env.facts.reader import CaptureReader

AREAS = (installed, cann, npu_smi, pci, system, cpus, selinux, accounts, environment,
         frameworks, network, superpod)

# Every area's parsers by the folder name of their samples under tests/data/.
PARSERS: dict[str, Callable[[Any], Any]] = {
    name: parse for area in AREAS for name, parse in area.PARSERS.items()}


def facts_from_capture(capture: Capture) -> Facts:
    """Typed facts of one host; never raises on odd content (it becomes a note)."""
    r = CaptureReader(capture)
    # The order of these calls is the order of the notes they leave.
    record = installed.read_install_record(r)
    known = record or AscendInstallRecord()
    arch = system.read_arch(r)
    npu_smi_facts, devices = npu_smi.read_npu(r)
    env = environment.read_env(r)
    cards = pci.read_pci(r)
    chips = {c.chip for c in cards if c.chip} | {d.chip for d in devices if d.chip}
    for error in capture.errors:
        r.notes.append(f"probe could not read {error.where}: {error.error}")
    facts = Facts(
        host=capture.host, captured_at=capture.captured_at, os=system.read_os(r), arch=arch,
        container=system.read_container(r), pci=cards,
        chip=next(iter(chips)) if len(chips) == 1 else None, install_record=record,
        driver=installed.read_driver(r, known, npu_smi_facts, chips_listed=bool(devices)),
        firmware=installed.read_firmware(r, known),
        cann=cann.read_cann(r, arch), npu_smi=npu_smi_facts, devices=devices,
        device_nodes=system.read_device_nodes(r), modules=system.read_modules(r), env=env,
        libraries=environment.read_libraries(r, env.ld_library_path),
        frameworks=frameworks.read_frameworks(r), selinux=selinux.read_selinux(r),
        cpu=cpus.read_cpu(r), users=accounts.read_users(r, known),
        network=network.read_network(r))
    if len(chips) > 1:
        r.notes.append(f"cards of several chip families: {', '.join(sorted(chips))}")
    facts.notes = r.notes
    return facts
