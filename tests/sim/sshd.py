"""One sshd per simulated host: its own config, host key, loopback address and chroot."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

from tests.sim.layout import FleetPaths, HostPaths, SimError, check_chroot_path, secure_mkdir

SSHD = "/usr/sbin/sshd"
# sshd's compiled-in privilege-separation directory; Debian creates it at boot through
# systemd-tmpfiles, which does not run in containers or CI VMs.
PRIVSEP_DIR = Path("/run/sshd")


def keygen(path: Path, comment: str) -> None:
    if path.exists():
        return
    secure_mkdir(path.parent)
    res = subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    if res.returncode != 0:
        raise SimError(f"ssh-keygen failed: {res.stderr.strip()}")


def ensure_client_key(fp: FleetPaths) -> None:
    keygen(fp.client_key, "ascend-env-sim")
    pub = Path(str(fp.client_key) + ".pub").read_text()
    fp.authorized_keys.write_text(pub)
    Path(fp.authorized_keys).chmod(0o644)


def render_config(hp: HostPaths, fp: FleetPaths, address: str, port: int) -> str:
    # AuthorizedKeysFile is read before the chroot, so it lives outside the host root and
    # nothing is written to the machine's /root/.ssh.
    return f"""\
ListenAddress {address}:{port}
HostKey {hp.host_key}
PidFile {hp.pidfile}
AuthorizedKeysFile {fp.authorized_keys}
ChrootDirectory {hp.root}
PermitRootLogin prohibit-password
AllowUsers root
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
UseDNS no
PrintMotd no
PrintLastLog no
StrictModes yes
MaxStartups 100:30:200
MaxSessions 100
Subsystem sftp internal-sftp
LogLevel INFO
"""


def start(hp: HostPaths, fp: FleetPaths, address: str, port: int) -> int:
    """Start sshd for one host; return its pid once it accepts connections."""
    if not Path(SSHD).exists():
        raise SimError(f"{SSHD} not found: apt-get install -y openssh-server")
    check_chroot_path(hp.root)
    keygen(hp.host_key, f"sim-host-{hp.base.name}")
    if not PRIVSEP_DIR.is_dir():
        PRIVSEP_DIR.mkdir(mode=0o755)
    hp.sshd_config.write_text(render_config(hp, fp, address, port))
    hp.pidfile.unlink(missing_ok=True)
    res = subprocess.run(
        [SSHD, "-f", str(hp.sshd_config), "-E", str(hp.log)],
        capture_output=True,
        text=True,
        check=False,
    )
    if res.returncode != 0:
        raise SimError(
            f"sshd for {hp.base.name} failed to start on {address}:{port}: "
            f"{res.stderr.strip() or _tail(hp.log)}"
        )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if hp.pidfile.exists():
            text = hp.pidfile.read_text().strip()
            if text and _accepts(address, port):
                return int(text)
        time.sleep(0.02)
    raise SimError(f"sshd for {hp.base.name} did not come up on {address}:{port}: {_tail(hp.log)}")


def _accepts(address: str, port: int) -> bool:
    try:
        with socket.create_connection((address, port), timeout=0.5):
            return True
    except OSError:
        return False


def _tail(path: Path) -> str:
    if not path.exists():
        return "(no log)"
    return " | ".join(path.read_text(errors="replace").strip().splitlines()[-3:])


def is_ours(pid: int, hp: HostPaths) -> bool:
    """True when `pid` is the sshd started with this host's config (pids get reused)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    # sshd rewrites its title ("sshd: /usr/sbin/sshd -f CFG ... [listener]"): match a substring.
    return str(hp.sshd_config).encode() in cmdline


def stop(hp: HostPaths, pid: int | None) -> None:
    """Kill this host's sshd by pid (from the registry or its pidfile)."""
    pids = set()
    if pid:
        pids.add(pid)
    if hp.pidfile.exists():
        text = hp.pidfile.read_text().strip()
        if text.isdigit():
            pids.add(int(text))
    for p in pids:
        if not is_ours(p, hp):
            continue
        # Per-connection sshd processes outlive the listener while a client (an Ansible
        # ControlMaster) holds the connection: collect them before they are reparented.
        sessions = _descendants(p)
        os.kill(p, signal.SIGTERM)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and is_ours(p, hp):
            time.sleep(0.02)
        if is_ours(p, hp):
            os.kill(p, signal.SIGKILL)
        for child in sessions:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGKILL)
    _kill_sessions(hp)


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    out: list[int] = []
    todo = [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def _kill_sessions(hp: HostPaths) -> None:
    """Processes whose root is inside this host (ssh sessions, leftovers of installers)."""
    root = str(hp.root)
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            proc_root = str((entry / "root").readlink())
        except OSError:
            continue
        if proc_root == root or proc_root.startswith(root + "/"):
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(entry.name), signal.SIGKILL)


def processes_in(hp: HostPaths) -> list[int]:
    """Pids still tied to this host: its sshd or anything chrooted into its root."""
    root = str(hp.root)
    out: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        try:
            proc_root = str((entry / "root").readlink())
        except OSError:
            continue
        if proc_root == root or proc_root.startswith(root + "/") or is_ours(pid, hp):
            out.append(pid)
    return out


def close_masters(control_dir: Path) -> None:
    """Ask the ssh ControlMaster processes of a fleet (Ansible's) to exit."""
    if not control_dir.is_dir():
        return
    for sock in control_dir.iterdir():
        subprocess.run(["ssh", "-o", f"ControlPath={sock}", "-O", "exit", "sim"],
                       capture_output=True, check=False, timeout=10)
