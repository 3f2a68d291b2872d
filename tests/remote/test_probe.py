"""probe.py runs on the target: on this machine (no Ascend), on a fake tree with --root, under
the oldest Pythons found here, with a fake npu-smi, and with nothing but the standard library."""

from __future__ import annotations

import ast
import grp
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ascend_env.core.resources import remote_source
from ascend_env.facts import accounts, system
from ascend_env.facts.assemble import facts_from_capture
from ascend_env.facts.capture import Capture, parse_capture
from ascend_env.remote import probe, probe_io

# What a target runs: probe_io's source, then probe's (remote_source).
SOURCE = remote_source("probe")
PROBE = Path(probe.__file__).resolve()
DATA = Path(__file__).resolve().parents[1] / "data"
# What the probe before the standard-library rewrite recorded on make_tree's two layouts
# (--no-commands): the files read, each path's type, the listings and the filters.
EXPECTED_TREE = Path(__file__).with_name("probe_fixture_tree.expected.json")
BASE = "/usr/local/Ascend"
ARCH = os.uname().machine


def run_probe(*args: str, python: str = sys.executable, env: dict[str, str] | None = None
              ) -> Capture:
    result = subprocess.run([python, "-c", SOURCE, *args], capture_output=True, text=True,
                            timeout=120, env=env, check=False)
    assert result.returncode == 0, result.stderr
    return parse_capture(result.stdout, where=f"probe under {python}")


def sample(parser: str, name: str) -> str:
    return (DATA / parser / f"{name}.txt").read_text()


def write(root: Path, path: str, text: str, mode: int = 0o644) -> Path:
    target = root / path.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    target.chmod(mode)
    return target


def make_tree(root: Path, layout: str = "old") -> Path:
    """A provisioned Ascend host as files: driver, firmware, CANN, nnal, /dev, sysfs, /proc."""
    write(root, "/etc/os-release", sample("os_release", "debian-12"))
    write(root, "/etc/ascend_install.info", sample("ascend_install_info", "llm-action"))
    write(root, f"{BASE}/driver/version.info", sample("version_info", "driver-23.0.7"))
    write(root, f"{BASE}/driver/tools/upgrade-tool", "#!/bin/sh\n", 0o755)
    write(root, f"{BASE}/driver/lib64/driver/libascend_hal.so", "")
    write(root, f"{BASE}/firmware/version.info", sample("version_info", "firmware-7.1.0.11.220"))
    if layout == "old":
        home = root / BASE.lstrip("/") / "ascend-toolkit" / "8.0.0"
        info = sample("install_info", "toolkit-8.0.0-aarch64").replace("aarch64", ARCH)
        write(root, f"{BASE}/ascend-toolkit/8.0.0/{ARCH}-linux/ascend_toolkit_install.info", info)
        write(root, f"{BASE}/ascend-toolkit/8.0.0/version.cfg", sample("version_cfg",
                                                                      "toolkit-8.0.0"))
        write(root, f"{BASE}/ascend-toolkit/set_env.sh",
              sample("set_env", "sim-toolkit-8.0.0-old-layout"))
        (home.parent / "latest").symlink_to("8.0.0")
    else:
        home = root / BASE.lstrip("/") / "cann-8.5.0"
        info = sample("install_info", "toolkit-8.5.0-new-layout").replace("aarch64", ARCH)
        write(root, f"{BASE}/cann-8.5.0/{ARCH}-linux/ascend_toolkit_install.info", info)
        write(root, f"{BASE}/cann-8.5.0/version.cfg",
              "toolkit_installed_version=[7.8.0.1.212:8.5.0]\n"
              "opp_kernel_installed_version=[7.8.0.1.212:8.5.0]\n")
        write(root, f"{BASE}/cann-8.5.0/set_env.sh",
              sample("set_env", "sim-toolkit-8.5.0-new-layout"))
        (home.parent / "cann").symlink_to("cann-8.5.0")
        (home.parent / "ascend-toolkit").mkdir()
        (home.parent / "ascend-toolkit" / "latest").symlink_to("../cann-8.5.0")
    write(root, str(home.relative_to(root)) + "/lib64/libascendcl.so", "")
    (home / "opp/built-in/op_impl/ai_core/tbe/kernel/ascend910b").mkdir(parents=True)
    # An absolute link target must be read inside the root, not on this machine.
    write(root, f"{BASE}/nnal/atb/8.0.0/atb/version.info",
          sample("atb_version_info", "atb-8.0.0-excerpt"))
    (root / BASE.lstrip("/") / "nnal/atb/latest").symlink_to(f"{BASE}/nnal/atb/8.0.0")
    for name in ("davinci0", "davinci1", "davinci_manager", "devmm_svm", "hisi_hdc"):
        node = root / "dev" / name
        node.parent.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            os.mknod(node, 0o660 | stat.S_IFCHR, os.makedev(236, 1))
        else:
            node.write_text("")
        node.chmod(0o660)
    for addr, dev in (("0000:c1:00.0", "0xd802"), ("0000:c2:00.0", "0xd802"),
                      ("0000:00:1f.0", "0x1234")):
        vendor = "0x8086" if dev == "0x1234" else "0x19e5"
        pci = f"/sys/bus/pci/devices/{addr}"
        for attr, value in (("vendor", vendor), ("device", dev), ("subsystem_vendor", "0x19e5"),
                            ("subsystem_device", "0x3000"), ("class", "0x120000"),
                            ("numa_node", "1" if addr.startswith("0000:c2") else "0")):
            write(root, f"{pci}/{attr}", value + "\n")
    for cpu in range(4):
        topo = f"/sys/devices/system/cpu/cpu{cpu}/topology"
        write(root, f"{topo}/core_id", f"{cpu % 2}\n")
        write(root, f"{topo}/physical_package_id", f"{cpu // 2}\n")
    write(root, "/sys/devices/system/cpu/online", "0-3\n")
    write(root, "/sys/devices/system/node/node0/cpulist", "0-1\n")
    write(root, "/sys/devices/system/node/node1/cpulist", "2-3\n")
    write(root, "/proc/modules", sample("proc_modules", "driver-loaded-constructed"))
    return root


# -- on this machine ------------------------------------------------------------------------

def test_probe_on_this_machine() -> None:
    """No Ascend here: a valid capture where everything Ascend is absent, not an error."""
    started = time.monotonic()
    capture = run_probe()
    assert time.monotonic() - started < 30
    assert capture.schema_ == probe.SCHEMA and capture.host and capture.captured_at
    for key in (probe.NPU_SMI_INFO, probe.LDCONFIG, probe.FRAMEWORK_PYTHON):
        assert key in capture.commands
    if shutil.which("npu-smi") is None:
        assert capture.commands[probe.NPU_SMI_INFO].rc == 127
    # os.uname() and the probe's own ids stand for `uname` and `id`: no command for them.
    assert not {system.UNAME_M, system.UNAME_R, accounts.ID} & set(capture.commands)
    assert capture.uname["machine"] == ARCH
    facts = facts_from_capture(capture)
    assert facts.arch == ARCH
    assert facts.os is not None and facts.os.kernel == os.uname().release
    invoking = facts.users.invoking
    assert invoking is not None and invoking.uid == os.geteuid()
    assert invoking.group == grp.getgrgid(os.getgid()).gr_name
    assert invoking.groups == {grp.getgrgid(g).gr_name: g
                               for g in dict.fromkeys([os.getgid(), *sorted(os.getgroups())])}
    assert invoking == accounts.parse_id(subprocess.run(
        ["id"], capture_output=True, text=True, check=True).stdout)
    assert facts.os is not None and facts.os.id
    if not Path(BASE).exists():
        assert facts.driver is None and facts.firmware is None and facts.cann is None
    if shutil.which("npu-smi") is None:
        assert facts.npu_smi.available is False and facts.devices == []
    assert facts.frameworks.python is not None
    assert facts.frameworks.python.executable == sys.executable
    assert facts.cpu.logical_cpus and facts.cpu.logical_cpus >= 1
    if shutil.which("bash"):
        assert facts.env.login_vars is not None and "PATH" in facts.env.login_vars
        assert all(probe._env_wanted(name) for name in facts.env.login_vars)


def test_output_option(tmp_path: Path) -> None:
    out = tmp_path / "capture.json"
    result = subprocess.run([sys.executable, "-c", SOURCE, "--no-commands", "--root",
                             str(tmp_path), "-o", str(out)], capture_output=True, text=True,
                            check=True)
    assert result.stdout == ""
    assert parse_capture(out.read_text()).commands == {}


# -- a fake tree ----------------------------------------------------------------------------

@pytest.mark.parametrize("layout", ["old", "new"])
def test_probe_reads_a_fake_tree(tmp_path: Path, layout: str) -> None:
    root = make_tree(tmp_path / "root", layout)
    capture = run_probe("--root", str(root), "--no-commands")
    assert capture.commands == {}
    assert capture.root == str(root)
    assert all(not p.startswith(str(root)) for p in capture.files)  # logical paths
    facts = facts_from_capture(capture)
    assert facts.driver is not None and str(facts.driver.version) == "23.0.7"
    assert facts.driver.complete is True and facts.driver.install_path == BASE
    assert facts.firmware is not None and str(facts.firmware.version) == "7.1.0.11.220"
    assert facts.install_record is not None
    assert facts.install_record.user_name == "HwHiAiUser"
    cann = facts.cann
    assert cann is not None and cann.layout == layout and cann.arch == ARCH
    if layout == "old":
        assert str(cann.version) == "8.0.0" and cann.home == f"{BASE}/ascend-toolkit/8.0.0"
        assert set(cann.packages) == {"toolkit", "kernels", "nnal"}
        assert cann.set_env == f"{BASE}/ascend-toolkit/set_env.sh"
        assert cann.installed_versions == ["8.0.0"]
    else:
        assert str(cann.version) == "8.5.0" and cann.home == f"{BASE}/cann-8.5.0"
        assert set(cann.packages) == {"toolkit", "ops", "nnal"}
        assert cann.set_env == f"{BASE}/cann/set_env.sh"  # through the cann -> cann-8.5.0 link
        assert cann.installed_versions == ["8.5.0"]
    assert cann.packages["nnal"].version == "8.0.0"  # through the absolute `latest` link
    assert cann.kernel_socs == ["ascend910b"]
    assert cann.packages["toolkit"].path and cann.packages["toolkit"].path.endswith(
        f"{ARCH}-linux")
    nodes = {n.path: n for n in facts.device_nodes}
    assert set(nodes) == {"/dev/davinci0", "/dev/davinci1", "/dev/davinci_manager",
                          "/dev/devmm_svm", "/dev/hisi_hdc"}
    assert {n.mode for n in nodes.values()} == {"0660"}
    assert nodes["/dev/davinci0"].type == ("char" if os.geteuid() == 0 else "file")
    assert [(c.address, c.chip, c.numa_node) for c in facts.pci] == [
        ("0000:c1:00.0", "910b", 0), ("0000:c2:00.0", "910b", 1)]  # the Intel one is not kept
    assert facts.chip == "910b"
    assert facts.cpu.source == "sysfs"
    assert (facts.cpu.logical_cpus, facts.cpu.physical_cores, facts.cpu.sockets) == (4, 4, 2)
    assert facts.cpu.numa_nodes == {0: [0, 1], 1: [2, 3]}
    assert facts.modules.driver_loaded is True
    assert facts.os is not None and facts.os.id == "debian"
    lib = facts.libraries["libascend_hal.so"]
    assert lib.on_disk == [f"{BASE}/driver/lib64/driver/libascend_hal.so"]
    assert lib.resolvable is False  # on disk, but neither in the cache nor on the search path
    assert facts.env.set_env_scripts  # the set_env.sh text was captured and read


def test_lspci_and_ls_labels_run_only_where_sysfs_needs_them(tmp_path: Path) -> None:
    """lspci runs only when sysfs shows no Huawei function (it reads the same files), and
    `ls -Zd` only where SELinux is on (else every label is "?")."""
    root = make_tree(tmp_path / "root")
    capture = run_probe("--root", str(root))
    assert probe.LSPCI not in capture.commands and probe.LS_LABELS not in capture.commands
    assert [c.address for c in facts_from_capture(capture).pci] == [
        "0000:c1:00.0", "0000:c2:00.0"]
    write(root, "/sys/fs/selinux/enforce", "1\n")
    assert probe.LS_LABELS in run_probe("--root", str(root)).commands
    empty = run_probe("--root", str(tmp_path / "empty"))
    assert probe.LSPCI in empty.commands  # no card in sysfs: lspci says whether it sees one


def test_probe_with_an_empty_root(tmp_path: Path) -> None:
    facts = facts_from_capture(run_probe("--root", str(tmp_path), "--no-commands"))
    assert facts.driver is None and facts.cann is None and facts.pci == []
    assert facts.device_nodes == [] and facts.modules.source is None


def test_unreadable_file_is_an_error_entry(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "root")
    looped = root / "etc/ascend_install.info"
    looped.unlink()
    looped.symlink_to(looped.name)  # ELOOP: unreadable even for root
    fifo = root / "etc/os-release"
    fifo.unlink()
    os.mkfifo(fifo)  # reading it would block the probe forever
    capture = run_probe("--root", str(root), "--no-commands")
    assert any(e.where == "/etc/ascend_install.info" for e in capture.errors)
    assert "/etc/os-release" not in capture.files
    facts = facts_from_capture(capture)
    assert any("/etc/ascend_install.info" in n for n in facts.notes)
    assert facts.driver is not None  # the rest of the host is still read


# -- npu-smi: ids from -l --------------------------------------------------------------------

@pytest.fixture
def fake_npu_smi(tmp_path: Path) -> Iterator[dict[str, str]]:
    """A PATH with an npu-smi that prints the 310P sample (NPU 2, chips 0 and 1)."""
    bin_dir = tmp_path / "bin"
    out = tmp_path / "outputs"
    out.mkdir()
    # Chip 1 of the real 310P sample made to report the alarm its health page carries.
    table = sample("npu_smi_info", "310p3-25.2.0-duo")
    first = table.index("| OK              |") + 1
    second = table.index("| OK              |", first)
    (out / "info").write_text(table[:second] + "| Alarm           |" + table[second + 19:])
    (out / "info-all-ok").write_text(table)
    (out / "list").write_text("        Total Count                    : 1\n\n"
                              "        NPU ID                         : 2\n"
                              "        Chip Count                     : 2\n")
    (out / "board").write_text(sample("npu_smi_board", "910-mc-logs").replace(": 0\n", ": 2\n", 1))
    (out / "health").write_text(sample("npu_smi_health", "npu-level-200i-a2"))
    (out / "chip").write_text(sample("npu_smi_health", "chip-alarm-tabs"))
    script = f"""#!/bin/sh
echo "$*" >> {tmp_path}/calls
case "$*" in
  "info") cat {out}/${{NPU_SMI_TABLE:-info}} ;;
  "info -l") cat {out}/list ;;
  "info -t board -i 2") cat {out}/board ;;
  "info -t health -i 2") cat {out}/health ;;
  "info -t health -i 2 -c 1") cat {out}/chip ;;
  "info -t health -i 2 -c 0") printf '        Health Status                  : OK\\n' ;;
  *) echo "Invalid card id."; echo "Error parameter of -i"; exit 255 ;;
esac
"""
    write(bin_dir, "/npu-smi", script, 0o755)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ.get('PATH', '')}")
    yield env


def test_npu_ids_come_from_the_list(tmp_path: Path, fake_npu_smi: dict[str, str]) -> None:
    capture = run_probe("--root", str(tmp_path / "empty"), env=fake_npu_smi)
    calls = (tmp_path / "calls").read_text().splitlines()
    assert sorted(calls) == sorted(["info", "info -l", "info -t board -i 2",
                                    "info -t health -i 2", "info -t health -i 2 -c 0",
                                    "info -t health -i 2 -c 1"])
    assert "npu-smi info -t board -i 0" not in capture.commands
    facts = facts_from_capture(capture)
    assert facts.npu_smi.listed_ids == [2]
    assert [(d.npu_id, d.chip_id, d.chip) for d in facts.devices] == [
        (2, 0, "310p"), (2, 1, "310p")]
    assert [d.health_status for d in facts.devices] == ["OK", "Alarm"]
    assert facts.devices[1].error_codes == ["A4025021", "8C03A000", "8C084E00"]
    assert facts.devices[0].compatibility == "OK"


def test_health_pages_are_read_only_when_the_table_shows_trouble(
        tmp_path: Path, fake_npu_smi: dict[str, str]) -> None:
    run_probe("--root", str(tmp_path / "empty"), env={**fake_npu_smi,
                                                       "NPU_SMI_TABLE": "info-all-ok"})
    calls = (tmp_path / "calls").read_text().splitlines()
    assert sorted(calls) == ["info", "info -l", "info -t board -i 2"]


# -- commands: missing, timing out, failing ---------------------------------------------------

def run(argv: list[str], timeout: float = 5.0) -> dict[str, Any]:
    return probe_io.run_command(argv, dict(os.environ), timeout)


def test_missing_command_is_recorded() -> None:
    record = run(["ascend-env-no-such-tool", "--x"])
    assert record["rc"] == 127 and "not found" in record["stderr"]


def test_command_that_cannot_start_is_rc_126(tmp_path: Path) -> None:
    script = write(tmp_path, "/not-a-program", "\x7fELF garbage", 0o755)
    record = run([str(script)])
    assert record["rc"] == 126 and "OSError" in record["stderr"]


def test_command_timeout_kills_the_tree() -> None:
    started = time.monotonic()
    record = run(["sh", "-c", "sleep 30 & sleep 30"], timeout=0.5)
    assert record["rc"] == 124 and "timed out" in record["stderr"]
    assert time.monotonic() - started < 10


def test_command_timeout_with_a_grandchild_holding_the_pipes() -> None:
    # setsid puts the grandchild outside the killed group; it keeps stdout open for 30 s.
    started = time.monotonic()
    record = run(["sh", "-c", "echo before; setsid sleep 30 & sleep 30"], timeout=0.5)
    assert record["rc"] == 124 and record["stdout"] == "before\n"
    assert "timed out after 0.5s" in record["stderr"]
    assert time.monotonic() - started < 10


def test_a_grandchild_holding_the_pipes_after_a_clean_exit_costs_at_most_the_timeout() -> None:
    """The command itself ended (rc 0), its grandchild keeps stdout open: the record keeps
    the output read and says it timed out, and the probe moves on."""
    started = time.monotonic()
    record = run(["sh", "-c", "echo done; setsid sleep 30 &"], timeout=0.5)
    assert record["stdout"] == "done\n" and record["rc"] == 124
    assert time.monotonic() - started < 10


def test_long_outputs_are_read_whole_and_capped() -> None:
    # More than a pipe's 64 KB while other commands run: read as it comes, nothing lost.
    runner = probe_io.Commands(timeout=30, jobs=2)
    runner.start([("big", [sys.executable, "-c", "print('x' * 300000)"], None),
                  ("huge", [sys.executable, "-c", "print('y' * (3 * 1024 * 1024))"], None),
                  ("both", [sys.executable, "-c", "import sys; sys.stderr.write('e' * 200000);"
                            " print('o' * 200000)"], None),
                  ("small", ["sh", "-c", "echo small"], None)])
    runner.close()
    assert runner.records["big"]["stdout"] == "x" * 300000 + "\n"
    assert runner.records["huge"]["stdout"] == "y" * probe_io.MAX_OUTPUT_BYTES
    assert runner.records["both"]["stdout"] == "o" * 200000 + "\n"
    assert runner.records["both"]["stderr"] == "e" * 200000
    assert runner.records["small"]["stdout"] == "small\n"
    assert all(record["rc"] == 0 for record in runner.records.values())


def test_commands_run_at_once_up_to_jobs() -> None:
    """Independent commands overlap: four one-second sleeps in two slots take about two."""
    runner = probe_io.Commands(timeout=30, jobs=2)
    started = time.monotonic()
    runner.start([(f"s{i}", ["sleep", "1"], None) for i in range(4)])
    runner.wait(["s0"])
    assert set(runner.records) == {"s0"}  # wait takes only what it is asked for
    runner.close()
    assert set(runner.records) == {"s0", "s1", "s2", "s3"}
    assert 1.9 < time.monotonic() - started < 3.9


def test_disabled_commands_run_nothing() -> None:
    runner = probe_io.Commands(timeout=5, enabled=False)
    runner.start([("echo", ["echo", "x"], None)])
    runner.close()
    assert runner.records == {}


def test_commands_get_no_descriptor_the_probe_inherited() -> None:
    """As subprocess's close_fds does: a command left running must not hold a pipe the
    probe's caller waits on."""
    read_end, write_end = os.pipe()
    script = (f"import os, sys; sys.path.insert(0, {str(PROBE.parent)!r}); import probe_io\n"
              "print(probe_io.run_command(['ls', '/proc/self/fd'], dict(os.environ), 5)"
              "['stdout'].split())")
    try:
        done = subprocess.run([sys.executable, "-c", script], pass_fds=(write_end,),
                              capture_output=True, text=True, check=True)
    finally:
        os.close(read_end)
        os.close(write_end)
    assert ast.literal_eval(done.stdout) == ["0", "1", "2", "3"]  # 3: ls's own listing


def test_commands_get_the_signals_python_ignores_back() -> None:
    """Python ignores SIGPIPE and SIGXFSZ; a command gets them at their defaults (a login
    shell's `... | head` must end quietly), as subprocess's restore_signals does."""
    status = run(["cat", "/proc/self/status"])["stdout"]
    ignored = int(next(line for line in status.splitlines()
                       if line.startswith("SigIgn:")).split()[1], 16)
    assert not ignored & (1 << (signal.SIGPIPE - 1) | 1 << (signal.SIGXFSZ - 1))


def test_commands_run_in_a_session_of_their_own_with_no_stdin() -> None:
    record = run([sys.executable, "-c", "import os, sys; print(os.getsid(0) == os.getpid(),"
                  " sys.stdin.read() == '')"])
    assert record["stdout"] == "True True\n"


def test_failing_command_keeps_its_output() -> None:
    record = run(["sh", "-c", "echo out; echo err >&2; exit 3"])
    assert (record["rc"], record["stdout"], record["stderr"]) == (3, "out\n", "err\n")


def test_ldconfig_and_login_env_keep_only_what_may_leave_the_host() -> None:
    runner = probe_io.Commands(timeout=5, keep=probe._keep)
    runner._record(probe.LDCONFIG, {"stdout": "2 libs found in cache\n"
                                              "\tlibascendcl.so (libc6,AArch64) => /a\n"
                                              "\tlibssl.so.3 (libc6,AArch64) => /b\n"})
    runner._record(probe.LOGIN_ENV, {"stdout": "PATH=/bin\0AWS_SECRET=x\0HCCL_IF=eth0\0"})
    assert runner.records[probe.LDCONFIG]["stdout"] == (
        "2 libs found in cache\n\tlibascendcl.so (libc6,AArch64) => /a\n")
    assert runner.records[probe.LOGIN_ENV]["stdout"] == "PATH=/bin\0HCCL_IF=eth0\0"
    assert set(runner.filters) == {"command:" + probe.LDCONFIG, "command:" + probe.LOGIN_ENV}


def test_npu_id_reading() -> None:
    assert probe._npu_ids(sample("npu_smi_list", "total-count-16")) == [("0", 1), ("1", 1)]
    assert probe._npu_ids(sample("npu_smi_list", "a3-total-count-1")) == [("0", 2)]
    assert probe._npu_ids("garbage : x\nNPU ID : \n") == []


# -- the standard library only, Python 3.8+ ---------------------------------------------------

def test_probe_imports_only_the_standard_library() -> None:
    tree = ast.parse(SOURCE)
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    assert names - {"__future__"} <= sys.stdlib_module_names, names - sys.stdlib_module_names


def test_probe_uses_the_standard_library_not_copies_of_it() -> None:
    """json, glob, subprocess and argparse do what the probe needs; it carries no copy."""
    tree = ast.parse(SOURCE)
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    assert {"json", "glob", "subprocess", "argparse", "selectors"} <= imported
    attributes = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    assert not {"posix_spawn", "encode_basestring_ascii", "marshal"} & (attributes | imported)


def test_probe_loads_nothing_outside_the_standard_library(tmp_path: Path) -> None:
    # -S: site-packages .pth hooks (sitecustomize, _distutils_hack) are this machine's, not
    # the probe's.
    result = subprocess.run([sys.executable, "-S", "-X", "importtime", "-c", SOURCE,
                             "--no-commands",
                             "--root", str(tmp_path)], capture_output=True, text=True, check=True)
    modules = {m.group(1).strip().split(".")[0]
               for m in re.finditer(r"^import time:.*\|\s*(\S+)\s*$", result.stderr, re.M)}
    assert modules and modules <= sys.stdlib_module_names | {"encodings"}, (
        modules - sys.stdlib_module_names)


def _old_pythons() -> list[str]:
    """One interpreter per version 3.8-3.12: pyenv builds and python3.X on PATH."""
    found: dict[str, str] = {}
    candidates = [str(p) for p in sorted(Path.home().glob(".pyenv/versions/3.*/bin/python3"))]
    candidates += [w for v in range(8, 13) if (w := shutil.which(f"python3.{v}"))]
    for exe in candidates:
        out = subprocess.run([exe, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             capture_output=True, text=True, check=False).stdout.strip()
        if out in {f"3.{v}" for v in range(8, 13)} and out not in found:
            found[out] = exe
    return [found[v] for v in sorted(found, key=lambda v: int(v.split(".")[1]))]


def python_version(exe: str) -> str:
    return subprocess.run([exe, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                          capture_output=True, text=True, check=True).stdout.strip()


OLD_PYTHONS = _old_pythons()


@pytest.mark.skipif(not OLD_PYTHONS, reason="no other Python 3.8-3.12 interpreter here")
@pytest.mark.parametrize("python", OLD_PYTHONS, ids=[python_version(p) for p in OLD_PYTHONS])
def test_probe_under_older_pythons(tmp_path: Path, python: str) -> None:
    root = make_tree(tmp_path / "root")
    facts = facts_from_capture(run_probe("--root", str(root), "--no-commands", python=python))
    assert facts.cann is not None and str(facts.cann.version) == "8.0.0"
    assert len(facts.device_nodes) == 5
    full = run_probe("--python", python, python=python)
    assert full.process.python is not None
    assert ".".join(full.process.python.split(".")[:2]) == python_version(python)
    assert facts_from_capture(full).frameworks.python is not None




def test_distributions_are_what_importlib_metadata_finds(tmp_path: Path) -> None:
    """The snippet reads metadata headers itself (a framework environment may predate
    importlib.metadata); it must list what importlib.metadata lists: dist-info and egg-info
    folders, egg-info files, folded headers, a broken entry skipped."""
    site = tmp_path / "site"
    (site / "torch-2.9.0.dist-info").mkdir(parents=True)
    (site / "torch-2.9.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: torch\nSummary: Tensors and\n  dynamic neural networks\n"
        "Version: 2.9.0\n\nName: not-a-header\n")
    (site / "decorator.egg-info").mkdir()
    (site / "decorator.egg-info" / "PKG-INFO").write_text("Name: decorator\nVersion: 5.1.1\n")
    (site / "pathlib2-2.3.7.egg-info").write_text("Metadata-Version: 1.1\nName: pathlib2\n"
                                                  "Version: 2.3.7\n")
    (site / "broken-1.0.dist-info").mkdir()
    env = {**os.environ, "PYTHONPATH": str(site)}
    listed = subprocess.run([sys.executable, "-c", probe.DISTRIBUTIONS_SNIPPET], env=env,
                            capture_output=True, text=True, check=True)
    reference = subprocess.run([sys.executable, "-c", (
        "import json; from importlib import metadata; print(json.dumps([[d.metadata['Name'], "
        "d.version, str(d._path)] for d in metadata.distributions() "
        "if d.metadata['Name']]))")], env=env, capture_output=True, text=True, check=True)
    ours = sorted(map(tuple, json.loads(listed.stdout)["distributions"]))
    assert ours == sorted(map(tuple, json.loads(reference.stdout)))
    assert [d for d in ours if d[2].startswith(str(site))] == [
        ("decorator", "5.1.1", str(site / "decorator.egg-info")),
        ("pathlib2", "2.3.7", str(site / "pathlib2-2.3.7.egg-info")),
        ("torch", "2.9.0", str(site / "torch-2.9.0.dist-info"))]


def test_the_framework_python_lists_its_distributions() -> None:
    """The record of the interpreter --python names: the snippet run there, torch_npu's
    autoload off; none without commands."""
    code = SOURCE
    here = subprocess.run([sys.executable, "-c", code, "--python", sys.executable,
                           "--no-commands"], capture_output=True, text=True, check=True)
    assert probe.FRAMEWORK_PYTHON not in json.loads(here.stdout)["commands"]
    done = subprocess.run([sys.executable, "-c", code, "--python", sys.executable],
                          capture_output=True, text=True, check=True)
    record = json.loads(done.stdout)["commands"][probe.FRAMEWORK_PYTHON]
    started = subprocess.run([sys.executable, "-c", probe.DISTRIBUTIONS_SNIPPET],
                             capture_output=True, text=True, check=True)
    assert record["rc"] == 0 and record["argv"] == [sys.executable, "-c",
                                                    probe.DISTRIBUTIONS_SNIPPET]
    assert json.loads(record["stdout"]) == json.loads(started.stdout)
    other = subprocess.run([sys.executable, "-c", code, "--python", "/usr/bin/python3"],
                           capture_output=True, text=True, check=True)
    assert json.loads(json.loads(other.stdout)["commands"][probe.FRAMEWORK_PYTHON]["stdout"]
                      )["executable"] == "/usr/bin/python3"
    jobs = {key: env for key, _, env in probe.first_jobs(probe_io.Tree("/"), [BASE], "py", [],
                                                         {"A": "1"})}
    assert jobs[probe.FRAMEWORK_PYTHON] == {"A": "1", "TORCH_DEVICE_BACKEND_AUTOLOAD": "0"}


# -- options (argparse) -----------------------------------------------------------------------

def test_options() -> None:
    args = probe.parse_args(["--install-path=/opt/Ascend", "--user", "a", "--user=b", "-o", "f",
                             "--no-commands", "--timeout", "2.5", "--jobs=3"])
    assert args.install_path == "/opt/Ascend" and args.user == ["a", "b"]
    assert args.output == "f" and args.no_commands is True
    assert args.timeout == 2.5 and args.jobs == 3
    defaults = probe.parse_args([])
    assert defaults.python == sys.executable and defaults.root == "/"
    assert defaults.install_path == probe.DEFAULT_INSTALL_PATH and defaults.user == []
    assert (defaults.timeout, defaults.jobs) == (probe.DEFAULT_TIMEOUT_S, probe_io.DEFAULT_JOBS)
    assert defaults.output is None and defaults.no_commands is False


@pytest.mark.parametrize(("words", "message"), [
    (["--bogus"], "unrecognized arguments: --bogus"),
    (["--timeout", "soon"], "argument --timeout: invalid float value: 'soon'"),
    (["--root"], "argument --root: expected one argument"),
    (["--no-commands=yes"], "argument --no-commands: ignored explicit argument 'yes'"),
    (["--install"], "unrecognized arguments: --install"),  # no abbreviations
])
def test_bad_options_exit_2_with_the_usage(words: list[str], message: str) -> None:
    # `python3 -c SOURCE` as on a target: the usage still names probe.py.
    done = subprocess.run([sys.executable, "-I", "-S", "-c", SOURCE, *words],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("usage: probe.py")
    assert done.stderr.endswith("probe.py: error: " + message + "\n")


def test_help() -> None:
    done = subprocess.run([sys.executable, "-I", "-S", "-c", SOURCE, "--help"],
                          capture_output=True, text=True, check=True)
    assert "--install-path P" in done.stdout and "--user USER" in done.stdout
    assert done.stdout.startswith("usage: probe.py")


# -- paths and health words -------------------------------------------------------------------

def test_tree_glob_gives_logical_paths_under_any_root(tmp_path: Path) -> None:
    """Under a root whose own name holds glob characters; hidden names only by a leading
    dot, broken links listed, a plain path only where it exists."""
    root = make_tree(tmp_path / "ro[o]t*")
    write(root, "/dev/.davinci9", "")
    (root / "dev" / "davinci7").symlink_to("/nowhere")
    tree = probe_io.Tree(str(root))
    assert tree.glob("/dev/davinci[0-9]*") == ["/dev/davinci0", "/dev/davinci1", "/dev/davinci7"]
    assert tree.glob("/dev/*") == ["/dev/davinci0", "/dev/davinci1", "/dev/davinci7",
                                   "/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc"]
    assert tree.glob("/dev/.*") == ["/dev/.davinci9"]
    assert tree.glob(f"{BASE}/ascend-toolkit/*/*/ascend_*_install.info") == [
        f"{BASE}/ascend-toolkit/8.0.0/{ARCH}-linux/ascend_toolkit_install.info",
        f"{BASE}/ascend-toolkit/latest/{ARCH}-linux/ascend_toolkit_install.info"]
    assert tree.glob("/sys/bus/pci/devices/*/vendor") == [
        f"/sys/bus/pci/devices/{a}/vendor" for a in ("0000:00:1f.0", "0000:c1:00.0",
                                                      "0000:c2:00.0")]
    assert tree.glob(f"{BASE}/driver/version.info") == [f"{BASE}/driver/version.info"]
    assert tree.glob("/no/such/*") == [] and tree.glob("/no/such") == []
    assert tree.expand("/no/such") == ["/no/such"]  # read or stat, and recorded as absent
    capture = run_probe("--root", str(root), "--no-commands")
    assert capture.paths["/dev/davinci7"].type == "link"
    assert capture.paths["/dev/davinci7"].broken is True


def test_health_words() -> None:
    """A health word but OK, as a whole word in any case, makes a table unhealthy."""
    for text, unhealthy in (("| OK |", False), ("| Warning |", True), ("|ALARM|", True),
                            ("critical\n", True), ("Unknown2", False), ("Alarms", False),
                            ("no_alarm", False), ("(Alarm)", True), ("Health: UNKNOWN", True),
                            ("", False)):
        assert probe._unhealthy(text) is unhealthy, text


# -- the document -----------------------------------------------------------------------------

@pytest.mark.parametrize("layout", ["old", "new"])
def test_the_capture_records_what_it_always_did(tmp_path: Path, layout: str) -> None:
    """Same keys, same files read, same paths (with their types), listings and filters as
    the probe before the standard-library rewrite recorded on the same tree."""
    expected = json.loads(EXPECTED_TREE.read_text().replace("{arch}", ARCH))[layout]
    root = make_tree(tmp_path / "root", layout)
    done = subprocess.run([sys.executable, "-c", SOURCE, "--root", str(root), "--no-commands"],
                          capture_output=True, text=True, check=True)
    document = json.loads(done.stdout)
    assert sorted(document) == expected["document"]
    assert sorted(document["files"]) == expected["files"]
    assert {path: info["type"] for path, info in document["paths"].items()} == expected["paths"]
    assert document["listings"] == expected["listings"]
    assert document["filters"] == expected["filters"]
    assert document["schema"] == probe.SCHEMA and document["errors"] == []
    assert document["options"] == {"install_path": BASE, "install_paths": [BASE],
                                   "python": sys.executable, "commands": False,
                                   "network": True, "boards": True,
                                   "timeout_s": probe.DEFAULT_TIMEOUT_S}


def test_the_document_is_ascii_json_and_text_survives_it(tmp_path: Path) -> None:
    """Non-ASCII, control characters and bytes that are not UTF-8 in a file: the printed
    document is ASCII and the text reads back as it was (undecodable bytes replaced)."""
    tricky = 'quote " \\ tab\tnul\x00\x1f é 中文 \U0001f600\n'
    root = make_tree(tmp_path / "root")
    write(root, "/etc/hccn.conf", tricky)
    (root / "etc/selinux").mkdir()
    (root / "etc/selinux/config").write_bytes(b"SELINUX=\xff\xfe\n")
    done = subprocess.run([sys.executable, "-c", SOURCE, "--root", str(root), "--no-commands"],
                          capture_output=True, check=True)
    assert done.stdout.isascii() and done.stdout.endswith(b"}\n")
    files = json.loads(done.stdout)["files"]
    assert files["/etc/hccn.conf"] == tricky
    assert files["/etc/selinux/config"] == "SELINUX=\ufffd\ufffd\n"
    assert parse_capture(done.stdout.decode()).files["/etc/hccn.conf"] == tricky
