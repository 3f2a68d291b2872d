"""The corpus of real hosts (tests/data/real/<id>/): what each printed, as a capture.

Each folder holds the verbatim files one real host printed (npu-smi-info.txt, and where the
public page quoted it ascend_toolkit_install.info), a SOURCE naming the page, and
expected.json with the facts and verdicts a correct reading gives.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ascend_env.facts import system
from ascend_env.facts.capture import Capture, CommandResult
from ascend_env.remote import probe

REAL = Path(__file__).resolve().parents[1] / "data" / "real"
BASE = "/usr/local/Ascend"
NPU_SMI_INFO = "npu-smi-info.txt"
TOOLKIT_INFO = "ascend_toolkit_install.info"


@dataclass(frozen=True)
class RealHost:
    """One real host's sample: its files and what it should read as."""

    id: str
    folder: Path

    def text(self, name: str) -> str | None:
        path = self.folder / name
        return path.read_text(encoding="utf-8") if path.is_file() else None

    @property
    def expected(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((self.folder / "expected.json").read_text())
        return data


# Not hosts: the corpus of real error lines (tests/explain) and msprof's own profiler
# events (tests/perf).
NOT_HOSTS = frozenset({"explain", "msprof-timeline"})


def real_hosts() -> list[RealHost]:
    return [RealHost(id=d.name, folder=d) for d in sorted(REAL.iterdir())
            if d.is_dir() and d.name not in NOT_HOSTS]


def capture_of(host: RealHost, npu_smi_info: str | None = None) -> Capture:
    """The capture of a probe run on that host, holding only what the host printed.

    Nothing is added that the page does not show: no PCI view, no driver version.info (the
    doctor then takes the driver's version from npu-smi, as in a container), the toolkit's
    install info where it was quoted. `npu_smi_info` replaces the table (corrupted copies).
    """
    table = npu_smi_info if npu_smi_info is not None else host.text(NPU_SMI_INFO)
    commands = {}
    if table is not None:
        commands[probe.NPU_SMI_INFO] = CommandResult(argv=["npu-smi", "info"], rc=0,
                                                     stdout=table)
    files = {}
    toolkit = host.text(TOOLKIT_INFO)
    if toolkit is not None:
        arch = next((line.split("=", 1)[1].strip() for line in toolkit.splitlines()
                     if line.startswith("arch=")), "aarch64")
        commands[system.UNAME_M] = CommandResult(argv=["uname", "-m"], rc=0, stdout=arch + "\n")
        files[f"{BASE}/ascend-toolkit/latest/{arch}-linux/{TOOLKIT_INFO}"] = toolkit
    return Capture(host=host.id, captured_at="2026-01-01T00:00:00+00:00",
                   options={"install_path": BASE, "install_paths": [BASE]},
                   files=files, commands=commands)
