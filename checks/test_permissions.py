"""Permissions: device nodes as the driver sets them; job users in the driver's group."""

from __future__ import annotations

import re
import shlex

import pytest

from ascend_env.doctor.findings import failure, observe
from ascend_env.facts.model import DeviceNode, DriverFacts, Facts, IdInfo

pytestmark = [pytest.mark.category("permissions"), pytest.mark.level(1)]

NODE_MODE = "0660"  # crw-rw---- HwHiAiUser:HwHiAiUser (https://arthurchiao.art/blog/gpu-advanced-notes-2-zh/)


def _owned(node: DeviceNode, name: str, number: int | None, uid: bool) -> bool:
    have_name, have_id = (node.owner, node.uid) if uid else (node.group, node.gid)
    return have_name == name or (have_name is None and number is not None and have_id == number)


def test_device_nodes(facts: Facts, driver: DriverFacts) -> None:
    """permissions.device-nodes: the NPU device nodes are HwHiAiUser's, mode 0660."""
    del driver
    users = facts.users
    user_entry, group_entry = users.driver_user_entry, users.driver_group_entry
    nodes = [n for n in facts.device_nodes if n.path.startswith("/dev/")
             and (re.fullmatch(r"/dev/v?davinci\d+", n.path) or n.path in (
                 "/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc"))]
    if not nodes:
        pytest.skip("no NPU device node (see devices.nodes)")
    wrong = [n for n in nodes
             if not _owned(n, users.driver_user, user_entry.uid if user_entry else None, True)
             or not _owned(n, users.driver_group, group_entry.gid if group_entry else None,
                           False)
             or n.mode != NODE_MODE]
    owner = f"{users.driver_user}:{users.driver_group}"
    assert not wrong, failure(
        message=f"{len(wrong)} device node(s) not {owner} {NODE_MODE}: "
                + ", ".join(n.path for n in wrong[:4]) + ("..." if len(wrong) > 4 else ""),
        observed="; ".join(f"{n.path} {n.owner or n.uid}:{n.group or n.gid} {n.mode}"
                           for n in wrong[:4]),
        expected=f"{owner} mode {NODE_MODE} (crw-rw----), as the driver creates them",
        why="too tight: the driver's group cannot open the NPU (permission denied); too "
            "open: any local user can use or hang the device",
        fix="device-permissions",
        manual=shlex.join(["chown", owner, *(n.path for n in wrong)]) + " && "
        + shlex.join(["chmod", NODE_MODE, *(n.path for n in wrong)]))
    observe(f"{len(nodes)} node(s) {owner} {NODE_MODE}")


def _in_group(info: IdInfo, group: str, gid: int | None) -> bool:
    return group in info.groups or (gid is not None and gid in info.groups.values())


def test_run_users(facts: Facts, driver: DriverFacts, run_users: tuple[str, ...]) -> None:
    """permissions.run-users: the users that run jobs are in the driver's group."""
    del driver
    users = facts.users
    group = users.driver_group
    gid = users.driver_group_entry.gid if users.driver_group_entry else None
    accounts: dict[str, IdInfo | None] = {u: users.others.get(u) for u in run_users}
    invoking = users.invoking
    if invoking is not None and invoking.uid != 0 and invoking.user:
        accounts.setdefault(invoking.user, invoking)
    if not accounts:
        pytest.skip("only root was seen; name the job users with --run-user USER")
    unknown = [u for u, info in accounts.items() if info is None]
    outside = [u for u, info in accounts.items()
               if info is not None and info.uid != 0 and not _in_group(info, group, gid)]
    assert not unknown and not outside, failure(
        message=(f"user(s) {', '.join(outside)} not in the {group} group" if outside else "")
        + ("; " if outside and unknown else "")
        + (f"no such user: {', '.join(unknown)}" if unknown else ""),
        observed="; ".join(f"{u}: groups {', '.join(sorted(i.groups if i else {}))}"
                           for u, i in accounts.items() if u in outside + unknown),
        expected=f"every job user in group {group} (the device nodes' group)",
        why="a user outside the group cannot open /dev/davinci*: no NPU visible, permission "
            "denied",
        fix="device-permissions" if not unknown else None,
        manual=" && ".join(shlex.join(["usermod", "-aG", group, u]) for u in outside)
        + "  # then log in again" if outside else "create the user first")
    observe(", ".join(f"{u} in {group}" for u in accounts))
