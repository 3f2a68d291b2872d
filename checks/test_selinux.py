"""SELinux: persistent labels on the Ascend paths where SELinux enforces."""

from __future__ import annotations

import shlex

import pytest

from ascend_env.doctor.findings import failure, observe
from ascend_env.facts.model import DriverFacts, Facts
from ascend_env.spec.envspec import EnvSpec

pytestmark = [pytest.mark.category("selinux"), pytest.mark.level(1)]

# Read-only for containers, readable for host processes (container-selinux); the fix's default.
WANTED_TYPE = "container_ro_file_t"


def test_labels(facts: Facts, driver: DriverFacts, spec: EnvSpec | None) -> None:
    """selinux.labels: the install path (and container paths) carry the container label."""
    mode = facts.selinux.mode
    if mode != "enforcing":
        pytest.skip(f"SELinux is {mode or 'not present'}; labels do not matter")
    if spec is not None and not spec.selinux.manage:
        pytest.skip("the spec does not manage SELinux labels (selinux.manage: false)")
    paths = [driver.install_path, *(spec.selinux.container_paths if spec else [])]
    labels = facts.selinux.labels
    wrong = {p: labels.get(p) for p in paths if WANTED_TYPE not in (labels.get(p) or "")}
    assert not wrong, failure(
        message="Ascend paths lack the container label: " + ", ".join(wrong),
        observed="; ".join(f"{p}: {label or 'no label read'}" for p, label in wrong.items()),
        expected=f"type {WANTED_TYPE} (persistent: semanage fcontext + restorecon)",
        why="with SELinux enforcing, containers get 'permission denied' on the mounted "
            "driver and CANN; chcon labels are lost on the next relabel",
        fix="selinux-context",
        manual=" && ".join(shlex.join(["semanage", "fcontext", "-a", "-t", WANTED_TYPE,
                                       f"{p}(/.*)?"]) + " && "
                           + shlex.join(["restorecon", "-R", p]) for p in wrong))
    observe(", ".join(f"{p}: {labels.get(p)}" for p in paths))
