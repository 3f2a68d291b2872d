"""Simulated hosts over their real transports: ssh, Ansible, testinfra."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sim.fixtures import SimFleet

pytestmark = pytest.mark.sim

ANSIBLE = str(Path(sys.executable).with_name("ansible"))


def test_ansible_ping_reaches_every_host(sim_bare: SimFleet) -> None:
    res = subprocess.run([ANSIBLE, "all", "-i", str(sim_bare.inventory), "-m", "ping"],
                         capture_output=True, text=True, timeout=120, check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.count('"ping": "pong"') == len(sim_bare.hosts)


def test_ansible_gathers_facts(sim_bare: SimFleet) -> None:
    res = subprocess.run([ANSIBLE, sim_bare.hosts[0], "-i", str(sim_bare.inventory), "-m",
                          "setup", "-a", "filter=ansible_distribution*"],
                         capture_output=True, text=True, timeout=120, check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    assert '"ansible_distribution": "Debian"' in res.stdout


def test_testinfra_reaches_host(sim_bare: SimFleet) -> None:
    host = sim_bare.testinfra(sim_bare.hosts[1])
    assert host.file("/etc/debian_version").exists
    assert host.run("id -un").stdout.strip() == "root"


def test_bare_host_shows_cards_but_no_driver(sim_bare: SimFleet) -> None:
    h = sim_bare.hosts[0]
    lspci = sim_bare.ssh(h, "lspci")
    lines = [x for x in lspci.stdout.splitlines() if "Device d802" in x]
    assert len(lines) == 8
    assert ("c1:00.0 Processing accelerators: Huawei Technologies Co., Ltd. "
            "Device d802 (rev 20)") in lines
    lspci_n = sim_bare.ssh(h, "lspci -n -s c1:00.0").stdout.strip()
    assert lspci_n == "c1:00.0 1200: 19e5:d802 (rev 20)"
    sysfs = sim_bare.ssh(h, "cat /sys/bus/pci/devices/0000:c1:00.0/subsystem_device").stdout
    assert sysfs.strip() == "0x3000"
    assert sim_bare.ssh(h, "command -v npu-smi").returncode != 0
    assert "drv_pcie_host" not in sim_bare.ssh(h, "lsmod").stdout
    assert sim_bare.ssh(h, "ls /dev/davinci0").returncode != 0
    assert sim_bare.ssh(h, "test -d /lib/modules/$(uname -r)/build").returncode == 0


def test_provisioned_host(sim_provisioned: SimFleet) -> None:
    h = sim_provisioned.hosts[0]
    info = sim_provisioned.ssh(h, "npu-smi info")
    assert info.returncode == 0
    assert info.stdout.startswith("+" + "-" * 96 + "+\n| npu-smi 25.5.0 ")
    assert info.stdout.count("910B3") == 8
    assert "drv_pcie_host" in sim_provisioned.ssh(h, "lsmod").stdout
    nodes = sim_provisioned.ssh(h, "stat -c '%A %U %G %n' /dev/davinci0 /dev/davinci_manager "
                                   "/dev/devmm_svm /dev/hisi_hdc").stdout.splitlines()
    assert len(nodes) == 4
    assert all(n.startswith("crw-rw---- HwHiAiUser HwHiAiUser") for n in nodes)
    board = sim_provisioned.ssh(h, "npu-smi info -t board -i 0").stdout
    assert "Compatibility                  : OK" in board


@pytest.fixture
def faulty(sim_provisioned: SimFleet) -> Iterator[tuple[SimFleet, str]]:
    h = sim_provisioned.hosts[1]
    yield sim_provisioned, h
    sim_provisioned.fault(h, "clear")


def test_fault_health_alarm(faulty: tuple[SimFleet, str]) -> None:
    f, h = faulty
    f.fault(h, "health-alarm", 2)
    table = f.ssh(h, "npu-smi info").stdout
    assert "| 2     910B3               | Alarm         |" in table
    chip = f.ssh(h, "npu-smi info -t health -i 2 -c 0").stdout
    assert "Health Status                  : Alarm" in chip
    assert "Error Code                     : A4025021 8C03A000 8C084E00" in chip


def test_fault_not_started(faulty: tuple[SimFleet, str]) -> None:
    f, h = faulty
    f.fault(h, "not-started", 1)
    assert "| 1     910B3               | UNKNOWN       | NA" in f.ssh(h, "npu-smi info").stdout
    res = f.ssh(h, "npu-smi info -t board -i 1")
    assert res.returncode != 0
    assert "ret is -8005" in res.stdout


def test_fault_busy(faulty: tuple[SimFleet, str]) -> None:
    f, h = faulty
    f.fault(h, "busy", 0)
    table = f.ssh(h, "npu-smi info").stdout
    assert "| 0       0                 | 436712        | python3" in table
    assert "No running processes found in NPU 0 " not in table


def test_fault_missing_and_clear(faulty: tuple[SimFleet, str]) -> None:
    f, h = faulty
    f.fault(h, "missing", 7)
    assert "Total Count                    : 7" in f.ssh(h, "npu-smi info -l").stdout
    assert f.ssh(h, "lspci | grep -c d802").stdout.strip() == "7"
    assert f.ssh(h, "ls /dev/davinci7").returncode != 0
    res = f.ssh(h, "npu-smi info -t board -i 7")
    assert "Invalid card id." in res.stdout
    f.fault(h, "clear")
    assert f.ssh(h, "lspci | grep -c d802").stdout.strip() == "8"
    assert f.ssh(h, "ls /dev/davinci7").returncode == 0


def test_state_file_is_json(sim_bare: SimFleet) -> None:
    state = json.loads(sim_bare.ssh(sim_bare.hosts[0], "cat /var/lib/ascend-sim/state.json").stdout)
    assert state["schema"] == "ascend-env-sim/state/v1"
    assert [n["npu_id"] for n in state["npus"]] == list(range(8))
