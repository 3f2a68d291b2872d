"""Containers: inside one, the host's driver and devices must be passed in."""

from __future__ import annotations

import re

import pytest

from ascend_env.doctor.findings import failure, observe
from ascend_env.facts.model import Facts

pytestmark = [pytest.mark.category("containers"), pytest.mark.level(1)]


def test_driver_mounted(facts: Facts) -> None:
    """containers.driver: a container sees the host driver's libraries and the NPU nodes."""
    if not facts.container.in_container:
        pytest.skip("not running in a container")
    hal = facts.libraries.get("libascend_hal.so")
    nodes = [n.path for n in facts.device_nodes if re.fullmatch(r"/dev/v?davinci\d+", n.path)]
    problems = []
    if hal is None or not hal.on_disk:
        problems.append("no driver libraries (libascend_hal.so)")
    if not nodes:
        problems.append("no /dev/davinciN")
    assert not problems, failure(
        message=f"this {facts.container.kind} container lacks the host's NPU: "
                + " and ".join(problems),
        observed="; ".join(problems) + f"; Ascend mounts: {facts.container.mounts or 'none'}",
        expected="/usr/local/Ascend/driver mounted, /dev/davinciN, davinci_manager, devmm_svm, "
                 "hisi_hdc passed in",
        why="CANN and torch_npu in the container load the host driver's libraries and open "
            "its device nodes",
        manual="ascend-env image run-args (or: --device /dev/davinci0 --device "
               "/dev/davinci_manager --device /dev/devmm_svm --device /dev/hisi_hdc "
               "-v /usr/local/Ascend/driver:/usr/local/Ascend/driver:ro)")
    observe(f"{len(nodes)} NPU node(s), driver libraries at {hal.on_disk[0] if hal else '?'}")
