"""Capture -> Facts: whole hosts, their JSON unchanged since the pydantic models, empty and
garbage captures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel

from ascend_env.facts import model as facts_module
from ascend_env.facts.assemble import AREAS, facts_from_capture
from ascend_env.facts.capture import (
    Capture,
)
from ascend_env.facts.model import Facts, any_range_contains
from tests.facts.captures import BASE, GOLDEN_HOSTS, host_910b, host_garbage

# Facts JSON as the pydantic models dumped it (model_dump(mode="json", by_alias=True)), written
# before the models became dataclasses; to_json() must keep producing it byte for byte.
GOLDEN = Path(__file__).resolve().parent / "golden"


def _facts_text(capture: Capture) -> str:
    return json.dumps(facts_from_capture(capture).to_json(), indent=1, ensure_ascii=False) + "\n"


@pytest.mark.parametrize("name", sorted(GOLDEN_HOSTS))
def test_facts_json_is_unchanged(name: str) -> None:
    assert _facts_text(GOLDEN_HOSTS[name]()) == (GOLDEN / f"facts-{name}.json").read_text()


def test_facts_of_a_provisioned_host() -> None:
    facts = facts_from_capture(host_910b())
    assert facts.arch == "aarch64"
    assert facts.os is not None and facts.os.id == "openEuler"
    assert facts.chip == "910b"  # PCI 0xd802 agrees with the board's... 910B3 name
    assert facts.pci[0].product == "Atlas A2 training (A900T)"
    assert facts.pci[0].numa_node == 0
    assert facts.driver is not None and str(facts.driver.version) == "24.1.rc3"
    assert facts.driver.complete is True
    assert facts.firmware is not None and facts.firmware.version is not None
    assert str(facts.firmware.version) == "7.1.0.11.220"
    assert any_range_contains(facts.driver.compatible_firmware, facts.firmware.version) is True
    cann = facts.cann
    assert cann is not None and cann.layout == "old" and str(cann.version) == "8.0.0"
    assert cann.home == f"{BASE}/ascend-toolkit/8.0.0"
    assert cann.installed_versions == ["8.0.0", "8.1.RC1"]
    assert set(cann.packages) == {"toolkit", "kernels", "nnal"}
    assert cann.packages["kernels"].version == "8.0.0"
    assert cann.kernel_socs == ["ascend910b"]
    assert cann.set_env == f"{BASE}/ascend-toolkit/set_env.sh"
    assert facts.npu_smi.available and facts.npu_smi.driver_version == "25.5.0"
    assert [(d.npu_id, d.chip, d.health) for d in facts.devices] == [
        (0, "910b", "OK"), (1, "910b", "OK")]
    busy = facts.devices[1]
    assert [p.pid for p in busy.processes] == [436712] and facts.devices[0].processes == []
    assert busy.health_status == "Alarm" and busy.error_codes[0] == "A4025021"
    assert facts.devices[0].compatibility == "OK"
    assert [n.path for n in facts.device_nodes] == [
        "/dev/davinci0", "/dev/davinci1", "/dev/davinci_manager"]
    assert facts.modules.driver_loaded is True and facts.modules.source == "/proc/modules"
    assert facts.env.sourced and facts.env.threads == {"OMP_NUM_THREADS": "4"}
    assert facts.env.login_sourced is False  # sourced in this shell, not in a login shell
    assert facts.env.login_vars == {"PATH": "/usr/bin", "OMP_NUM_THREADS": "8"}
    assert facts.libraries["libhccl.so"].resolvable
    assert facts.libraries["libascend_hal.so"].resolvable  # through the loader cache
    assert facts.libraries["libatb.so"].resolvable is False
    assert facts.frameworks.torch == "2.1.0+cpu" and facts.frameworks.torch_npu == "2.1.0.post8"
    assert facts.frameworks.mindspore is None
    assert facts.selinux.mode == "permissive"
    assert facts.cpu.physical_cores == 2 and facts.cpu.numa_nodes == {0: [0, 1]}
    assert facts.users.invoking_in_driver_group is True
    assert facts.users.driver_user_entry is not None and facts.users.driver_user_entry.uid == 1000
    assert facts.notes == []


def test_facts_are_plain_dataclasses() -> None:
    """Nothing validates facts (our parsers make them), but a misspelt field is still an
    error, as pydantic's extra="forbid" made it."""
    models = [v for v in vars(facts_module).values()
              if isinstance(v, type) and v.__module__ == facts_module.__name__]
    assert models and not [m for m in models if issubclass(m, BaseModel)]
    parsed = [v for area in AREAS for v in vars(area).values()
              if isinstance(v, type) and v.__module__ == area.__name__]
    assert parsed and not [m for m in parsed if issubclass(m, BaseModel)]
    with pytest.raises(TypeError):
        Facts(hostname="x")  # type: ignore[call-arg]
    with pytest.raises(AttributeError):
        Facts().hostname = "x"  # type: ignore[attr-defined]
    assert Facts().to_json()["schema"] == "ascend-env/facts/v1"


def test_facts_of_an_empty_capture() -> None:
    facts = facts_from_capture(Capture())
    assert facts.driver is None and facts.firmware is None and facts.cann is None
    assert facts.devices == [] and facts.pci == [] and facts.chip is None
    assert facts.npu_smi.available is False
    assert facts.frameworks.torch is None
    assert facts.notes == []


def test_facts_of_garbage_are_notes() -> None:
    facts = facts_from_capture(host_garbage())
    assert facts.driver is not None and facts.driver.version is None
    assert facts.driver.complete is False
    assert any("not-a-version" in n for n in facts.notes)
    assert any("distributions" in n for n in facts.notes)
