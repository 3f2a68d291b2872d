"""Ansible inventories as the doctor reads them: the hosts matching a pattern, with their
variables (groups', then their own), read by Ansible's own inventory code.

Importing that code costs ~0.25 s (ansible.constants loads Ansible's whole configuration
schema), more than the rest of a one-host doctor run. A health check reads the same
inventory every minute, so the answer for a static inventory file is kept, keyed by
everything it is computed from: the file's bytes, the pattern, Ansible's release, its
configuration files and ANSIBLE_* variables. Anything else (a folder, a script, an inventory
plugin's configuration, a file with group_vars/ or host_vars/ beside it, vaulted values,
which must never be written out decrypted) is read by Ansible every time.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from ascend_env import __version__
from ascend_env.errors import UsageError

HostVars = dict[str, dict[str, Any]]

KEEP = 16  # answers kept, most recently used first
# Where Ansible looks for its configuration (the first one found wins; all of them go into
# the key, which costs nothing and stays right whichever Ansible picks).
CONFIG_FILES = ("ansible.cfg", "~/.ansible.cfg", "/etc/ansible/ansible.cfg")
# A YAML inventory plugin's configuration names its plugin at the top level; such an
# inventory is computed (cloud APIs, constructed groups), never a function of its bytes.
PLUGIN_CONFIG = re.compile(rb"^plugin\s*:", re.MULTILINE)
# Variable folders beside the inventory: Ansible's vars plugins add them to the inventory's
# hosts when configured to run at its start (RUN_VARS_PLUGINS=start).
VARS_DIRS = ("group_vars", "host_vars")


def read_inventory(inventory: Path, limit: str | None) -> HostVars:
    """Hosts of `inventory` matching `limit` (an Ansible pattern: `a:b`, `web*`, `all:!down`),
    each with its variables; a kept answer when nothing it depends on has changed."""
    if not inventory.exists():
        raise UsageError(f"inventory {inventory} does not exist")
    key = cache_key(inventory, limit)
    if key is not None:
        kept = _load(key)
        if kept is not None:
            return kept
    hosts = ansible_hosts(inventory, limit)
    if key is not None:
        _keep(key, hosts)
    return hosts


def ansible_hosts(inventory: Path, limit: str | None) -> HostVars:
    """The hosts and variables, read by Ansible's InventoryManager."""
    from ansible.inventory.manager import InventoryManager  # noqa: PLC0415 - ~0.25 s
    from ansible.parsing.dataloader import DataLoader  # noqa: PLC0415

    try:
        manager = InventoryManager(loader=DataLoader(), sources=[str(inventory)])
        hosts = manager.list_hosts(limit or "all")
    except Exception as exc:
        raise UsageError(f"cannot read inventory {inventory}: {exc}") from exc
    if not hosts:
        raise UsageError(f"no host of {inventory} matches {limit or 'all'}")
    out: HostVars = {}
    for host in hosts:
        variables: dict[str, Any] = {}
        for group in sorted(host.get_groups(), key=lambda g: (g.depth, g.priority, g.name)):
            variables.update(group.get_vars())
        variables.update(host.get_vars())
        # Plain JSON types: Ansible's tagged strings and tuples are what a kept answer reads
        # back as, so both paths hand the same values on.
        out[host.name] = json.loads(json.dumps(variables))
    return out


def cache_key(inventory: Path, limit: str | None) -> str | None:
    """What a kept answer is filed under, or None when the inventory cannot be kept."""
    try:
        if not inventory.is_file() or os.access(inventory, os.X_OK):
            return None  # a folder or an executable (dynamic) inventory
        if any((inventory.parent / name).exists() for name in VARS_DIRS):
            return None  # read with the inventory when vars plugins run at its start
        data = inventory.read_bytes()
    except OSError:
        return None
    if b"$ANSIBLE_VAULT" in data or b"!vault" in data or PLUGIN_CONFIG.search(data):
        return None
    digest = hashlib.sha256()
    for part in (__version__.encode(), _ansible_release(), str(inventory.resolve()).encode(),
                 data, (limit or "all").encode(), *_config_parts()):
        digest.update(b"%d:" % len(part) + part)
    return digest.hexdigest()


def _ansible_release() -> bytes:
    """Ansible's release file (its version), found without importing Ansible."""
    spec = importlib.util.find_spec("ansible")
    if spec is None or spec.origin is None:
        return b""
    try:
        return (Path(spec.origin).parent / "release.py").read_bytes()
    except OSError:
        return b""


def _config_parts() -> list[bytes]:
    parts = [f"{k}={v}".encode() for k, v in sorted(os.environ.items())
             if k.startswith("ANSIBLE_")]
    for name in (os.environ.get("ANSIBLE_CONFIG", ""), *CONFIG_FILES):
        if not name:
            continue
        path = Path(name).expanduser()
        try:
            parts += [str(path.resolve()).encode(), path.read_bytes()]
        except OSError:
            parts.append(b"-")
    return parts


def cache_dir() -> Path:
    return Path.home() / ".cache" / "ascend-env" / "inventories"


def _load(key: str) -> HostVars | None:
    path = cache_dir() / f"{key}.json"
    try:
        hosts = json.loads(path.read_text())
        os.utime(path)  # most recently used: kept longest
    except (OSError, ValueError):
        return None
    return hosts if isinstance(hosts, dict) and hosts else None


def _keep(key: str, hosts: HostVars) -> None:
    """Write the answer (private: inventories hold connection secrets) and drop the oldest;
    a cache that cannot be written only costs the next run its speed."""
    folder = cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")  # created 0600
    except OSError:
        return
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(hosts, fh)
        Path(tmp).replace(folder / f"{key}.json")
        kept = sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in kept[KEEP:]:
            old.unlink(missing_ok=True)
    except OSError:
        Path(tmp).unlink(missing_ok=True)
