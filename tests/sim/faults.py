"""Switch device faults on a simulated host (read by its npu-smi, lspci and /dev)."""

from __future__ import annotations

import os
import pwd
from pathlib import Path
from typing import Any

from tests.sim import hardware
from tests.sim.layout import SimError

FAULTS = ("health-alarm", "not-started", "busy", "missing", "health-alarm-after-driver",
          "clear")
# The alarm of the fixture
# component/ascend-faultdiag/test/st_module_testcase/kg_parse/npu_info_after.txt
# of https://github.com/Ascend/mind-cluster.
DEFAULT_ALARM_CODE = "A4025021 8C03A000 8C084E00"
# A foreign workload as ascend-deployer's "occupied" check would see it in the process table.
BUSY_PROCESS = {"pid": 436712, "name": "python3", "memory_mb": 61440}


def _npu(state: dict[str, Any], npu_id: int) -> dict[str, Any]:
    for n in state["npus"]:
        if n["npu_id"] == npu_id:
            found: dict[str, Any] = n
            return found
    ids = ", ".join(str(n["npu_id"]) for n in state["npus"])
    raise SimError(f"no NPU {npu_id} on this host (NPU IDs: {ids})")


def _restore_device(root: Path, state: dict[str, Any], npu: dict[str, Any]) -> None:
    """Bring back what `missing` removed: its PCI function and, with a driver, its nodes."""
    for bus_id in hardware.npu_bus_ids(npu):
        hardware.write_pci_device(root, state, bus_id)
    if (root / "usr/local/bin/npu-smi").exists():
        try:
            owner = pwd.getpwnam("root")  # fallback when HwHiAiUser is unknown here
            uid, gid = owner.pw_uid, owner.pw_gid
            ref = root / "dev/davinci_manager"
            if ref.exists():
                st = ref.stat()
                uid, gid = st.st_uid, st.st_gid
            for c in range(state["chips_per_npu"]):
                node = root / "dev" / f"davinci{npu['device_base'] + c}"
                if not node.exists():
                    os.mknod(node, 0o660 | 0o020000, os.makedev(236, 10 + npu["device_base"] + c))
                    os.chown(node, uid, gid)
                    Path(node).chmod(0o660)
        except KeyError:
            pass


def apply(root: Path, fault: str, device: int | None = None, code: str | None = None) -> str:
    """Set `fault` on NPU `device` (default 0); `clear` without a device clears all."""
    if fault not in FAULTS:
        raise SimError(f"unknown fault {fault!r}; choose one of {', '.join(FAULTS)}")
    state = hardware.read_state(root)
    if fault == "clear":
        targets = state["npus"] if device is None else [_npu(state, device)]
        for npu in targets:
            was_missing = npu.get("fault") == "missing"
            npu.update(fault=None, error_code=None, processes=[], after_driver=None)
            if was_missing:
                _restore_device(root, state, npu)
        hardware.write_state(root, state)
        return f"cleared {len(targets)} NPU(s)"
    npu = _npu(state, 0 if device is None else device)
    if fault == "health-alarm-after-driver":
        # Armed, not set: the next driver install (target/installer.py) fires it, as an NPU
        # that does not come back from the driver's hot reset shows Alarm afterwards.
        npu["after_driver"] = {"fault": "health-alarm", "error_code": code or DEFAULT_ALARM_CODE}
        hardware.write_state(root, state)
        return f"NPU {npu['npu_id']}: health alarm at the next driver install"
    npu.update(fault=fault, error_code=None, processes=[])
    if fault == "health-alarm":
        npu["error_code"] = code or DEFAULT_ALARM_CODE
    elif fault == "busy":
        npu["processes"] = [dict(BUSY_PROCESS, chip=0)]
    elif fault == "missing":
        for bus_id in hardware.npu_bus_ids(npu):
            hardware.remove_pci_device(root, bus_id)
        for c in range(state["chips_per_npu"]):
            (root / "dev" / f"davinci{npu['device_base'] + c}").unlink(missing_ok=True)
    hardware.write_state(root, state)
    return f"NPU {npu['npu_id']}: {fault}"
