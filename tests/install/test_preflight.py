"""preflight reads a host with the doctor's probe and facts: install and doctor agree on it.

The CANN trees here are files (as tests/remote/test_probe.py builds them); the probe runs for
real on them, and its capture goes to the playbooks' filters the way Ansible calls them and to
the doctor's facts.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from ascend_env.ansible.variables import Targets
from ascend_env.core.resources import remote_source, shipped_dir
from ascend_env.facts.assemble import facts_from_capture
from ascend_env.facts.capture import parse_capture
from ascend_env.facts.model import Facts
from ascend_env.install.actions import HostReading, decide
from ascend_env.remote import probe
from ascend_env.targets.collect import ProbeOptions, capture_local

PLAYBOOKS = shipped_dir("playbooks")
DATA = Path(__file__).resolve().parents[1] / "data"
BASE = "/usr/local/Ascend"
ARCH = os.uname().machine
USER = "HwHiAiUser"
# What the sample files below hold; the spec asks for the same.
TARGET = Targets(driver="23.0.7", firmware="7.1.0.11.220", cann="8.5.0",
                 packages=["toolkit", "ops", "nnal"], min_driver=None)


def filters() -> dict[str, Callable[..., Any]]:
    """The playbooks' filter plugin, loaded from its file as Ansible loads it."""
    path = PLAYBOOKS / "filter_plugins" / "ascend_env_filters.py"
    space: dict[str, Any] = {"__name__": "ascend_env_filters", "__file__": str(path)}
    exec(compile(path.read_text(), str(path), "exec"), space)
    found: dict[str, Callable[..., Any]] = space["FilterModule"]().filters()
    return found


def write(root: Path, path: str, text: str) -> None:
    target = root / path.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)


def sample(parser: str, name: str) -> str:
    return (DATA / parser / f"{name}.txt").read_text()


def cann_tree(base: Path, *, linked: bool) -> None:
    """Driver, firmware, CANN 8.5.0 toolkit and ops, NNAL under `base`; `linked=False` is a
    toolkit installer stopped before it made `cann` and `ascend-toolkit/latest`."""
    write(base, "driver/version.info", sample("version_info", "driver-23.0.7"))
    write(base, "driver/tools/upgrade-tool", "#!/bin/sh\n")
    write(base, "firmware/version.info", sample("version_info", "firmware-7.1.0.11.220"))
    info = sample("install_info", "toolkit-8.5.0-new-layout").replace("aarch64", ARCH)
    write(base, f"cann-8.5.0/{ARCH}-linux/ascend_toolkit_install.info", info)
    write(base, "cann-8.5.0/version.cfg", "toolkit_installed_version=[7.8.0.1.212:8.5.0]\n"
                                          "opp_kernel_installed_version=[7.8.0.1.212:8.5.0]\n")
    write(base, "nnal/atb/8.5.0/atb/version.info",
          f"Ascend-cann-atb : 8.5.0\nAscend-cann-atb Version : 8.5.0.B100\nPlatform : {ARCH}\n")
    (base / "nnal/atb/latest").symlink_to("8.5.0")
    (base / "ascend-toolkit").mkdir()
    if linked:
        write(base, "cann-8.5.0/set_env.sh", "export ASCEND_HOME_PATH=/usr/local/Ascend/cann\n")
        (base / "cann").symlink_to("cann-8.5.0")
        (base / "ascend-toolkit/latest").symlink_to("../cann-8.5.0")


def preflight_capture(root: Path) -> str:
    """The probe as preflight runs it (`python3 -c SOURCE`), kept inside `root`."""
    done = subprocess.run(
        [sys.executable, "-c", filters()["ascend_remote_source"]("probe"), "--install-path",
         BASE, "--user", USER, "--root", str(root), "--no-commands"],
        capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def doctor_versions(facts: Facts) -> dict[str, str | None]:
    cann = facts.cann
    ops = (cann.packages.get("ops") or cann.packages.get("kernels")) if cann else None
    nnal = cann.packages.get("nnal") if cann else None
    return {"driver": facts.driver.version_raw if facts.driver else None,
            "firmware": facts.firmware.version_raw if facts.firmware else None,
            "toolkit": cann.version_raw if cann else None,
            "ops": ops.version if ops else None, "nnal": nnal.version if nnal else None}


@pytest.mark.parametrize("linked", [False, True], ids=["interrupted", "complete"])
def test_install_and_doctor_read_the_same_versions(tmp_path: Path, linked: bool) -> None:
    cann_tree(tmp_path / BASE.lstrip("/"), linked=linked)
    stdout = preflight_capture(tmp_path)
    plugin = filters()
    host = plugin["ascend_host"](stdout, BASE, USER, USER)
    facts = facts_from_capture(parse_capture(stdout))
    installed = host["installed"]
    assert doctor_versions(facts) == {
        "driver": "23.0.7", "firmware": "7.1.0.11.220", "toolkit": "8.5.0", "ops": "8.5.0",
        "nnal": "8.5.0"}
    assert {key: installed[key] for key in doctor_versions(facts)} == doctor_versions(facts)
    assert facts.cann is not None
    assert installed["toolkit_home"] == facts.cann.home == f"{BASE}/cann-8.5.0"
    assert installed["toolkit_linked"] is linked
    assert host["arch"] == facts.arch == ARCH
    # As Ansible hands them back: preflight_host (with the boot id and reboot marker beside
    # read_host's answer) and ascend_targets, plain data from the extra vars.
    actions = plugin["ascend_actions"]({**host, "boot_id": "b", "reboot_marker": None},
                                       TARGET.model_dump(mode="json"), False)
    assert actions["errors"] == []
    assert (actions["driver"], actions["firmware"]) == ("none", "none")
    if linked:
        assert (actions["toolkit"], actions["ops"], actions["nnal"]) == ("none",) * 3
        assert actions["notes"] == []
    else:
        # The same versions, but a toolkit without its links is installed again (and the
        # ops and NNAL that must match it): its installer makes the links last.
        assert (actions["toolkit"], actions["ops"], actions["nnal"]) == ("install",) * 3
        assert len(actions["notes"]) == 1
        assert "8.5.0" in actions["notes"][0] and "link" in actions["notes"][0]


def host_of(stdout: str, install_path: str = BASE) -> HostReading:
    """The filter's answer (plain data for Ansible), read back into its model."""
    return HostReading.model_validate(filters()["ascend_host"](stdout, install_path, USER,
                                                               USER))


def test_a_newer_toolkit_is_not_downgraded_whatever_its_links(tmp_path: Path) -> None:
    cann_tree(tmp_path / BASE.lstrip("/"), linked=True)
    host = host_of(preflight_capture(tmp_path))
    actions = decide(host, TARGET.model_copy(update={"cann": "8.3.RC1", "driver": "23.0.6"}))
    assert actions.toolkit == "none" and actions.driver == "none"
    assert any("refusing a downgrade" in error for error in actions.errors)
    assert any("8.5.0 is installed" in error and "8.3.RC1" in error
               for error in actions.errors)


def test_a_driver_without_its_upgrade_tool_is_installed_again(tmp_path: Path) -> None:
    base = tmp_path / BASE.lstrip("/")
    cann_tree(base, linked=True)
    (base / "driver/tools/upgrade-tool").unlink()
    stdout = preflight_capture(tmp_path)
    facts = facts_from_capture(parse_capture(stdout))
    assert facts.driver is not None and not facts.driver.complete  # the doctor's reading
    actions = decide(host_of(stdout), TARGET)
    assert actions.driver == "full"
    assert any("23.0.7 is installed incompletely" in note for note in actions.notes)
    # The firmware is there and the driver is not (any more): driver first, as on a new host.
    assert actions.firmware == "none" and not actions.firmware_first


def test_cann_outside_the_install_path_is_not_the_specs(tmp_path: Path) -> None:
    cann_tree(tmp_path / BASE.lstrip("/"), linked=True)
    host = host_of(preflight_capture(tmp_path), "/opt/Ascend")
    assert host.installed.toolkit is None
    assert host.installed.cann_elsewhere == BASE
    actions = decide(host, TARGET.model_copy(update={"driver": None, "firmware": None}))
    assert actions.toolkit == "install"
    assert any(BASE in note for note in actions.notes)


def test_the_probe_preflight_sends_is_the_doctors() -> None:
    plugin = filters()
    assert plugin["ascend_remote_source"]("probe") == remote_source("probe")
    assert Path(probe.__file__).read_text() in remote_source("probe")
    for name in ("../../etc/passwd", "probe_io"):  # probe_io is part of the probe, no program
        with pytest.raises(ValueError, match="no remote program"):
            plugin["ascend_remote_source"](name)


def test_reading_captured_files_and_df_arguments() -> None:
    plugin = filters()
    files = {"/proc/boot_id": {"text": "\nabc-1\n", "mode": "0444", "owner": "root",
                               "group": "root"}}
    assert plugin["ascend_first_line"](files, "/proc/boot_id") == "abc-1"
    assert plugin["ascend_first_line"](files, "/var/lib/marker") is None
    assert plugin["ascend_file_current"](files["/proc/boot_id"], "\nabc-1\n", "0444")
    assert not plugin["ascend_file_current"](files["/proc/boot_id"], "abc-1\n", "0444")
    assert plugin["ascend_path_and_parents"]("/usr/local/Ascend/") == [
        "/usr/local/Ascend", "/usr/local", "/usr", "/"]


def test_preflight_runs_every_command_without_a_shell_and_in_check_mode() -> None:
    tasks = [task for name in ("main.yml", "to_install.yml")
             for task in yaml.safe_load((PLAYBOOKS / "roles/preflight/tasks" / name).read_text())]
    commands = [task for task in tasks if "ansible.builtin.command" in task]
    assert len(commands) >= 2
    assert not [task for task in tasks if "ansible.builtin.shell" in task]
    for task in commands:
        assert "argv" in task["ansible.builtin.command"], task["name"]
        assert task["changed_when"] is False, task["name"]
        assert task["check_mode"] is False, task["name"]
    argv = commands[0]["ansible.builtin.command"]["argv"]
    assert "ascend_remote_source" in (argv if isinstance(argv, str) else " ".join(argv))


@pytest.mark.slow
def test_preflight_role_on_this_machine_reads_what_the_doctor_reads(tmp_path: Path) -> None:
    """The role itself (ansible-playbook, check mode, this machine, an install path in
    tmp_path holding an interrupted CANN), against the doctor's own local capture."""
    base = tmp_path / "Ascend"
    base.mkdir()
    cann_tree(base, linked=False)
    out = tmp_path / "preflight.json"
    # Beside the play, as beside site.yml: the defaults every role reads.
    shutil.copytree(PLAYBOOKS / "group_vars", tmp_path / "group_vars")
    play = tmp_path / "play.yml"
    play.write_text(yaml.safe_dump([{
        "name": "preflight only", "hosts": "all", "gather_facts": False,
        "roles": ["preflight"],
        "post_tasks": [{"name": "Keep what preflight read", "delegate_to": "localhost",
                        "check_mode": False, "ansible.builtin.copy": {
                            "dest": str(out), "mode": "0600",
                            "content": "{{ {'host': preflight_host, "
                                       "'actions': preflight_actions} | to_json }}"}}]}]))
    extra = {"ascend_install_path": str(base), "ascend_arch": ARCH,
             "ascend_pci_device_id": "0xd802", "ascend_pci_expected": 0,
             "ascend_chip_family": "910B", "ascend_stage_dir": str(tmp_path / "stage"),
             "hdk_reboot_marker": str(tmp_path / "marker"),
             "ascend_targets": TARGET.model_copy(update={"driver": None, "firmware": None}
                                                 ).model_dump(mode="json")}
    # The filter plugins import ascend_env: this tree's, not an installed copy.
    env = {**os.environ, "PYTHONPATH": str(PLAYBOOKS.parent),
           "ANSIBLE_ROLES_PATH": str(PLAYBOOKS / "roles"),
           "ANSIBLE_FILTER_PLUGINS": str(PLAYBOOKS / "filter_plugins"),
           "ANSIBLE_NOCOLOR": "1", "ANSIBLE_PYTHON_INTERPRETER": sys.executable}
    ansible = Path(sys.executable).parent / "ansible-playbook"
    done = subprocess.run(
        [str(ansible), str(play), "-i", "localhost,", "-c", "local", "--check",
         "-e", json.dumps(extra)],
        capture_output=True, text=True, env=env, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    read = json.loads(out.read_text())
    doctor = capture_local(ProbeOptions(install_path=str(base)))
    assert doctor.capture is not None, doctor.error
    facts = facts_from_capture(doctor.capture)
    assert {key: read["host"]["installed"][key] for key in doctor_versions(facts)} == \
        doctor_versions(facts)
    assert read["host"]["installed"]["toolkit"] == "8.5.0"
    assert read["actions"]["toolkit"] == "install"
    assert read["host"]["boot_id"] == Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    assert read["host"]["reboot_marker"] is None
    # Check mode ran the probe, and changed nothing.
    assert not (tmp_path / "stage").exists()
