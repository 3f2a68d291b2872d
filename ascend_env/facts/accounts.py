"""Accounts: the driver's user and group (getent), the invoking user (`id`), other users."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ascend_env.facts.model import AscendInstallRecord, GroupEntry, IdInfo, PasswdEntry, UserFacts
from ascend_env.facts.reader import CaptureReader
from ascend_env.facts.values import to_int
from ascend_env.remote import probe

# Older probes ran `id`; the probe's own groups, with names, are in the capture's "process".
ID = "id"

_ID_PART = re.compile(r"(\d+)(?:\(([^)]*)\))?")


def parse_id(text: str) -> IdInfo:
    """`id` output: `uid=0(root) gid=0(root) groups=0(root),27(sudo)`."""
    out = IdInfo()
    for item in text.split():
        key, sep, value = item.partition("=")
        if not sep:
            continue
        parts = [(int(m.group(1)), m.group(2)) for m in _ID_PART.finditer(value)]
        if key == "uid" and parts:
            out.uid, out.user = parts[0]
        elif key == "gid" and parts:
            out.gid, out.group = parts[0]
        elif key == "groups":
            out.groups = {name or str(gid): gid for gid, name in parts}
    return out


def parse_getent_passwd(text: str) -> PasswdEntry | None:
    """The first `name:x:uid:gid:gecos:home:shell` line of `getent passwd`."""
    for line in text.splitlines():
        parts = line.strip().split(":")
        if len(parts) >= 7 and parts[0]:
            return PasswdEntry(name=parts[0], uid=to_int(parts[2]), gid=to_int(parts[3]),
                               home=parts[5] or None, shell=parts[6] or None)
    return None


def parse_getent_group(text: str) -> GroupEntry | None:
    """The first `name:x:gid:members` line of `getent group`."""
    for line in text.splitlines():
        parts = line.strip().split(":")
        if len(parts) >= 4 and parts[0]:
            return GroupEntry(name=parts[0], gid=to_int(parts[2]),
                              members=[m for m in parts[3].split(",") if m])
    return None


def read_users(r: CaptureReader, record: AscendInstallRecord) -> UserFacts:
    """The driver's user and group as the install record names them, and who ran the probe."""
    user = record.user_name or probe.DRIVER_USER
    group = record.user_group or user
    facts = UserFacts(driver_user=user, driver_group=group)
    facts.driver_user_entry = parse_getent_passwd(
        r.output(probe.GETENT_PASSWD.format(user=user)) or "")
    facts.driver_group_entry = parse_getent_group(
        r.output(probe.GETENT_GROUP.format(group=group)) or "")
    id_text = r.output(ID)
    if id_text:
        facts.invoking = parse_id(id_text)
    elif r.capture.process.uid is not None:  # what `id` would print, from the probe itself
        process, names = r.capture.process, r.capture.process.group_names
        primary = [process.gid] if process.gid is not None else []
        facts.invoking = IdInfo(uid=process.euid, user=process.user, gid=process.gid,
                                group=names.get(str(process.gid)),
                                groups={names.get(str(g)) or str(g): g
                                        for g in dict.fromkeys(primary + process.groups)})
    if facts.invoking is not None and facts.driver_group_entry is not None:
        entry = facts.driver_group_entry
        facts.invoking_in_driver_group = (
            entry.name in facts.invoking.groups
            or entry.gid in facts.invoking.groups.values()
            or (facts.invoking.user in entry.members))
    for key, result in r.capture.commands.items():
        if key.startswith("id ") and result.ok:
            facts.others[key[3:]] = parse_id(result.stdout)
    return facts


# Parsers by the folder name of their samples under tests/data/.
PARSERS: dict[str, Callable[[Any], Any]] = {
    "id": parse_id,
    "getent_passwd": parse_getent_passwd,
    "getent_group": parse_getent_group,
}
