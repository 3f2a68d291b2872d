"""collect.py without hosts: the ssh command line testinfra builds for a target."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ascend_env.collect import control_path, resolve_hosts


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
