"""What the roles after preflight read from its capture instead of asking the host again.

The probe runs for real on a file tree (--root): the files it was asked to `--read`, the
managed files with their owner and mode, and the framework interpreter's distributions.
"""

from __future__ import annotations

import grp
import os
import pwd
import subprocess
import sys
from pathlib import Path

from ascend_env.core.resources import remote_source
from ascend_env.facts.assemble import facts_from_capture
from ascend_env.facts.capture import Capture, parse_capture
from ascend_env.install.captured import captured_extras, file_current, first_line
from ascend_env.remote import probe as probe_program

PROFILE = "/etc/profile.d/ascend-env.sh"
LD_CONF = "/etc/ld.so.conf.d/ascend-env.conf"
OWNER = pwd.getpwuid(os.geteuid()).pw_name
GROUP = grp.getgrgid(os.getegid()).gr_name


def probe(*args: str) -> Capture:
    done = subprocess.run([sys.executable, "-c", remote_source("probe"), *args],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return parse_capture(done.stdout)


def tree(root: Path) -> None:
    for path, text, mode in ((PROFILE, "# managed\n. /x/set_env.sh\n", 0o644),
                             (LD_CONF, "/usr/local/Ascend/driver/lib64\n", 0o600),
                             ("/boot_id", "\n  abc-1  \nsecond\n", 0o444)):
        target = root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        target.chmod(mode)


def test_read_files_and_managed_files_come_with_owner_and_mode(tmp_path: Path) -> None:
    tree(tmp_path)
    capture = probe("--root", str(tmp_path), "--no-commands", "--read", "/boot_id",
                    "--read", "/var/lib/ascend-env/reboot-required")
    files = captured_extras(capture)["files"]
    assert first_line(files, "/boot_id") == "abc-1"
    assert first_line(files, "/var/lib/ascend-env/reboot-required") is None  # not there
    profile = files[PROFILE]
    assert profile == {"text": "# managed\n. /x/set_env.sh\n", "mode": "0644",
                       "owner": OWNER, "group": GROUP}
    assert file_current(profile, "# managed\n. /x/set_env.sh\n", "0644", OWNER, GROUP)
    # Any difference is work for the role: text, mode, owner or group.
    assert not file_current(profile, "# managed\n", "0644", OWNER, GROUP)
    assert not file_current(profile, profile["text"], "0640", OWNER, GROUP)
    assert not file_current(profile, profile["text"], "0644", "nobody", GROUP)
    assert not file_current(files[LD_CONF], files[LD_CONF]["text"], "0644", OWNER, GROUP)
    assert not file_current(None, "", "0644")


def test_a_file_the_probe_cut_short_is_never_the_same(tmp_path: Path) -> None:
    tree(tmp_path)
    capture = probe("--root", str(tmp_path), "--no-commands")
    capture.filters[PROFILE] = "truncated to 1 bytes"
    assert PROFILE not in captured_extras(capture)["files"]


def test_the_venv_distributions_and_a_venv_not_there(tmp_path: Path) -> None:
    found = captured_extras(probe("--root", str(tmp_path), "--no-network",
                                  "--python", sys.executable))["distributions"]
    assert found is not None and found.get("pytest")
    missing = probe("--root", str(tmp_path), "--no-network",
                    "--python", str(tmp_path / "venv/bin/python"))
    assert captured_extras(missing)["distributions"] is None


def test_no_network_reads_no_port_and_says_so(tmp_path: Path) -> None:
    capture = probe("--root", str(tmp_path), "--no-network")
    assert capture.options["network"] is False
    assert not [key for key in capture.commands if key.startswith(("hccn_tool", "ip -o"))]
    assert facts_from_capture(capture).network.captured is False


def test_no_boards_asks_no_board_page() -> None:
    listing = {"rc": 0, "stdout": "NPU ID : 0\nChip Count : 1\nNPU ID : 1\nChip Count : 1\n"}
    table = {"rc": 0, "stdout": "| 0  910B3 | OK | 93.0 |\n"}
    records = {probe_program.NPU_SMI_LIST: listing, probe_program.NPU_SMI_INFO: table}
    assert [key for key, _, _ in probe_program.npu_jobs(records)] == [
        "npu-smi info -t board -i 0", "npu-smi info -t board -i 1"]
    assert probe_program.npu_jobs(records, boards=False) == []
    # An unhealthy table still gets its health pages: they say why.
    table["stdout"] = "| 0  910B3 | Alarm | 93.0 |\n"
    assert [key for key, _, _ in probe_program.npu_jobs(records, boards=False)] == [
        "npu-smi info -t health -i 0", "npu-smi info -t health -i 0 -c 0",
        "npu-smi info -t health -i 1", "npu-smi info -t health -i 1 -c 0"]
