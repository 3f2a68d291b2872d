"""Bring a fleet of simulated hosts up and down, and say what is running."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tests.sim import hardware, network, oshosts, rootfs, sshd
from tests.sim.chips import get_chip
from tests.sim.inventory import HostEntry, render_inventory, render_ssh_config
from tests.sim.layout import FleetPaths, SimError, secure_mkdir, state_dir
from tests.sim.reboot import prepare_reboots

FIRST_OCTET = 11  # 127.0.0.11 onwards; .1 stays the machine's own loopback


@dataclass
class HostRecord:
    name: str
    address: str
    port: int
    chip: str
    devices: int
    state: str
    root: str
    pid: int = 0
    os: str | None = None  # None: the harness's own Debian; else tests/sim/oshosts.py's
    arch: str | None = None  # None: this machine's; else the one a named OS's host reports


@dataclass
class Fleet:
    name: str
    inventory: Path
    ssh_config: Path
    client_key: Path
    hosts: list[HostRecord] = field(default_factory=list)

    def host(self, name: str) -> HostRecord:
        for h in self.hosts:
            if h.name == name:
                return h
        raise SimError(f"no host {name!r} in fleet {self.name!r}")


@dataclass(frozen=True)
class Versions:
    """What a provisioned host gets installed (the profile form will fill this)."""

    cann: str = "8.5.0"
    hdk: str = "25.5.0"
    firmware: str | None = None
    nnal: bool = True


@contextmanager
def _fleet_lock() -> Iterator[None]:
    lockfile = secure_mkdir(state_dir()) / "fleets.lock"
    with lockfile.open("w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _registries() -> list[Path]:
    d = state_dir() / "fleets"
    return sorted(d.glob("*/fleet.json")) if d.is_dir() else []


def _used_addresses(except_fleet: str) -> set[str]:
    used: set[str] = set()
    for reg in _registries():
        data = json.loads(reg.read_text())
        if data["name"] != except_fleet:
            used.update(h["address"] for h in data["hosts"])
    return used


def load(name: str) -> Fleet | None:
    fp = FleetPaths.for_fleet(name)
    if not fp.registry.exists():
        return None
    data: dict[str, Any] = json.loads(fp.registry.read_text())
    return Fleet(
        name=data["name"],
        inventory=Path(data["inventory"]),
        ssh_config=Path(data["ssh_config"]),
        client_key=Path(data["client_key"]),
        hosts=[HostRecord(**h) for h in data["hosts"]],
    )


def _save(fleet: Fleet) -> None:
    fp = FleetPaths.for_fleet(fleet.name)
    data = {
        "name": fleet.name,
        "inventory": str(fleet.inventory),
        "ssh_config": str(fleet.ssh_config),
        "client_key": str(fleet.client_key),
        "hosts": [asdict(h) for h in fleet.hosts],
    }
    tmp = fp.registry.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    tmp.replace(fp.registry)


def up(
    *,
    name: str = "default",
    hosts: int = 1,
    state: str = "bare",
    chip: str = "910b",
    devices: int = 8,
    root_mode: str = "overlay",
    port: int = 22,
    inventory: Path | None = None,
    versions: Versions | None = None,
    kernel_headers: bool = True,
    os_name: str | None = None,
    arch: str | None = None,
) -> Fleet:
    """Start `hosts` simulated hosts; a previous fleet of the same name is reaped first.
    `os_name`: bare hosts of that OS (tests/sim/oshosts.py) instead of the harness's Debian;
    `arch`: the architecture they report (default this machine's; tests/sim/oshosts.py)."""
    if state not in ("bare", "provisioned"):
        raise SimError(f"--state must be bare or provisioned, not {state!r}")
    if hosts < 1:
        raise SimError("--hosts must be at least 1")
    chip_info = get_chip(chip)
    hardware.initial_state(chip_info, devices)  # validates --devices before any work
    base = oshosts.base_for(os_name, state, arch)  # checks the name and arch first
    down(name)
    repo: Path | None = None
    if state == "provisioned":
        from tests.sim import provision  # noqa: PLC0415  (pulls in gcc/makeself only when needed)

        repo = provision.cached_repo(chip, versions or Versions())
    fp = FleetPaths.for_fleet(name)
    with _fleet_lock():
        secure_mkdir(fp.base / "hosts")
        used = _used_addresses(name)
        addresses = [f"127.0.0.{n}" for n in range(FIRST_OCTET, 255) if f"127.0.0.{n}" not in used]
        if len(addresses) < hosts:
            raise SimError("no free 127.0.0.N addresses left; run python -m tests.sim down")
        fleet = Fleet(name, fp.inventory, fp.ssh_config, fp.client_key)
        for i in range(hosts):
            hname = f"sim{i + 1}"
            fleet.hosts.append(HostRecord(hname, addresses[i], port, chip, devices, state,
                                          str(fp.host(hname).root), os=os_name, arch=arch))
        # Registry first: an interrupted `up` leaves enough behind for `down` to clean.
        _save(fleet)
    sshd.ensure_client_key(fp)
    secure_mkdir(fp.control_dir)

    def build(rec: HostRecord) -> None:
        hp = fp.host(rec.name)
        rootfs.create_host_root(base, hp, root_mode)
        oshosts.install_hardware(hp.root, chip_info, devices, kernel_headers, os_name,
                                 arch=arch)
        # Provisioned hosts come with their NPU ports configured; bare ones get them unset.
        network.attach(hp.root, network.fabric_dir(fp.base), rec.name,
                       int(rec.name.removeprefix("sim")), configured=state == "provisioned")
        prepare_reboots(hp.root)  # the inventory's reboot variables point here
        if repo is not None:
            from tests.sim import provision  # noqa: PLC0415

            provision.provision_host(hp.root, repo, chip, versions or Versions())

    try:
        with ThreadPoolExecutor(max_workers=4) as pool:
            list(pool.map(build, fleet.hosts))
        for rec in fleet.hosts:
            rec.pid = sshd.start(fp.host(rec.name), fp, rec.address, rec.port)
            _save(fleet)
    except BaseException:
        down(name)
        raise
    entries = [HostEntry(h.name, h.address, h.port, h.chip, h.devices) for h in fleet.hosts]
    fp.inventory.write_text(render_inventory(entries, fp.client_key, fp.control_dir))
    fp.ssh_config.write_text(render_ssh_config(entries, fp.client_key))
    if inventory is not None:
        inventory.parent.mkdir(parents=True, exist_ok=True)
        inventory.write_text(render_inventory(entries, fp.client_key, fp.control_dir))
    _save(fleet)
    return fleet


def down(name: str = "default") -> list[str]:
    """Stop sshd by pid, unmount, remove the fleet's hosts; return what was removed."""
    fp = FleetPaths.for_fleet(name)
    removed: list[str] = []
    fleet = load(name)
    pids = {h.name: h.pid for h in fleet.hosts} if fleet else {}
    hosts_dir = fp.base / "hosts"
    names = set(pids)
    if hosts_dir.is_dir():
        names.update(p.name for p in hosts_dir.iterdir())
    sshd.close_masters(fp.control_dir)
    for hname in sorted(names):
        hp = fp.host(hname)
        sshd.stop(hp, pids.get(hname))
        rootfs.destroy_host_root(hp)
        removed.append(hname)
    if fp.base.exists():
        rootfs.unmount_all(fp.base)
        shutil.rmtree(fp.base)
    return removed


def down_all() -> list[str]:
    d = state_dir() / "fleets"
    out: list[str] = []
    if d.is_dir():
        for f in sorted(d.iterdir()):
            out += [f"{f.name}/{h}" for h in down(f.name)]
    return out


def status() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for reg in _registries():
        fleet = load(reg.parent.name)
        if fleet is None:
            continue
        fp = FleetPaths.for_fleet(fleet.name)
        for h in fleet.hosts:
            hp = fp.host(h.name)
            alive = bool(h.pid) and sshd.is_ours(h.pid, hp)
            out.append({
                "fleet": fleet.name,
                "host": h.name,
                "address": f"{h.address}:{h.port}",
                "chip": h.chip,
                "devices": h.devices,
                "state": h.state,
                "os": h.os or "debian (the harness's)",
                "arch": h.arch or os.uname().machine,
                "sshd_pid": h.pid,
                "running": alive,
                "inventory": str(fleet.inventory),
                "ssh_config": str(fleet.ssh_config),
            })
    return out

