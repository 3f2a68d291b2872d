"""The spec's `network` (the NPUs' RoCE address plan) and `hccl` (HCCL's environment) sections.

Every NPU of a multi-host job needs an address on its RoCE port (`hccn_tool -i N -ip -s`,
persisted in /etc/hccn.conf). The usual plan gives each device index its own subnet, so device
i of every host talks to device i of the others (vllm-ascend's multi-node guides and
ascend-deployer's hccn inventory both lay it out so); `hosts:` names addresses one by one where
a site's plan is irregular. The plan is checked here for what can be checked without hosts
(valid addresses, no overlapping subnets, no address twice); network_plan.py turns it into
per-host, per-device addresses and refuses a plan that does not fit the fleet.
"""

from __future__ import annotations

import ipaddress
from typing import Literal

from pydantic import Field, field_validator, model_validator

from ascend_env.spec.section import Section

NetworkPolicy = Literal["first", "none"]


def _ipv4(value: str, what: str) -> ipaddress.IPv4Address:
    try:
        return ipaddress.IPv4Address(value)
    except ipaddress.AddressValueError as exc:
        raise ValueError(f"{what} {value!r} is not an IPv4 address") from exc


class Network(Section):
    """The NPUs' RoCE addresses: per device index a subnet, or explicit addresses per host."""

    netmask: str | None = Field(None, description="netmask of every port, e.g. 255.255.255.0; "
                                "default: the subnets' own")
    subnets: list[str] = Field(default_factory=list, max_length=64,
                               description="per device index a subnet (CIDR): device i of host k "
                               "gets address first_host - 1 + k of subnets[i]")
    first_host: int = Field(1, ge=1, le=65534, strict=True,
                            description="host part of the first host's address in each subnet")
    hosts: dict[str, list[str]] = Field(default_factory=dict, max_length=4096,
                                        description="explicit addresses per inventory host, by "
                                        "device index (instead of subnets)")
    gateway: NetworkPolicy | list[str] = Field(
        "first", description="'first': each subnet's first address; 'none'; or one per index")
    netdetect: Literal["gateway", "none"] | list[str] = Field(
        "gateway", description="detect address hccn_tool pings: the gateway, none, or per index")

    @field_validator("netmask")
    @classmethod
    def _netmask(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                ipaddress.IPv4Network(f"0.0.0.0/{value}")
            except ValueError as exc:
                raise ValueError(f"{value!r} is not a netmask (like 255.255.255.0)") from exc
        return value

    @field_validator("subnets")
    @classmethod
    def _subnets(cls, values: list[str]) -> list[str]:
        nets = []
        for index, value in enumerate(values):
            try:
                nets.append(ipaddress.IPv4Network(value, strict=True))
            except ValueError as exc:
                raise ValueError(f"subnets[{index}] {value!r} is not an IPv4 subnet "
                                 f"(CIDR, host bits zero): {exc}") from exc
        for i, a in enumerate(nets):
            for j in range(i):
                if a.overlaps(nets[j]):
                    raise ValueError(f"subnets[{j}] {nets[j]} and subnets[{i}] {a} overlap: "
                                     "one subnet per device index")
        return values

    @field_validator("hosts")
    @classmethod
    def _hosts(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        seen: dict[ipaddress.IPv4Address, str] = {}
        for host, addresses in value.items():
            for index, address in enumerate(addresses):
                ip = _ipv4(address, f"{host}[{index}]")
                where = f"{host} device {index}"
                if ip in seen:
                    raise ValueError(f"{address} is given twice ({seen[ip]} and {where}): "
                                     "one address per device")
                seen[ip] = where
        return value

    @model_validator(mode="after")
    def _one_plan(self) -> Network:
        if bool(self.subnets) == bool(self.hosts):
            raise ValueError("give either `subnets` (one per device index) or `hosts` "
                             "(addresses per host), not both or neither")
        if self.hosts and self.netmask is None:
            raise ValueError("`hosts` needs `netmask`")
        if self.hosts and self.gateway == "first":
            raise ValueError("gateway 'first' needs `subnets`; with `hosts` give one gateway "
                             "per device index or 'none'")
        for name in ("gateway", "netdetect"):
            values = getattr(self, name)
            if isinstance(values, list):
                for index, value in enumerate(values):
                    _ipv4(value, f"{name}[{index}]")
        return self


class Hccl(Section):
    """HCCL's environment on every rank (CANN's environment-variable reference, e.g.
    https://www.hiascend.com/document/detail/zh/canncommercial/850/maintenref/envvar/envref_07_0149.html
    for HCCL_CONNECT_TIMEOUT: integer, [120, 7200], default 120 s; HCCL_EXEC_TIMEOUT [68, 17340]
    in the CANN 6.0.1 reference, 0 turns the limit off in later ones; HCCL_BUFFSIZE in MB,
    default 200)."""

    connect_timeout: int | None = Field(None, ge=120, le=7200, strict=True,
                                        description="HCCL_CONNECT_TIMEOUT (s)")
    exec_timeout: int | None = Field(None, ge=0, le=17340, strict=True,
                                     description="HCCL_EXEC_TIMEOUT (s)")
    buffsize_mb: int | None = Field(None, ge=1, le=65536, strict=True,
                                    description="HCCL_BUFFSIZE (MB)")
    if_ip: Literal["per-host", "unset"] | None = Field(
        None, description="HCCL_IF_IP: 'per-host' = every host sets its own address, "
        "'unset' = no host sets it (HCCL picks the NIC)")
    socket_ifname: str | None = Field(None, pattern=r"^[=^]?[A-Za-z0-9_.:,-]{1,64}$",
                                      description="HCCL_SOCKET_IFNAME, e.g. eth0 or =eth0")

    def expected_env(self) -> dict[str, str]:
        """The HCCL_* values every rank must carry (HCCL_IF_IP is per host: not here)."""
        values = {"HCCL_CONNECT_TIMEOUT": self.connect_timeout,
                  "HCCL_EXEC_TIMEOUT": self.exec_timeout, "HCCL_BUFFSIZE": self.buffsize_mb,
                  "HCCL_SOCKET_IFNAME": self.socket_ifname}
        return {key: str(value) for key, value in values.items() if value is not None}
