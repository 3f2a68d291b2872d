"""Network, level 2: each NPU reaches the same device index on every other host.

Pings run on the hosts (hccn_tool -ping over RoCE; on A3 SuperPoD hosts also -hccs_ping over
HCCS, to the peer die's SDID in the same super pod), one per ordered pair, each host's in
parallel: this needs live hosts, so it skips on saved captures.
"""

from __future__ import annotations

import pytest

from ascend_env.doctor.findings import attach_evidence, fail_involving, observe, warn
from ascend_env.doctor.reachability import Ping, matrix_document, ping_matrix
from ascend_env.doctor.suite import Target

pytestmark = [pytest.mark.category("network"), pytest.mark.level(2), pytest.mark.scope("fleet")]


def _judge(pings: list[Ping], *, what: str, why: str, manual: str) -> None:
    """Fail on the pairs that got no reply, warn on answers not understood; `what` names the
    kind of target before it in the messages."""
    attach_evidence(matrix_document(pings))
    lost = [p for p in pings if p.answered is False]
    if lost:
        lines = [f"{p.source} device {p.device} -> {p.peer} device {p.device} ({what}"
                 f"{p.address}): {p.detail}" for p in lost]
        fail_involving(
            message=f"{len(lost)} of {len(pings)} pair(s) do not reach each other: "
            + "; ".join(lines[:4]), observed="; ".join(lines),
            expected="every device answers the same device index of every other host",
            why=why, manual=manual,
            involved=tuple(dict.fromkeys(
                x for p in lost for x in (f"{p.source} device {p.device}",
                                          f"{p.peer} device {p.device}"))))
    unknown = [p for p in pings if p.answered is None]
    if unknown:
        warn(message=f"{len(unknown)} ping(s) not understood: "
             + "; ".join(f"{p.source} device {p.device} -> {p.peer}: {p.detail}"
                         for p in unknown[:4]),
             observed=f"{len(unknown)} answer(s) without a packets summary",
             expected="N packets transmitted, N received",
             why="an answer the doctor cannot read is never taken for reachable")
    observe(f"{len(pings)} pair(s) answered")


def _live(fleet: list[Target]) -> None:
    if len(fleet) < 2:
        pytest.skip("one host: no peer to ping")
    if any(t.host is None for t in fleet):
        pytest.skip("no live connection to the hosts (evaluating saved captures)")


def test_reachability(fleet: list[Target]) -> None:
    """network.reachability: every NPU port answers pings from the same device of every other
    host."""
    _live(fleet)
    pings = ping_matrix(fleet)
    if not pings:
        pytest.skip("no device has an address on two hosts (see network.addresses)")
    _judge(pings, what="",
           why="HCCL links device i to device i across hosts; a pair that cannot ping "
               "cannot link (EI0006 socket timeout at the job's start)",
           manual="hccn_tool -i N -ping -g address PEER ; check both links, the switch "
                  "ports' VLAN and ACLs, and the TLS switch (hccn_tool -i N -tls -g) on both")


def test_hccs_reachability(fleet: list[Target]) -> None:
    """network.hccs-reachability: each A3 die answers HCCS pings from its super pod's hosts.

    The same device index of every other host in the pod pings it by its SDID."""
    _live(fleet)
    pings = ping_matrix(fleet, via="hccs")
    if not pings:
        pytest.skip("no two hosts of one super pod with SDIDs (not A3 SuperPoD hosts; see "
                    "network.superpod)")
    _judge(pings, what="SDID ",
           why="across a SuperPoD HCCL links dies over HCCS by their SDIDs; a die that "
               "cannot HCCS-ping its peer cannot link in super pod mode",
           manual="hccn_tool -i N -hccs_ping -g sdid SDID (or address VNIC_IP); check the "
                  "server ids (npu-smi info -t spod-info) and the pod's HCCS cabling")
