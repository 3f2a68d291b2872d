"""Who holds an NPU before a driver or firmware change: the real /proc of this machine read by
the program preflight sends (ascend_env/remote/device_holders.py), and the lines that name
each holder to the operator."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ascend_env.core.errors import AscendEnvError
from ascend_env.core.resources import remote_source
from ascend_env.install.holders import holder_lines, refusal

# A process that opens two NPU-like nodes (plain files under a test prefix) and waits.
HOLDER = """
import sys, time
prefix = sys.argv[1]
handles = [open(prefix + name, "w") for name in ("3", "_manager", "-not-a-node")]
print("ready", flush=True)
time.sleep(120)
"""


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    prefix = str(tmp_path / "davinci")
    process = subprocess.Popen([sys.executable, "-c", HOLDER, prefix, "--marker-train"],
                               stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stdout.readline().strip() == "ready"
    yield process, prefix
    process.kill()
    process.wait()


def scan(*args: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", remote_source("device_holders"), *args],
                          capture_output=True, text=True, check=True, timeout=60)
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def test_the_scan_finds_a_real_process_holding_the_nodes_with_its_command(
        holder: tuple[subprocess.Popen[str], str]) -> None:
    process, prefix = holder
    found = scan("--device-prefix", prefix, "--pids", f"{process.pid},999999999")
    mine = [row for row in found["holders"] if row["pid"] == process.pid]
    assert [row["device"] for row in mine] == [prefix + "3", prefix + "_manager"]
    assert "--marker-train" in mine[0]["command"]
    assert found["listed"] == [{"pid": process.pid, "command": mine[0]["command"]},
                               {"pid": 999999999, "command": None}]
    lines = holder_lines(json.dumps(found), [{"npu": 0, "pid": 999999999, "name": "python3"}])
    assert lines[0] == "pid 999999999 (python3) on NPU 0, in npu-smi's process table"
    assert f"pid {process.pid} (" in lines[1] and lines[1].endswith(
        f"holds {prefix}3, {prefix}_manager")


def test_no_holder_on_a_machine_without_npu_nodes() -> None:
    found = scan()  # this machine has no /dev/davinci*
    assert found["holders"] == [] and found["listed"] == []
    assert holder_lines(json.dumps(found), []) == []


def test_npu_smis_process_is_named_with_its_command_line_when_the_host_has_it() -> None:
    output = json.dumps({"schema": "ascend-env/device-holders/v1", "holders": [
        {"pid": 436712, "command": "python3 train.py", "device": "/dev/davinci0"}],
        "listed": [{"pid": 436712, "command": "python3 train.py"}]})
    lines = holder_lines(output, [{"npu": 0, "pid": 436712, "name": "python3"}])
    # Once: npu-smi's row, with the command line /proc gave.
    assert lines == ["pid 436712 (python3 train.py) on NPU 0, in npu-smi's process table"]
    message = refusal(lines)
    assert "pid 436712 (python3 train.py)" in message and "nothing was changed" in message


@pytest.mark.parametrize("output", ["", "Traceback (most recent call last):", "[]",
                                    '{"schema": "other"}'])
def test_output_that_is_not_the_scans_is_an_error_not_no_holder(output: str) -> None:
    with pytest.raises(AscendEnvError, match="NPU holder scan"):
        holder_lines(output, [])
