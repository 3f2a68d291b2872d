"""collect.py without hosts: the ssh command line testinfra builds for a target, and the
program that carries the probe to it."""

from __future__ import annotations

import binascii
import importlib.util
import marshal
import re
import shutil
import subprocess
import sys
import tempfile
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from ascend_env.doctor.collect import control_path, probe_program, resolve_hosts
from ascend_env.facts.capture import parse_capture
from ascend_env.remote import probe
from tests.remote.test_probe import OLD_PYTHONS, make_tree


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A folder whose sockets fit in sun_path (pytest's tmp_path is often too deep)."""
    folder = Path(tempfile.mkdtemp(prefix="ae-", dir="/tmp"))
    yield folder
    shutil.rmtree(folder)


def _ssh_line(target: str, monkeypatch: pytest.MonkeyPatch, home: Path) -> str:
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("ANSIBLE_CONTROL_PATH_DIR", raising=False)
    host = resolve_hosts(target=target)[0][1]
    cmd, args = host.backend._build_ssh_command("true")
    line: str = " ".join(cmd) % tuple(args)
    return line


def test_ssh_targets_share_a_master_connection_in_ansibles_folder(
        monkeypatch: pytest.MonkeyPatch, short_tmp: Path) -> None:
    tmp_path = short_tmp
    line = _ssh_line("ssh://root@192.0.2.7", monkeypatch, tmp_path)
    folder = tmp_path / ".ansible" / "cp"
    assert f"-o ControlPath={folder}/ae-%C" in line
    assert "ControlMaster=auto" in line and "ControlPersist=" in line
    assert folder.is_dir() and folder.stat().st_mode & 0o077 == 0


def test_users_own_control_options_win(monkeypatch: pytest.MonkeyPatch,
                                       short_tmp: Path) -> None:
    tmp_path = short_tmp
    inventory = tmp_path / "hosts.ini"
    inventory.write_text("a ansible_host=192.0.2.7 ansible_connection=ssh "
                         "ansible_ssh_common_args='-o ControlMaster=no'\n"
                         f"b ansible_host=192.0.2.8 ansible_control_path_dir={tmp_path}/cp\n")
    monkeypatch.setenv("HOME", str(tmp_path))
    (a, host_a), (b, host_b) = resolve_hosts(inventory=inventory)
    assert (a, b) == ("a", "b")
    assert host_a.backend.controlpath is None
    assert host_b.backend.controlpath == f"{tmp_path}/cp/ae-%%C"


def test_no_control_path_where_the_socket_name_would_not_fit(short_tmp: Path) -> None:
    tmp_path = short_tmp
    assert control_path(str(tmp_path / ("x" * 80))) is None
    assert control_path(str(tmp_path / "cp")) == f"{tmp_path}/cp/ae-%C"


def test_the_probe_program_carries_its_compiled_code_and_its_source() -> None:
    """The compiled code for an interpreter of this one's bytecode, the source for others."""
    program = probe_program()
    blobs = re.findall(r'a2b_base64\("([^"]+)"\)', program)
    magic, compiled, source = (binascii.a2b_base64(b) for b in blobs)
    assert magic == importlib.util.MAGIC_NUMBER
    assert zlib.decompress(source) == Path(probe.__file__).read_bytes()
    code = marshal.loads(zlib.decompress(compiled))
    assert code.co_code == compile(zlib.decompress(source), probe.__file__, "exec").co_code
    assert "base64" not in program.split("\n")[0]  # base64 would import re for the probe


@pytest.mark.parametrize("python", [sys.executable, *OLD_PYTHONS[:1]])
def test_the_probe_program_runs_here_and_under_another_python(python: str,
                                                              tmp_path: Path) -> None:
    root = make_tree(tmp_path / "root")
    done = subprocess.run([python, "-c", probe_program(), "--root", str(root), "--no-commands"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    capture = parse_capture(done.stdout, where=python)
    assert capture.root == str(root) and "/etc/os-release" in capture.files
