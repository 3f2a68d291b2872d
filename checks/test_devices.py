"""Devices: every NPU present, started, healthy, free, with its device node."""

from __future__ import annotations

import re
from typing import Any

import pytest

from ascend_env.doctor.findings import attach_evidence, fail, failure, observe, warn
from ascend_env.explain.inline import explain_text
from ascend_env.facts.model import Facts, NpuDevice

pytestmark = [pytest.mark.category("devices"), pytest.mark.level(1)]

BAD_HEALTH = ("ALARM", "CRITICAL")
# The words npu-smi prints in Health (DCMI levels, UNKNOWN for a device that did not start);
# anything else was not understood and is never taken for OK.
HEALTH_WORDS = ("OK", "WARNING", "ALARM", "CRITICAL", "UNKNOWN")


def _ids(devices: list[NpuDevice]) -> str:
    return ", ".join(f"{d.npu_id}" + (f"/{d.chip_id}" if d.chip_id else "") for d in devices)


def test_count(devices: list[NpuDevice], expected_devices: int | None) -> None:
    """devices.count: npu-smi reports every expected NPU."""
    if expected_devices is None:
        pytest.skip("no spec and no PCI view: nothing to compare npu-smi's list with")
    assert len(devices) == expected_devices, failure(
        message=f"npu-smi reports {len(devices)} of {expected_devices} NPU device(s)",
        observed=f"{len(devices)} device(s): NPU {_ids(devices)}",
        expected=f"{expected_devices} device(s)",
        why="a device the driver does not report cannot run jobs; collective jobs sized for "
            "the whole host hang or fail",
        manual="npu-smi info -l ; lspci -d 19e5: ; dmesg | grep -i davinci ; reboot or "
               "replace the card")
    observe(f"{len(devices)} device(s)")


def test_started(devices: list[NpuDevice]) -> None:
    """devices.started: every NPU has started (health is not UNKNOWN)."""
    down = [d for d in devices if (d.health or "").upper() == "UNKNOWN"]
    assert not down, failure(
        message=f"NPU {_ids(down)} did not start (npu-smi Health UNKNOWN)",
        observed=", ".join(f"NPU {d.npu_id}: Health {d.health}" for d in down),
        expected="Health OK",
        why="a device that did not start is absent for every job",
        manual="npu-smi info -t health -i <id> ; reset it (npu-smi set -t reset -i <id> "
               "-c 0) or reboot; persistent: replace the card")
    observe(f"{len(devices)} device(s) started")


def test_health(facts: Facts, devices: list[NpuDevice]) -> None:
    """devices.health: no NPU reports a health alarm, and every NPU's health was read."""
    def worst(d: NpuDevice) -> str:
        return ((d.health_status or "") + " " + (d.health or "")).upper()

    alarms = [d for d in devices if any(w in worst(d) for w in BAD_HEALTH)]
    if alarms:
        explained = {d.npu_id: _explained(d) for d in alarms if d.error_codes}
        if any(explained.values()):
            attach_evidence({"explained": {str(k): v for k, v in explained.items() if v}})
        details = "; ".join(
            f"NPU {d.npu_id}: {d.health_status or d.health}"
            + (f", error codes {' '.join(d.error_codes)}" if d.error_codes else "")
            + (f" ({d.error_information[0]})" if d.error_information else "")
            + _reading(explained.get(d.npu_id, []))
            for d in alarms)
        fail(message=f"NPU {_ids(alarms)} report a health alarm: {details}",
             observed=details, expected="Health OK, Error Code NA",
             why="the device itself reports a hardware or firmware fault; jobs on it fail or "
                 "corrupt results",
             manual="npu-smi info -t health -i <id> -c 0 ; look the codes up in the product's "
                    "error-code list; collect logs (msnpureport) and reset or replace the card")
    warned = [d for d in devices if "WARNING" in worst(d)]
    if warned:
        warn(message=f"NPU {_ids(warned)} report health Warning",
             observed=", ".join(f"NPU {d.npu_id}: {d.health}" for d in warned),
             expected="Health OK", why="a minor alarm often precedes a major one",
             manual="npu-smi info -t health -i <id> -c 0")
    unread = _unread_health(facts, devices)
    if unread:
        warn(message="health not judged: " + "; ".join(unread),
             observed="; ".join(unread), expected="every device's row read, Health OK",
             why="a row or word the doctor cannot read may hide a faulty device; it is never "
                 "taken for OK",
             manual="npu-smi info ; npu-smi info -t health -i <id> -c 0 ; if the table is "
                    "fine, report the verbatim output (it is a layout the doctor lacks)")
    observe(f"{len(devices)} device(s) healthy")


def _explained(device: NpuDevice) -> list[dict[str, Any]]:
    """The device's fault codes through `ascend-env explain`'s knowledge base, written as
    npu-smi's health page prints them, so that the doctor and explain give one answer."""
    return explain_text(f"Error Code                     : {' '.join(device.error_codes)}")


def _reading(explained: list[dict[str, Any]]) -> str:
    """The entry and the handling level MindCluster gives the worst code, for the message."""
    if not explained:
        return ""
    level = explained[0].get("numbers", {}).get("level")
    return (f" [{explained[0]['id']}" + (f", fault level {level}" if level else "")
            + "; see ascend-env explain]")


def _unread_health(facts: Facts, devices: list[NpuDevice]) -> list[str]:
    """What keeps the health of a device from being read: unknown words, unread rows."""
    out = []
    for d in devices:
        word = d.health_status or d.health
        where = f"NPU {d.npu_id}" + (f" chip {d.chip_id}" if d.chip_id is not None else "")
        if word is None:
            out.append(f"{where}: no Health shown")
        elif any(w.upper() not in HEALTH_WORDS for w in (d.health, d.health_status) if w):
            out.append(f"{where}: unknown Health '{word}'")
        if d.unparsed:
            out.append(f"{where}: unread {', '.join(d.unparsed)}")
    out += [f"unread npu-smi line '{line[:100]}'" for line in facts.npu_smi.unparsed]
    return out


def test_free(facts: Facts, devices: list[NpuDevice]) -> None:
    """devices.free: no process holds an NPU."""
    busy = [d for d in devices if d.processes]
    if not busy and not facts.npu_smi.process_table:
        # A table cut short (a pasted capture, a tool that stopped) lists no process because
        # it shows none: not knowing is not "free".
        warn(message="npu-smi info printed no process table: whether the NPUs are free "
                     "is not known",
             observed="no `NPU  Chip  Process id` section and no 'No running processes "
                      "found' line",
             expected="npu-smi's process table", manual="npu-smi info")
    if busy:
        procs = "; ".join(f"NPU {d.npu_id}: " + ", ".join(
            f"pid {p.pid} {p.name or '?'} ({p.memory_mb} MB)" for p in d.processes)
            for d in busy)
        # A warning, not a failure: a doctor run beside a running job is legitimate.
        warn(message=f"NPU {_ids(busy)} held by another process: {procs}",
             observed=procs, expected="no process on the NPUs before a job starts",
             why="a held device makes a new job fail to allocate memory, and driver upgrades "
                 "or resets refuse to run",
             manual="stop the process (or its container): ps -p <pid> -o pid,user,cmd")
    observe(f"{len(devices)} device(s) free")


def test_nodes(facts: Facts, devices: list[NpuDevice], expected_devices: int | None) -> None:
    """devices.nodes: every NPU and the driver's management devices have their /dev node."""
    nodes = {n.path for n in facts.device_nodes}
    numbered = sorted(p for p in nodes if re.fullmatch(r"/dev/v?davinci\d+", p))
    wanted = expected_devices if expected_devices is not None else len(devices)
    missing = [f"/dev/{n}" for n in ("davinci_manager", "devmm_svm", "hisi_hdc")
               if f"/dev/{n}" not in nodes]
    problems = []
    if len(numbered) < wanted:
        problems.append(f"{len(numbered)} of {wanted} /dev/davinciN node(s)")
    if missing:
        problems.append("missing " + ", ".join(missing))
    assert not problems, failure(
        message="device nodes missing: " + "; ".join(problems),
        observed=", ".join(numbered) or "no /dev/davinciN", expected=f"{wanted} davinci "
        "node(s) plus davinci_manager, devmm_svm, hisi_hdc",
        why="jobs open the NPUs through these nodes (containers need them passed in too)",
        manual="reboot after the driver install; in a container add --device for each node")
    observe(f"{len(numbered)} davinci node(s) and the management nodes")
