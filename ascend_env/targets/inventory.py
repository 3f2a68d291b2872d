"""Ansible inventories as the doctor reads them: the hosts matching a pattern, with the
variables Ansible gives them (what `ansible-inventory --host` prints), read by its own code.

Read afresh on every run and never written anywhere: host variables hold connection
secrets, and an inventory may be a script, a plugin or vaulted, which only Ansible reads right.

Ansible's modules are imported where they are used: its inventory code is a large part of a
one-host doctor's start-up, and only fleets (and vaulted values) need it.
"""

from __future__ import annotations

import json
import os
from datetime import date, time
from pathlib import Path
from typing import Any

import yaml

from ascend_env.core.errors import UsageError
from ascend_env.core.inputs import (
    InputError,
    YamlLimitError,
    compose_bounded,
    read_bounded,
    yaml_problem,
)

HostVars = dict[str, dict[str, Any]]

# Variable folders beside an inventory file or inside an inventory folder: Ansible merges
# them into its hosts' variables (into the inventory itself when vars plugins are set to run
# at its start, RUN_VARS_PLUGINS=start).
VARS_DIRS = ("group_vars", "host_vars")
# Ansible's types for a vaulted value it could not decrypt (2.19 on; before 2.19).
VAULTED = ("EncryptedString", "AnsibleVaultEncryptedUnicode")
NO_VAULT = ("no vault password is configured to decrypt it: set vault_password_file (or "
            "vault_identity_list) in ansible.cfg, or ANSIBLE_VAULT_PASSWORD_FILE, as for "
            "ansible-playbook")


def read_inventory(inventory: Path, limit: str | None) -> HostVars:
    """Hosts of `inventory` matching `limit` (an Ansible pattern: `a:b`, `web*`, `all:!down`),
    each with its variables, read by Ansible's InventoryManager (and its VariableManager
    where group_vars/ or host_vars/ apply, as ansible-inventory merges them)."""
    if not inventory.exists():
        raise UsageError(f"inventory {inventory} does not exist")
    check_inventory_files(inventory)
    from ansible.inventory.manager import InventoryManager  # noqa: PLC0415 - fleets only (see above)
    from ansible.parsing.dataloader import DataLoader  # noqa: PLC0415 - fleets only

    folders = vars_folders(inventory)
    loader = DataLoader()
    secrets = _vault_secrets(loader, inventory, folders)
    try:
        manager = InventoryManager(loader=loader, sources=[str(inventory)])
        hosts = manager.list_hosts(limit or "all")
    except Exception as exc:
        # Vars plugins set to run at the inventory's start read the folders here.
        why = [str(exc), *_unreadable(folders, secrets)]
        raise UsageError(f"cannot read inventory {inventory}: {'; '.join(why)}") from exc
    if not hosts:
        raise UsageError(f"no host of {inventory} matches {limit or 'all'}")
    merger = _variable_manager(loader, manager) if folders else None
    out: HostVars = {}
    for host in hosts:
        if merger is None:
            variables: dict[str, Any] = {}
            for group in sorted(host.get_groups(),
                                key=lambda g: (g.depth, g.priority, g.name)):
                variables.update(group.get_vars())
            variables.update(host.get_vars())
        else:
            variables = _merged_vars(merger, host, inventory, folders, secrets)
        # Plain JSON types (no tagged strings or tuples), whichever way they were merged.
        out[host.name] = _plain(variables, inventory, host.name, folders, secrets)
    return out


def check_inventory_files(inventory: Path) -> None:
    """Refuse, before Ansible reads them, inventory files that would hang it or fill its
    memory: a FIFO or a device, a file over the size limit, YAML beyond the alias and
    nesting limits or with a duplicate key (Ansible only warns and keeps the last).

    Only the bounds are checked here: what the files mean stays Ansible's to read. An
    inventory folder is Ansible's own layout, and is allowed; its files are checked.
    """
    sources = [inventory]
    if inventory.is_dir():
        sources = [path for path in sorted(inventory.iterdir())
                   if not path.name.startswith(".") and not path.is_dir()]
    for path in [*sources, *_files(vars_folders(inventory))]:
        if path.is_symlink() and path.resolve().is_dir():
            continue
        raw = read_bounded(path, what="inventory file")
        if os.access(path, os.X_OK) and raw.startswith(b"#!"):
            continue  # a script inventory: Ansible runs it, its output is its own
        try:
            compose_bounded(raw.decode("utf-8"))
        except YamlLimitError as exc:
            raise InputError(f"cannot read inventory file {path}: {yaml_problem(exc)}"
                             ) from exc
        except (yaml.YAMLError, UnicodeDecodeError):
            continue  # not YAML (an INI inventory, say): Ansible's own parsers judge it


def vars_folders(inventory: Path) -> list[Path]:
    """The group_vars/ and host_vars/ that Ansible's host_group_vars plugin reads for this
    inventory: inside it when it is a folder, beside it otherwise."""
    base = inventory if inventory.is_dir() else inventory.parent
    return [base / name for name in VARS_DIRS if (base / name).is_dir()]


def _variable_manager(loader: Any, manager: Any) -> Any:
    from ansible.vars.manager import VariableManager  # noqa: PLC0415 - only with folders

    merger = VariableManager(loader=loader, inventory=manager)
    # Without a playbook Ansible takes the current directory's group_vars/ and host_vars/
    # for a playbook's; `install` runs ascend-env's own playbooks, which set no connection
    # variables, so those would only make the answer depend on where the doctor runs.
    merger.safe_basedir = False
    return merger


def _merged_vars(merger: Any, host: Any, inventory: Path, folders: list[Path],
                 secrets: list[Any]) -> dict[str, Any]:
    """What `ansible-inventory --host` prints for `host`, plus the magic variables the host
    itself carries (group_names, inventory_file...), which the folderless path hands on."""
    from ansible.constants import INTERNAL_STATIC_VARS  # noqa: PLC0415 - fleets only

    try:
        found = merger.get_vars(host=host, include_hostvars=False, stage="all")
    except Exception as exc:
        why = _unreadable(folders, secrets) or [str(exc)]
        raise UsageError(f"cannot read the variables of {host.name} in {inventory}: "
                         f"{'; '.join(why)}") from exc
    variables = {k: v for k, v in found.items() if k not in INTERNAL_STATIC_VARS}
    variables.update((k, v) for k, v in host.get_vars().items() if k in INTERNAL_STATIC_VARS)
    return variables


def _vault_secrets(loader: Any, inventory: Path, folders: list[Path]) -> list[Any]:
    """The vault passwords Ansible's configuration names (vault_password_file,
    vault_identity_list), as ansible-playbook reads them for `install`: read only where the
    inventory holds vaulted text (a password file may be a script), never prompted for."""
    if not _vaulted_files(inventory, folders):
        return []
    from ansible import constants as C  # noqa: PLC0415 - fleets only; Ansible's own name
    from ansible.parsing.vault import get_file_vault_secret  # noqa: PLC0415 - fleets only

    configured = [*C.DEFAULT_VAULT_IDENTITY_LIST]
    if C.DEFAULT_VAULT_PASSWORD_FILE:
        configured.append(C.DEFAULT_VAULT_PASSWORD_FILE)
    secrets = []
    for slug in configured:
        label, _, source = slug.partition("@") if "@" in slug else ("", "", slug)
        if source in ("prompt", "prompt_ask_vault_pass"):
            continue  # the doctor runs unattended (health checks, CI)
        try:
            secret = get_file_vault_secret(filename=source, vault_id=label or None,
                                           loader=loader)
            secret.load()
        except Exception as exc:
            raise UsageError(f"cannot read the vault password {source} that Ansible's "
                             f"configuration names: {exc}") from exc
        secrets.append((label or C.DEFAULT_VAULT_IDENTITY, secret))
    loader.set_vault_secrets(secrets)  # whole vaulted files, and values before Ansible 2.19
    return secrets


def _plain(variables: dict[str, Any], inventory: Path, host: str, folders: list[Path],
           secrets: list[Any]) -> dict[str, Any]:
    """The variables in plain JSON types, vaulted values decrypted with the configured vault
    passwords; one that cannot be is a UsageError naming it."""

    def convert(value: object) -> str:
        if type(value).__name__ in VAULTED and secrets:
            return _decrypt(value, secrets, f"{inventory}: {host}")
        return _iso_date(value)

    try:
        plain: dict[str, Any] = json.loads(json.dumps(variables, default=convert))
    except TypeError as exc:
        odd = _first_odd(variables, "")
        if odd is None:
            raise UsageError(f"cannot read the variables of {host} in {inventory}: {exc}"
                             ) from exc
        key, value = odd
        if type(value).__name__ not in VAULTED:
            raise UsageError(f"{inventory}: {host}: {key} is a {type(value).__name__}, "
                             "which the doctor cannot read") from exc
        files = ", ".join(str(p) for p in _vaulted_files(inventory, folders))
        where = f" (in {files})" if files else ""
        raise UsageError(f"{inventory}: {host}: {key} is vaulted{where}, and {NO_VAULT}"
                         ) from exc
    return plain


def _decrypt(value: object, secrets: list[Any], where: str) -> str:
    """An inline `!vault` value in clear (Ansible 2.19 decrypts those through a process-wide
    context that only its CLIs set up; earlier ones through the loader's secrets)."""
    from ansible.parsing import vault  # noqa: PLC0415 - fleets only

    helper = getattr(vault, "VaultHelper", None)
    try:
        if helper is None:
            return str(value)
        ciphertext = helper.get_ciphertext(value, with_tags=False)
        clear: bytes = vault.VaultLib(secrets=secrets).decrypt(ciphertext)
        return clear.decode()
    except Exception as exc:
        raise UsageError(f"{where}: a vaulted value does not decrypt with the configured "
                         f"vault password: {exc}") from exc


def _iso_date(value: object) -> str:
    """YAML dates and times as ansible-inventory prints them."""
    if isinstance(value, (date, time)):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not a JSON type")


def _first_odd(value: object, key: str) -> tuple[str, object] | None:
    """The key path and value of the first value json cannot write, if there is one."""
    if isinstance(value, dict):
        for k, v in value.items():
            odd = _first_odd(v, f"{key}.{k}" if key else str(k))
            if odd is not None:
                return odd
        return None
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            odd = _first_odd(v, f"{key}[{i}]")
            if odd is not None:
                return odd
        return None
    if value is None or isinstance(value, (str, int, float, date, time)):
        return None
    return key, value


def _unreadable(folders: list[Path], secrets: list[Any]) -> list[str]:
    """The variable files Ansible cannot read, and why, for a message (Ansible's own errors
    for them name no file)."""
    from ansible.parsing.dataloader import DataLoader  # noqa: PLC0415 - fleets only

    loader = DataLoader()
    loader.set_vault_secrets(secrets)
    why = []
    for path in _files(folders):
        try:
            if not secrets and path.read_bytes().lstrip().startswith(b"$ANSIBLE_VAULT"):
                why.append(f"{path} is vaulted, and {NO_VAULT}")
            else:
                loader.load_from_file(str(path))
        except Exception as exc:
            why.append(f"{path}: {exc}")
    return why


def _files(folders: list[Path]) -> list[Path]:
    """The files in the variable folders that Ansible may read: any directly inside (named
    after a host or group, whose name may hold dots), YAML or JSON ones below (no hidden
    files or backups)."""
    from ansible.constants import YAML_FILENAME_EXTENSIONS  # noqa: PLC0415 - fleets only

    return [path for folder in folders for path in sorted(folder.rglob("*"))
            if path.is_file() and not path.name.startswith(".") and not path.name.endswith("~")
            and (path.parent == folder or path.suffix in ("", *YAML_FILENAME_EXTENSIONS))]


def _vaulted_files(inventory: Path, folders: list[Path]) -> list[Path]:
    """The inventory's files, and those of its variable folders, that hold vaulted text."""
    sources = sorted(inventory.iterdir()) if inventory.is_dir() else [inventory]
    return [path for path in [*sources, *_files(folders)] if _has_vault(path)]


def _has_vault(path: Path) -> bool:
    try:
        return path.is_file() and b"$ANSIBLE_VAULT" in path.read_bytes()
    except OSError:
        return False
