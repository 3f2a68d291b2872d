"""Per host, each component from -> to: what a run found (preflight) against what it leaves (the
state role's record; in check mode, what it would leave), for `install --check` to show before
anything changes."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from ascend_env.core.versions import try_parse
from ascend_env.install.state import InstalledState, saved_records

ChangeKind = Literal["install", "upgrade", "downgrade", "unchanged", "reinstall"]


class Change(BaseModel):
    """One component of one host."""

    component: str
    before: str | None
    after: str | None
    change: ChangeKind


def _kind(before: str | None, after: str | None) -> ChangeKind:
    if before is None:
        return "install"
    if before.lower() == (after or "").lower():
        return "unchanged"
    old, new = try_parse(before), try_parse(after) if after else None
    if old is None or new is None:
        return "reinstall"  # a version we cannot order: it is replaced, which way is not known
    return "upgrade" if new > old else "downgrade" if new < old else "unchanged"


def changes(before: InstalledState, after: InstalledState) -> list[Change]:
    """Driver, firmware, CANN (toolkit, ops, NNAL) and the venv, where either side has one."""
    pairs = [("driver", before.driver, after.driver),
             ("firmware", before.firmware, after.firmware),
             ("cann", before.cann.version, after.cann.version),
             ("ops", before.cann.ops, after.cann.ops),
             ("nnal", before.cann.nnal, after.cann.nnal)]
    out = [Change(component=name, before=old, after=new, change=_kind(old, new))
           for name, old, new in pairs if old is not None or new is not None]
    if before.venv is not None or after.venv is not None:
        same = (before.venv.model_dump() if before.venv else None) == (
            after.venv.model_dump() if after.venv else None)
        out.append(Change(component="venv", before=before.venv.path if before.venv else None,
                          after=after.venv.path if after.venv else None,
                          change="unchanged" if same else "install" if before.venv is None
                          else "reinstall"))
    return out


def run_changes(run_dir: Path, hosts: list[str]) -> dict[str, list[Change]]:
    """Each host's changes, from what a run kept in its folder (hosts it did not get that far
    on are left out)."""
    found = {}
    for host in hosts:
        start, end = saved_records(run_dir, host)
        if start is not None and end is not None:
            found[host] = changes(start, end.current)
    return found


def describe(items: list[Change]) -> str:
    """`driver 25.3.rc1 -> 25.5.0 (upgrade), CANN 8.3.RC1 (unchanged)` for the terminal."""
    parts = []
    for item in items:
        name = "CANN" if item.component == "cann" else item.component
        if item.change == "unchanged":
            parts.append(f"{name} {item.after} (unchanged)")
        else:
            parts.append(f"{name} {item.before or 'none'} -> {item.after or 'none'} "
                         f"({item.change})")
    return ", ".join(parts)
