"""collect.py without hosts: the ssh command line testinfra builds for a target, and the
shell line that carries the probe's source to it."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ascend_env.core.resources import remote_source
from ascend_env.facts.capture import parse_capture
from ascend_env.remote import probe, probe_io
from ascend_env.targets.collect import (
    MAX_ARGUMENT,
    ProbeOptions,
    capture_local,
    control_path,
    remote_command,
    resolve_hosts,
)
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


def test_what_collect_sends_is_the_probes_source_text() -> None:
    """Plain source an operator can read on the target, not bytecode or an encoded blob:
    probe_io's text, then probe's, each as in the package."""
    parts = [Path(str(m.__file__)).read_text(encoding="utf-8") for m in (probe_io, probe)]
    source = remote_source("probe")
    assert source == "\n".join(parts)
    options = ProbeOptions(install_path="/opt/Ascend", users=("alice",), timeout_s=5)
    words = shlex.split(remote_command(options))
    assert words[:4] == ["exec", "python3", "-c", source]
    assert words[4:] == ["--install-path", "/opt/Ascend", "--timeout", "5", "--user", "alice"]
    pinned = shlex.split(remote_command(ProbeOptions(python="/venv/bin/python")))
    assert pinned[3] == source and pinned[-2:] == ["--python", "/venv/bin/python"]
    for word in ("marshal", "zlib", "base64", "binascii", "exec("):
        assert word not in remote_command(options).replace(source, "")


def test_the_probe_line_fits_in_one_argument() -> None:
    """sshd runs the line as one argument of `sh -c`, which Linux caps (MAX_ARG_STRLEN)."""
    line = remote_command(ProbeOptions(venv="/srv/venv", users=("a", "b")))
    assert len(line.encode()) < MAX_ARGUMENT


@pytest.mark.parametrize("python", [sys.executable, *OLD_PYTHONS[:1]])
def test_the_probe_line_runs_here_and_under_another_python(python: str, tmp_path: Path) -> None:
    """The shell line as a target's shell runs it, with this machine's python3 replaced."""
    root = make_tree(tmp_path / "root")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(python)
    line = remote_command(ProbeOptions()) + f" --root {shlex.quote(str(root))} --no-commands"
    done = subprocess.run(["sh", "-c", line], capture_output=True, text=True, check=False,
                          env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"})
    assert done.returncode == 0, done.stderr
    capture = parse_capture(done.stdout, where=python)
    assert capture.root == str(root) and "/etc/os-release" in capture.files
    assert capture.process.executable is not None
    assert Path(capture.process.executable).resolve() == Path(python).resolve()


def test_the_venv_is_the_framework_python_where_it_exists(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    def pythons(options: ProbeOptions) -> tuple[str, str]:
        """The framework interpreter the probe reports, and its own."""
        line = remote_command(options) + f" --root {shlex.quote(str(tmp_path))} --no-commands"
        done = subprocess.run(["sh", "-c", line], capture_output=True, text=True, check=True)
        document = json.loads(done.stdout)
        return document["options"]["python"], document["process"]["executable"]

    assert pythons(ProbeOptions(venv=str(venv)))[0] == str(venv / "bin" / "python")
    framework, own = pythons(ProbeOptions(venv=str(tmp_path / "none")))
    assert framework == own  # no venv there: the probe's own python3


def test_capture_local_runs_the_probe_file(tmp_path: Path) -> None:
    captured = capture_local(ProbeOptions(install_path=str(tmp_path), timeout_s=5), name="here")
    assert captured.error is None and captured.capture is not None
    assert captured.capture.host == "here"
    assert captured.capture.options["install_path"] == str(tmp_path)


STUCK_HOST = """\
import json, sys, time
from ascend_env.targets import collect

class Answer:
    rc, stdout, stderr = 1, "", "boom"

class Stuck:
    def run(self, command):
        time.sleep(120)

class Quick:
    def run(self, command):
        return Answer()

collect.remote_command = lambda options: "true"
results = collect.capture_hosts([("stuck", Stuck()), ("quick", Quick())],
                                options=None, timeout_s=1.0)
print(json.dumps([[r.name, r.unreachable, r.error] for r in results]))
"""


def test_a_host_stuck_past_the_timeout_does_not_hold_the_process() -> None:
    # Well under the stuck host's sleep: the process must end once the capture gave up on it.
    done = subprocess.run([sys.executable, "-c", STUCK_HOST], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    stuck, quick = json.loads(done.stdout)
    assert stuck == ["stuck", True, "no answer within 1s"]
    assert quick[0] == "quick"
    assert "no answer" not in (quick[2] or "")
