"""What a rank table holds, as read (ranktable_read) and checked (ranktable_check).

Values stay the strings the files hold ("0", not 0): a table read and written again keeps
them; the int properties are for comparing with the hosts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ascend_env.core.errors import EXIT_NOT_RIGHT, AscendEnvError

LAYOUT_SERVER = "1.0"  # typical networking: Atlas 800T A2 (910B), 910, A3 in AI server mode
LAYOUT_SUPERPOD = "1.2"  # A3 SuperPoD (super_device_id, super_pod_list)
LAYOUTS = (LAYOUT_SERVER, LAYOUT_SUPERPOD)  # which chip reads which: chips.yaml ranktable_layout
COMPLETED = "completed"  # status of a table HCCL may use ("initializing": not yet)


class RanktableError(AscendEnvError):
    """A rank table that is not one (not JSON, a key twice, wrong types), or one that cannot
    be written for these hosts: exit 1."""

    exit_code = EXIT_NOT_RIGHT


@dataclass(frozen=True)
class RankDevice:
    device_id: str
    device_ip: str | None  # optional in the layouts: a single server or one SuperPoD
    rank_id: str
    super_device_id: str | None = None

    @property
    def device(self) -> int:
        return int(self.device_id)  # the reader accepts whole numbers only

    @property
    def rank(self) -> int:
        return int(self.rank_id)


@dataclass
class RankServer:
    server_id: str
    devices: list[RankDevice] = field(default_factory=list)
    host_ip: str | None = None


@dataclass(frozen=True)
class SuperPod:
    super_pod_id: str
    server_ids: tuple[str, ...]


@dataclass
class RankTable:
    version: str
    servers: list[RankServer]
    source: str = ""
    status: str | None = None
    super_pods: list[SuperPod] = field(default_factory=list)

    @property
    def ranks(self) -> int:
        return sum(len(server.devices) for server in self.servers)


@dataclass(frozen=True, kw_only=True)
class RankProblem:
    """One disagreement between a table and the hosts. `host`/`device` name what it involves
    (None: the table as a whole); `place` names a table entry that is no host's."""

    message: str
    host: str | None = None
    device: int | None = None
    place: str = ""

    @property
    def where(self) -> str:
        """"sim2 device 3", "sim2", or the table entry: a fleet report's `involved`."""
        if self.host is not None and self.device is not None:
            return f"{self.host} device {self.device}"
        return self.host or self.place


@dataclass(frozen=True)
class HostDevices:
    """One host as a rank table lists it: its server id and its (device id, address) pairs.

    `host_ip` (written for A3) defaults to the server id; `super_pod_id` and
    `super_device_ids` (npu-smi info -t spod-info: Super Pod ID, SDID) make a SuperPoD table.
    """

    name: str
    server_id: str
    devices: list[tuple[int, str | None]]
    host_ip: str | None = None
    super_pod_id: str | None = None
    super_device_ids: dict[int, str] = field(default_factory=dict)
