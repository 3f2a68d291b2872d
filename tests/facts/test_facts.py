"""Parsers against real captured samples (tests/data/<parser>/), odd input, and the capture
-> facts assembly (ascend-facts.md §3-§4, §7, §9, §11)."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from ascend_env.facts import model as facts_module
from ascend_env.facts.build import AREAS, PARSERS, facts_from_capture
from ascend_env.facts.capture import (
    Capture,
    CaptureError,
    CommandResult,
    PathInfo,
    ProbeError,
    ProcessInfo,
    load_capture,
    parse_capture,
    redact,
    save_captures,
)
from ascend_env.facts.installed import parse_version_info
from ascend_env.facts.model import Facts, VersionRange, any_range_contains
from ascend_env.facts.npu_smi import parse_npu_smi_info, worst_health
from ascend_env.remote import probe

DATA = Path(__file__).resolve().parents[1] / "data"
JSON_INPUT = ".input.json"


def _samples() -> list[tuple[str, Path]]:
    found = []
    for folder in sorted(p for p in DATA.iterdir() if p.is_dir()):
        for item in sorted(folder.iterdir()):
            if item.suffix == ".txt" or item.name.endswith(JSON_INPUT):
                found.append((folder.name, item))
    return found


def _stem(path: Path) -> str:
    return path.name[: -len(JSON_INPUT)] if path.name.endswith(JSON_INPUT) else path.stem


def _read_input(path: Path) -> Any:
    return json.loads(path.read_text()) if path.name.endswith(JSON_INPUT) else path.read_text()


def _sample(parser: str, name: str) -> str:
    text: str = (DATA / parser / f"{name}.txt").read_text()
    return text


SAMPLES = _samples()


# -- 1. the data files --------------------------------------------------------------------------

@pytest.mark.parametrize(("parser", "sample"), SAMPLES,
                         ids=[f"{p}/{_stem(s)}" for p, s in SAMPLES])
def test_sample_parses_to_expected(parser: str, sample: Path) -> None:
    """Adding a sample is adding files: <name>.txt, <name>.expected.json, <name>.source."""
    assert parser in PARSERS, f"tests/data/{parser}/ names no parser in facts.build.PARSERS"
    expected_file = sample.with_name(_stem(sample) + ".expected.json")
    source_file = sample.with_name(_stem(sample) + ".source")
    assert source_file.is_file() and source_file.read_text().strip(), "a sample names its source"
    result = to_jsonable_python(PARSERS[parser](_read_input(sample)))
    assert result == json.loads(expected_file.read_text())


def test_parser_names_are_unique_across_areas() -> None:
    assert len(PARSERS) == sum(len(area.PARSERS) for area in AREAS)


def test_every_parser_has_a_sample() -> None:
    covered = {parser for parser, _ in SAMPLES}
    assert set(PARSERS) <= covered, f"parsers without a sample: {set(PARSERS) - covered}"


def test_samples_cover_the_reference() -> None:
    """One pair per real sample of ascend-facts.md §3-§4 (the count the report states)."""
    by_parser: dict[str, int] = {}
    for parser, _ in SAMPLES:
        by_parser[parser] = by_parser.get(parser, 0) + 1
    assert by_parser["npu_smi_info"] >= 3  # §4.1 910B, §4.2 910ProB, §4.3 310P
    assert by_parser["npu_smi_list"] >= 2  # Total Count and Card Count forms
    assert by_parser["version_info"] >= 4  # three drivers and a firmware
    assert len(SAMPLES) >= 40


# -- 2. odd input never raises --------------------------------------------------------------------

GARBAGE = [
    "",
    "\n\n\n",
    "garbage \x00\xff with no structure at all",
    "=====\n:::::\n|||||\n[[[]]]\n",
    "| 0 | | |\n| x |\n+---+\n",
    "NPU ID : abc\nChip Count : -1\n : continuation without key\n",
    "Version=\ncompatible_version_fw=[7.0.0\n",
    "{not json",
    "[1, 2, 3]",
    '{"distributions": [[null, null], "x", [1]]}',
    "\t" * 50 + ":" * 50,
]


@pytest.mark.parametrize("parser", sorted(PARSERS))
@pytest.mark.parametrize("text", GARBAGE, ids=range(len(GARBAGE)))
def test_parsers_survive_garbage(parser: str, text: str) -> None:
    if parser == "pci_sysfs":
        PARSERS[parser]({"0000:zz": {"vendor": text, "device": text, "numa_node": text}})
    else:
        PARSERS[parser](text)


@pytest.mark.parametrize(("parser", "sample"), [s for s in SAMPLES if s[1].suffix == ".txt"],
                         ids=[f"{p}/{_stem(s)}" for p, s in SAMPLES if s.suffix == ".txt"])
def test_parsers_survive_truncation(parser: str, sample: Path) -> None:
    """A capture cut off mid-way (timeout, size cap) still parses, at every cut."""
    text = sample.read_text()
    for cut in range(0, len(text), max(1, len(text) // 40)):
        PARSERS[parser](text[:cut])


@settings(database=None, max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("|+-=: \t\n0123456789abNAOK./[],xX")), max_size=400))
def test_text_parsers_fuzz(text: str) -> None:
    for name, parse in PARSERS.items():
        if name != "pci_sysfs":
            parse(text)


def test_garbage_npu_smi_info_is_a_note_not_a_crash() -> None:
    info = parse_npu_smi_info("| zz  | what |\n| 1 910B3 | OK | 1 2 |\nstray text\n")
    assert info.chips == []
    assert any("unparsed" in n or "second line" in n for n in info.notes)


# -- 3. specific readings ---------------------------------------------------------------------

def test_310p_dual_chip_repeats_npu_id() -> None:
    info = parse_npu_smi_info(_sample("npu_smi_info", "310p3-25.2.0-duo"))
    assert [(c.npu_id, c.chip_id, c.device_id) for c in info.chips] == [(2, 0, 0), (2, 1, 1)]
    assert {c.bus_id for c in info.chips} == {"0000:01:00.0"}
    assert all(c.power_w is None and c.hbm_total_mb is None for c in info.chips)


def test_process_rows_and_idle_lines() -> None:
    info = parse_npu_smi_info(_sample("npu_smi_info", "sim-910b-busy"))
    assert info.idle_npus == [0]
    assert [(p.npu_id, p.pid, p.name) for p in info.processes] == [(1, 436712, "python3")]


def test_na_bus_id_is_none() -> None:
    text = _sample("npu_smi_info", "910b3-23.0.7").replace("0000:C1:00.0", "NA          ")
    info = parse_npu_smi_info(text)
    assert info.chips[0].bus_id is None
    assert info.chips[1].bus_id == "0000:c2:00.0"


def test_driver_firmware_range() -> None:
    driver = parse_version_info(_sample("version_info", "driver-24.1.rc3"))
    assert any_range_contains(driver.compatible_firmware, "7.1.0.11.220") is True
    assert any_range_contains(driver.compatible_firmware, "7.5.99.1.220") is True
    assert any_range_contains(driver.compatible_firmware, "7.6.0.1.220") is False
    old = parse_version_info(_sample("version_info", "driver-23.0.7"))
    assert any_range_contains(old.compatible_firmware, "7.3.0.1.231") is False


def test_trailing_dot_reads_as_prefix() -> None:
    firmware = parse_version_info(_sample("version_info", "firmware-7.1.0.11.220"))
    ranges = firmware.compatible_driver
    assert any_range_contains(ranges, "23.0.rc3") is True
    assert any_range_contains(ranges, "23.0.rc3.1") is True
    assert any_range_contains(ranges, "23.0.0") is True
    assert any_range_contains(ranges, "24.1.rc1") is False
    # inner release codes are not versions: the answer is "cannot tell", never a guess
    assert VersionRange(low="V100R001C13", high="V100R001C15").contains("8.0.0") is None


def test_worst_health() -> None:
    assert worst_health(["OK", "Alarm", "Warning"]) == "Alarm"
    assert worst_health(["OK", "UNKNOWN"]) == "UNKNOWN"
    assert worst_health([None, ""]) is None


# -- 4. capture -> facts ----------------------------------------------------------------------

BASE = "/usr/local/Ascend"


def _ok(stdout: str, argv: list[str] | None = None) -> CommandResult:
    return CommandResult(argv=argv or [], rc=0, stdout=stdout)


def _host_910b() -> Capture:
    """A provisioned Atlas 800T A2 (two NPUs shown) with CANN 8.0.0, from the samples."""
    toolkit = _sample("install_info", "toolkit-8.0.0-aarch64")
    npus = [0, 1]
    commands = {
        probe.UNAME_M: _ok("aarch64\n"),
        probe.UNAME_R: _ok("5.10.0-182.0.0.95.oe2203sp3.aarch64\n"),
        probe.NPU_SMI_INFO: _ok(_sample("npu_smi_info", "sim-910b-busy")),
        probe.NPU_SMI_LIST: _ok("        Total Count                    : 2\n\n"
                                "        NPU ID                         : 0\n"
                                "        Chip Count                     : 1\n\n"
                                "        NPU ID                         : 1\n"
                                "        Chip Count                     : 1\n"),
        probe.LDCONFIG: _ok("3 libs found in cache `/etc/ld.so.cache'\n"
                            f"\tlibascend_hal.so (libc6,AArch64) => {BASE}/driver/lib64/driver/"
                            "libascend_hal.so\n"),
        probe.ID: _ok("uid=1001(alice) gid=1001(alice) groups=1001(alice),1000(HwHiAiUser)\n"),
        probe.GETENT_PASSWD.format(user="HwHiAiUser"): _ok(
            "HwHiAiUser:x:1000:1000::/home/HwHiAiUser:/bin/bash\n"),
        probe.GETENT_GROUP.format(group="HwHiAiUser"): _ok("HwHiAiUser:x:1000:alice\n"),
        probe.GETENFORCE: _ok("Permissive\n"),
        probe.LOGIN_ENV: _ok("PATH=/usr/bin\0OMP_NUM_THREADS=8\0"),
        probe.LSCPU: _ok(_sample("lscpu", "debian-12-2cpu")),
        probe.FRAMEWORK_PYTHON: _ok(json.dumps({
            "executable": "/opt/venv/bin/python", "version": "3.10.14", "distributions": [
                ["torch", "2.1.0+cpu", ""], ["torch_npu", "2.1.0.post8", ""],
                ["numpy", "1.26.4", ""]]})),
    }
    for npu in npus:
        board = _sample("npu_smi_board", "910-mc-logs")
        commands[probe.NPU_SMI_BOARD.format(npu=npu)] = _ok(
            board.replace("NPU ID                         : 0", f"NPU ID{' ' * 25}: {npu}"))
        commands[probe.NPU_SMI_HEALTH.format(npu=npu)] = _ok(
            _sample("npu_smi_health", "npu-level-200i-a2"))
        health = "chip-alarm-tabs" if npu == 1 else "chip-ok"
        commands[probe.NPU_SMI_CHIP_HEALTH.format(npu=npu, chip=0)] = _ok(
            _sample("npu_smi_health", health))
    node = PathInfo(type="char", mode="0660", owner="HwHiAiUser", group="HwHiAiUser", uid=1000,
                    gid=1000, rdev="236:10")
    return Capture(
        host="node-1.example.com", captured_at="2026-01-01T00:00:00+00:00",
        options={"install_path": BASE, "install_paths": [BASE]},
        files={
            "/etc/os-release": 'ID="openEuler"\nVERSION_ID="22.03"\n',
            "/etc/ascend_install.info": _sample("ascend_install_info", "llm-action"),
            f"{BASE}/driver/version.info": _sample("version_info", "driver-24.1.rc3"),
            f"{BASE}/firmware/version.info": _sample("version_info", "firmware-7.1.0.11.220"),
            f"{BASE}/ascend-toolkit/latest/aarch64-linux/ascend_toolkit_install.info": toolkit,
            f"{BASE}/ascend-toolkit/latest/version.cfg": _sample("version_cfg", "toolkit-8.0.0"),
            f"{BASE}/ascend-toolkit/set_env.sh": _sample("set_env",
                                                         "sim-toolkit-8.0.0-old-layout"),
            f"{BASE}/nnal/atb/latest/atb/version.info": _sample("atb_version_info",
                                                                "atb-8.0.0-excerpt"),
            "/sys/bus/pci/devices/0000:c1:00.0/vendor": "0x19e5\n",
            "/sys/bus/pci/devices/0000:c1:00.0/device": "0xd802\n",
            "/sys/bus/pci/devices/0000:c1:00.0/subsystem_vendor": "0x19e5\n",
            "/sys/bus/pci/devices/0000:c1:00.0/subsystem_device": "0x3000\n",
            "/sys/bus/pci/devices/0000:c1:00.0/class": "0x120000\n",
            "/sys/bus/pci/devices/0000:c1:00.0/numa_node": "0\n",
            "/proc/modules": _sample("proc_modules", "driver-loaded-constructed"),
            "/sys/devices/system/node/node0/cpulist": "0-1\n",
        },
        commands=commands,
        env={"ASCEND_HOME_PATH": f"{BASE}/ascend-toolkit/latest",
             "LD_LIBRARY_PATH": f"{BASE}/ascend-toolkit/latest/lib64", "OMP_NUM_THREADS": "4"},
        paths={
            f"{BASE}/driver/tools/upgrade-tool": PathInfo(type="file", mode="0755"),
            f"{BASE}/ascend-toolkit/latest": PathInfo(type="link", target="8.0.0",
                                                      resolved=f"{BASE}/ascend-toolkit/8.0.0"),
            f"{BASE}/ascend-toolkit/set_env.sh": PathInfo(type="file"),
            "/dev/davinci0": node, "/dev/davinci1": node, "/dev/davinci_manager": node,
            "/dev/hisi_hdc": PathInfo(type="missing"),
        },
        listings={
            f"{BASE}/ascend-toolkit": ["8.0.0", "8.1.RC1", "latest", "set_env.sh"],
            f"{BASE}/ascend-toolkit/latest/lib64": ["libascendcl.so", "libhccl.so"],
            f"{BASE}/driver/lib64/driver": ["libascend_hal.so"],
            f"{BASE}/ascend-toolkit/latest/opp/built-in/op_impl/ai_core/tbe/kernel":
                ["ascend910b"],
        },
    )


def _host_310p() -> Capture:
    """An Atlas 300I Duo in a container: 8.5.0 new layout, no firmware, sysfs topology and a
    cgroup quota, SELinux enforcing, MindSpore; the branches _host_910b does not take."""
    toolkit = _sample("install_info", "toolkit-8.5.0-new-layout")
    pci = "/sys/bus/pci/devices/0000:01:00.0"
    commands = {
        probe.UNAME_M: _ok("x86_64\n"),
        probe.NPU_SMI_INFO: _ok(_sample("npu_smi_info", "310p3-25.2.0-duo")),
        probe.NPU_SMI_LIST: _ok("        Card Count                     : 2\n\n"
                                "        NPU ID                         : 2\n"
                                "        Chip Count                     : 2\n\n"
                                "        NPU ID                         : 5\n"
                                "        Chip Count                     : 1\n"),
        probe.NPU_SMI_BOARD.format(npu=2): _ok(_sample("npu_smi_board", "200i-dk-a2-excerpt")),
        probe.NPU_SMI_BOARD.format(npu=5): _ok(_sample("npu_smi_board", "invalid-card-id")),
        probe.NPU_SMI_HEALTH.format(npu=2): _ok(_sample("npu_smi_health", "npu-level-200i-a2")),
        probe.NPU_SMI_CHIP_HEALTH.format(npu=2, chip=1): _ok(
            _sample("npu_smi_health", "chip-alarm-tabs")),
        probe.LDCONFIG: _ok(_sample("ldconfig", "debian-12-head")),
        probe.LSMOD: _ok(_sample("lsmod", "sim-driver")),
        probe.ID: CommandResult(rc=127, stderr="id: not found"),
        "id alice": _ok("uid=1001(alice) gid=1001(alice) groups=1001(alice)\n"),
        probe.GETENT_PASSWD.format(user="HwHiAiUser"): _ok(_sample("getent_passwd", "root")),
        probe.GETENT_GROUP.format(group="HwHiAiUser"): _ok(_sample("getent_group", "root")),
        probe.SESTATUS: _ok(_sample("sestatus", "enforcing-constructed")),
        probe.LS_LABELS: _ok(_sample("ls_labels", "ascend-paths-constructed")),
        probe.FRAMEWORK_PYTHON: _ok(json.dumps({
            "executable": "/usr/bin/python3", "version": 3.9, "prefix": "/usr",
            "distributions": [["MindSpore_Ascend", "2.4.0", ""], ["numpy", "1.26.4", ""],
                              ["numpy", "2.0.0", ""]]})),
    }
    return Capture(
        host="infer-7", captured_at="2026-02-03T04:05:06+00:00",
        options={"install_paths": [BASE, "/opt/ascend"]},
        process=ProcessInfo(uid=0, euid=0, gid=0, groups=[0], user="root", cpu_count=4,
                            affinity=[0, 1, 2, 3]),
        files={
            "/usr/lib/os-release": _sample("os_release", "debian-12"),
            "/proc/sys/kernel/osrelease": "5.15.0-91-generic\n",
            f"{BASE}/driver/version.info": _sample("version_info", "driver-23.0.7"),
            f"{BASE}/cann/x86_64-linux/ascend_toolkit_install.info": toolkit,
            f"{BASE}/cann/version.cfg": "toolkit_installed_version=[7.8.0.1.212:8.5.0]\n"
                                       "opp_kernel_installed_version=[7.8.0.1.212:8.5.0]\n"
                                       "bogus line\n",
            f"{BASE}/cann/set_env.sh": _sample("set_env", "sim-toolkit-8.5.0-new-layout"),
            f"{BASE}/nnal/atb/set_env.sh": _sample("set_env", "sim-nnal"),
            f"{BASE}/nnae/latest/ascend_nnae_install.info": _sample("install_info",
                                                                    "nnae-8.0.RC3"),
            "/etc/profile.d/ascend-env-threads.sh": "export OMP_NUM_THREADS=2\n",
            **{f"{pci}/{attr}": value for attr, value in {
                "vendor": "0x19e5\n", "device": "0xd500\n", "subsystem_vendor": "0x0200\n",
                "subsystem_device": "0x0110\n", "class": "0x120000\n",
                "numa_node": "-1\n"}.items()},
            **{f"/sys/devices/system/cpu/cpu{n}/topology/core_id": f"{n // 2}\n"
               for n in range(4)},
            **{f"/sys/devices/system/cpu/cpu{n}/topology/physical_package_id": f"{n // 2}\n"
               for n in range(4)},
            "/sys/devices/system/node/node0/cpulist": "0-1\n",
            "/sys/devices/system/node/node1/cpulist": "2-3\n",
            "/sys/devices/system/cpu/online": "0-3\n",
            "/sys/fs/cgroup/cpu.max": "150000 100000\n",
            "/sys/fs/selinux/enforce": "1\n",
            "/etc/selinux/config": "SELINUX=enforcing\nSELINUXTYPE=targeted\n",
            "/proc/self/mountinfo": "1 0 0:1 / /usr/local/Ascend/driver ro - ext4 /dev/sda1\n"
                                    "2 0 0:2 / /dev/davinci0 rw - devtmpfs udev\n",
        },
        commands=commands,
        env={"ASCEND_TOOLKIT_HOME": f"{BASE}/cann", "PYTHONPATH": "/opt/py::/opt/py2",
             "PATH": "/usr/local/bin:/usr/bin", "container": "oci", "KMP_AFFINITY": "x",
             "ASCEND_OPP_PATH": f"{BASE}/cann/opp", "LD_LIBRARY_PATH": "relative:/usr/lib/"},
        paths={
            f"{BASE}/cann": PathInfo(type="link", target="cann-8.5.0",
                                     resolved=f"{BASE}/cann-8.5.0"),
            f"{BASE}/cann/set_env.sh": PathInfo(type="file", label="system_u:object_r:bin_t:s0"),
            f"{pci}/driver": PathInfo(type="link", target="../../../bus/pci/drivers/drv_pcie"),
            "/.dockerenv": PathInfo(type="file"),
            "/dev/davinci0": PathInfo(type="char", mode="0666", uid=0, gid=0, owner="root",
                                      group="root", rdev="236:0"),
            "/dev/davinci10": PathInfo(type="char", mode="0660"),
            "/dev/davinci2": PathInfo(type="char", mode="0660"),
            "/dev/davinci_manager": PathInfo(type="missing"),
            "/dev/devmm_svm": PathInfo(type="char", mode="0660", label="device_t"),
        },
        listings={
            BASE: ["cann", "cann-8.5.0", "cann-8.3.RC1", "driver", "nnal"],
            f"{BASE}/cann/opp/built-in/op_impl/ai_core/tbe/kernel": ["ascend310p"],
            "/usr/lib": ["libascend_hal.so.1", "libhccl.so"],
            "/sys/module": ["drv_devdrv", "ext4", "ascend_queue"],
        },
        errors=[ProbeError(where="/etc/ascend_install.info", error="Permission denied")],
    )


def _host_garbage() -> Capture:
    junk = "\x00garbage | : = [ ]"
    return Capture(
        files={f"{BASE}/driver/version.info": "Version=not-a-version\n",
               f"{BASE}/ascend-toolkit/latest/version.cfg": "junk_line\n" + junk,
               "/etc/os-release": junk, "/proc/modules": junk},
        commands={probe.NPU_SMI_INFO: _ok(junk), probe.NPU_SMI_LIST: _ok(junk),
                  probe.FRAMEWORK_PYTHON: _ok(junk), probe.LSCPU: _ok(junk)},
        paths={"/dev/davinci0": PathInfo(type="file")})


# Facts JSON as the pydantic models dumped it (model_dump(mode="json", by_alias=True)), written
# before the models became dataclasses; to_json() must keep producing it byte for byte.
GOLDEN = Path(__file__).resolve().parent / "golden"
GOLDEN_HOSTS: dict[str, Callable[[], Capture]] = {
    "host-910b": _host_910b, "host-310p": _host_310p, "empty": Capture, "garbage": _host_garbage}


def _facts_text(capture: Capture) -> str:
    return json.dumps(facts_from_capture(capture).to_json(), indent=1, ensure_ascii=False) + "\n"


@pytest.mark.parametrize("name", sorted(GOLDEN_HOSTS))
def test_facts_json_is_unchanged(name: str) -> None:
    assert _facts_text(GOLDEN_HOSTS[name]()) == (GOLDEN / f"facts-{name}.json").read_text()


def test_facts_of_a_provisioned_host() -> None:
    facts = facts_from_capture(_host_910b())
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
    facts = facts_from_capture(_host_garbage())
    assert facts.driver is not None and facts.driver.version is None
    assert facts.driver.complete is False
    assert any("not-a-version" in n for n in facts.notes)
    assert any("distributions" in n for n in facts.notes)


def test_npu_smi_failure_is_reported_not_raised() -> None:
    capture = Capture(commands={
        probe.NPU_SMI_INFO: CommandResult(rc=255, stdout=_sample("npu_smi_info",
                                                                 "dcmi-init-failed-8001")),
        probe.NPU_SMI_LIST: CommandResult(rc=127, stderr="npu-smi: command not found")})
    facts = facts_from_capture(capture)
    assert facts.npu_smi.available is True
    assert facts.npu_smi.error == "dcmi module initialize failed. ret is -8001"
    assert facts.devices == []


def test_new_layout_cann() -> None:
    arch_info = _sample("install_info", "toolkit-8.5.0-new-layout")
    capture = Capture(
        options={"install_paths": [BASE]},
        commands={probe.UNAME_M: _ok("aarch64\n")},
        files={f"{BASE}/cann/aarch64-linux/ascend_toolkit_install.info": arch_info,
               f"{BASE}/cann/version.cfg": "toolkit_installed_version=[7.8.0.1.212:8.5.0]\n"
                                           "opp_kernel_installed_version=[7.8.0.1.212:8.5.0]\n"},
        paths={f"{BASE}/cann": PathInfo(type="link", target="cann-8.5.0",
                                        resolved=f"{BASE}/cann-8.5.0"),
               f"{BASE}/cann/set_env.sh": PathInfo(type="file")},
        listings={BASE: ["ascend-toolkit", "cann", "cann-8.5.0", "driver"]})
    cann = facts_from_capture(capture).cann
    assert cann is not None
    assert (cann.layout, str(cann.version), cann.home) == ("new", "8.5.0", f"{BASE}/cann-8.5.0")
    assert cann.packages["ops"].version == "8.5.0"
    assert cann.installed_versions == ["8.5.0"]
    assert cann.set_env == f"{BASE}/cann/set_env.sh"


def test_cann_without_latest_link_reads_the_newest_folder() -> None:
    info = _sample("install_info", "toolkit-8.1.RC1-aarch64")
    capture = Capture(
        options={"install_paths": [BASE]},
        files={f"{BASE}/ascend-toolkit/8.1.RC1/aarch64-linux/ascend_toolkit_install.info": info},
        listings={f"{BASE}/ascend-toolkit": ["8.0.0", "8.1.RC1", "set_env.sh"]})
    facts = facts_from_capture(capture)
    assert facts.cann is not None and str(facts.cann.version) == "8.1.RC1"
    assert facts.cann.installed_versions == ["8.0.0", "8.1.RC1"]
    assert any("no ascend-toolkit/latest" in n for n in facts.notes)


def test_pci_card_from_lspci_only_and_chip_family() -> None:
    capture = Capture(commands={probe.LSPCI: _ok(_sample("lspci", "910b-domain-numeric"))})
    facts = facts_from_capture(capture)
    assert [c.address for c in facts.pci] == ["0000:c1:00.0", "0000:c2:00.0"]
    assert facts.chip == "910b"


# -- 5. the capture document --------------------------------------------------------------------

def test_load_one_or_many(tmp_path: Path) -> None:
    one = _host_910b()
    single = save_captures(tmp_path / "one.json", [one])
    fleet = save_captures(tmp_path / "fleet.json.gz", [one, Capture(host="node-2")])
    assert load_capture(single)[0] == one
    loaded = load_capture(fleet)
    assert [c.host for c in loaded] == ["node-1.example.com", "node-2"]
    assert gzip.decompress(fleet.read_bytes()).startswith(b"[")


def test_unknown_keys_survive(tmp_path: Path) -> None:
    doc = Capture().to_json() | {"from_a_newer_probe": {"x": 1}}
    capture = parse_capture(json.dumps(doc))
    path = save_captures(tmp_path / "c.json", [capture])
    assert json.loads(path.read_text())["from_a_newer_probe"] == {"x": 1}


@pytest.mark.parametrize(("content", "message"), [
    ("not json", "not JSON"), ("[]", "empty list"), ('{"schema": "other"}', "schema is"),
    ('[{"schema": "ascend-env/capture/v1", "commands": {"x": {"rc": "no"}}}]', "commands.x.rc"),
    ("42", "expected a capture object"),
])
def test_bad_capture_files(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(CaptureError, match=message):
        load_capture(path)


def test_missing_capture_file(tmp_path: Path) -> None:
    with pytest.raises(CaptureError, match="cannot read capture"):
        load_capture(tmp_path / "absent.json")


def test_redaction() -> None:
    host = _host_910b()
    host.files["/etc/hccn.conf"] = "address_0=192.168.10.21\nnetmask_0=255.255.255.0\n"
    host.commands[probe.NPU_SMI_LIST] = _ok(_sample("npu_smi_list", "card-count-200i-a2")
                                            .replace("Serial Number                  : NA",
                                                     "Serial Number                  : 102A7Q"))
    host.env["HCCL_IF_IP"] = "192.168.10.21"
    host.env["MS_SCHED_HOST"] = "node-1.example.com"
    other = Capture(host="node-2", env={"HCCL_IF_IP": "192.168.10.21"})
    first, second = redact([host, other])
    text = json.dumps(first.to_json())
    for secret in ("192.168.10.21", "102A7Q", "node-1"):
        assert secret not in text
    assert "255.255.255.0" in text  # a netmask identifies nobody
    assert "7.1.0.11.220" in text and "Version: 25.5.0" in text  # versions are not addresses
    assert "0000:c1:00.0" in text.lower()  # PCI bus ids are not IPv6 addresses
    assert first.env["HCCL_IF_IP"] == second.env["HCCL_IF_IP"]  # consistent across the fleet
    assert first.host != second.host and first.host.startswith("<host-")
    facts = facts_from_capture(first)  # a redacted capture still reads the same
    assert str(facts.driver.version if facts.driver else None) == "24.1.rc3"
    assert len(facts.devices) == 2
