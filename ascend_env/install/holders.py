"""The processes that keep a host's driver or firmware from being changed, named for the
operator: npu-smi's process table (read by preflight's probe) and the holders of
/dev/davinci* (ascend_env/remote/device_holders.py), with each one's command line."""

from __future__ import annotations

import json
from typing import Any

from ascend_env.core.errors import AscendEnvError

SCHEMA = "ascend-env/device-holders/v1"


def holder_lines(output: str, listed: list[dict[str, Any]]) -> list[str]:
    """One line per process holding an NPU: `pid 436712 (python3 train.py) on NPU 0`.

    `listed` is npu-smi's process table ({npu, pid, name}); its pids are named with the
    command line the host gives them, else npu-smi's process name. Output the program did
    not write is an error, never "no holder"."""
    try:
        data = json.loads(output)
    except ValueError as exc:
        raise AscendEnvError(f"the NPU holder scan printed no JSON: {output[:200]!r}") from exc
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise AscendEnvError(f"the NPU holder scan printed something else: {output[:200]!r}")
    commands = {entry["pid"]: entry.get("command") for entry in data.get("listed", [])}
    lines, seen = [], set()
    for row in listed:
        pid = row.get("pid")
        what = commands.get(pid) or row.get("name") or "command unknown"
        where = f"NPU {row['npu']}" if row.get("npu") is not None else "an NPU"
        lines.append(f"pid {pid} ({what}) on {where}, in npu-smi's process table")
        seen.add(pid)
    nodes: dict[int, list[str]] = {}
    names: dict[int, str] = {}
    for row in data.get("holders", []):
        nodes.setdefault(row["pid"], []).append(str(row["device"]))
        names[row["pid"]] = row.get("command") or "command unknown"
    lines += [f"pid {pid} ({names[pid]}) holds {', '.join(devices)}"
              for pid, devices in nodes.items() if pid not in seen]
    return lines


def refusal(lines: list[str]) -> str:
    """Why the host is refused, what holds it, and what to do."""
    return ("a driver or firmware change resets the NPUs, and the reset fails while a process "
            "holds one; nothing was changed on this host. Holding them: " + "; ".join(lines)
            + ". Stop those jobs (or drain the host from its scheduler, --drain-cmd) and run "
            "again")
