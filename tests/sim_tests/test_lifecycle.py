"""up/down leave nothing behind; the command line fails with messages, not tracebacks."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.sim import fleet, sshd
from tests.sim.fixtures import require_sim
from tests.sim.layout import FleetPaths, state_dir

pytestmark = pytest.mark.sim


def _mounts_under(prefix: Path) -> list[str]:
    with Path("/proc/self/mountinfo").open() as fh:
        return [line.split()[4] for line in fh if line.split()[4].startswith(str(prefix))]


def _running(pid: int) -> bool:
    """Alive and not a zombie (an exited sshd waits for PID 1 to reap it)."""
    try:
        return "State:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


def test_up_down_leaves_no_process_or_mount() -> None:
    require_sim()
    name = f"pytest-{os.getpid()}-life"
    f = fleet.up(name=name, hosts=2, devices=2, root_mode="copy")
    fp = FleetPaths.for_fleet(name)
    pids = [h.pid for h in f.hosts]
    assert all(sshd.is_ours(p, fp.host(h.name)) for p, h in zip(pids, f.hosts, strict=True))
    assert _mounts_under(fp.base)  # /proc in each host
    # Hold a session open, as an Ansible ControlMaster would.
    holder = subprocess.Popen(["ssh", "-F", str(f.ssh_config), "sim1", "sleep 300"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            if any(sshd.processes_in(fp.host("sim1"))[1:]):
                break
            subprocess.run(["sleep", "0.05"], check=False)
        status = {r["host"]: r for r in fleet.status() if r["fleet"] == name}
        assert status["sim1"]["running"] and status["sim2"]["running"]
        fleet.down(name)
        holder.wait(timeout=10)
    finally:
        if holder.poll() is None:
            holder.kill()
    assert not _mounts_under(fp.base)
    assert not fp.base.exists()
    assert not [p for p in pids if _running(p)]
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmd = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            assert str(fp.base).encode() not in cmd


def test_down_is_idempotent() -> None:
    require_sim()
    assert fleet.down(f"pytest-{os.getpid()}-never") == []


@pytest.mark.parametrize(("argv", "message"), [
    (["fault", "sim1", "bogus", "--fleet", "pytest-none"], "fleet 'pytest-none' is not up"),
    (["up", "--chip", "999x", "--fleet", "pytest-none"], "unknown chip '999x'"),
    (["up", "--devices", "99", "--fleet", "pytest-none"], "--devices must be 1..8"),
    (["repo", "--cann", "eight", "--dest", "/tmp/x"], "is not of the vendor form"),
])
def test_cli_errors_are_messages(argv: list[str], message: str) -> None:
    require_sim()
    res = subprocess.run([sys.executable, "-m", "tests.sim", *argv], capture_output=True,
                         text=True, cwd=Path(__file__).parents[2], check=False)
    assert res.returncode != 0
    assert message in res.stderr
    assert "Traceback" not in res.stderr


def test_state_dir_is_root_755() -> None:
    require_sim()
    st = state_dir().stat()
    assert st.st_uid == 0
    assert st.st_mode & 0o777 == 0o755


def test_repo_with_profile_writes_spec(tmp_path: Path) -> None:
    require_sim()
    res = subprocess.run([sys.executable, "-m", "tests.sim", "repo", "--profile", "910b",
                          "--dest", str(tmp_path)], capture_output=True, text=True,
                         cwd=Path(__file__).parents[2], check=False)
    assert res.returncode == 0, res.stderr
    spec = (tmp_path / "spec.yaml").read_text()
    assert f"arch: {os.uname().machine}" in spec
    assert "family: debian" in spec
    assert (tmp_path / "catalogue-overlay.json").exists()
