"""The Ansible inventory and ssh config through which tools reach a fleet."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.sim.reboot import FAKE_REBOOT_VARS


@dataclass(frozen=True)
class HostEntry:
    name: str
    address: str
    port: int
    chip: str
    devices: int


SSH_OPTS = "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR"


def render_inventory(hosts: Sequence[HostEntry], key: Path, control_dir: Path) -> str:
    lines = ["# Written by python -m tests.sim up; simulated Ascend hosts.", "[sim]"]
    # The simulated reboot as host variables, so `ascend-env install --allow-reboot` by hand
    # completes: host variables, because the playbooks' group_vars/all (which sets the real
    # boot id file) outranks an inventory's group variables.
    reboot = " ".join(f"{key}={value}" for key, value in FAKE_REBOOT_VARS.items())
    for h in hosts:
        lines.append(
            f"{h.name} ansible_host={h.address} ansible_port={h.port} "
            f"sim_chip={h.chip} sim_devices={h.devices} {reboot}"
        )
    lines += [
        "",
        "[sim:vars]",
        "ansible_connection=ssh",
        "ansible_user=root",
        f"ansible_ssh_private_key_file={key}",
        f"ansible_ssh_common_args='{SSH_OPTS}'",
        "ansible_python_interpreter=/usr/bin/python3",
        # Per-fleet ControlMaster sockets: a new fleet on the same 127.0.0.N must not reuse
        # a master connection to a host that no longer exists.
        f"ansible_control_path_dir={control_dir}",
        "",
    ]
    return "\n".join(lines)


def render_ssh_config(hosts: Sequence[HostEntry], key: Path) -> str:
    out = ["# Written by python -m tests.sim up; use with ssh -F / testinfra ssh_config=."]
    for h in hosts:
        out += [
            f"Host {h.name}",
            f"    HostName {h.address}",
            f"    Port {h.port}",
            "    User root",
            f"    IdentityFile {key}",
            "    IdentitiesOnly yes",
            "    StrictHostKeyChecking no",
            "    UserKnownHostsFile /dev/null",
            "    LogLevel ERROR",
            "",
        ]
    return "\n".join(out)
