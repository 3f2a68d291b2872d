"""The spec's `network` (the NPUs' RoCE address plan) and `hccl` (HCCL's environment) sections.

Every NPU of a multi-host job needs an address on its RoCE port (`hccn_tool -i N -ip -s`,
persisted in /etc/hccn.conf). The vendor's rule for clusters is that device i of every server
sits in one subnet ("the devices corresponding to each AI server must be in the same network
segment", and every address unique: Huawei's PyTorch multi-server guide, quoted in a public
GitHub file whose repository was not recorded; public notes quoting the same commands name
as the official page https://support.huaweicloud.com/instg-cli-cann/atlascli_03_0047.html).
The usual plan gives each device index its own subnet (`subnets:`); `hosts:` names addresses
one by one where a site's plan is irregular (the first-generation Atlas 800 pairs devices 0/4,
1/5, 2/6, 3/7 in one subnet, same source; many sites put all eight ports of a host in one
subnet, as the real hccn.conf in tests/data/hccn_conf/ does).

What can be checked without hosts is checked here (valid addresses and netmasks, no
overlapping subnets, no address twice, gateways inside their subnet, device i of every host in
one subnet); network_plan.py turns the plan into per-host, per-device addresses and refuses a
plan that does not fit the fleet.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    PlainValidator,
    StringConstraints,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from ascend_env.spec.section import Section


class KeyedValueError(ValueError):
    """A model check's error naming the key it is about, below the model that raised it, so a
    report points at `network.hosts.sim2` instead of printing the whole section as the value."""

    def __init__(self, key: str, message: str, value: Any = None) -> None:
        super().__init__(message)
        self.key = key
        self.value = value


def _ipv4(value: object, what: str) -> ipaddress.IPv4Address:
    if not isinstance(value, str):
        raise ValueError(f"{what} {value!r} is not an IPv4 address (give it as a string)")
    try:
        return ipaddress.IPv4Address(value)
    except ipaddress.AddressValueError as exc:
        raise ValueError(f"{what} {value!r} is not an IPv4 address") from exc


MAX_DEVICES = 64  # hardware.devices' own bound


def _policy_validator(words: tuple[str, ...]) -> Callable[[object], str | list[str]]:
    """A per-device-index setting: one of `words`, one address for every index, or a list of
    addresses by index. One validator instead of a union, so a bad value gets one message that
    names the choices instead of one per union member."""

    def validate(value: object) -> str | list[str]:
        if isinstance(value, str) and value in words:
            return value
        if isinstance(value, str):
            try:
                return str(_ipv4(value, "address"))
            except ValueError:
                raise ValueError(f"neither {' nor '.join(words)} nor an IPv4 address") from None
        if isinstance(value, list):
            if len(value) > MAX_DEVICES:
                raise ValueError(f"{len(value)} values: at most {MAX_DEVICES} device indexes")
            return [str(_ipv4(item, f"[{index}]")) for index, item in enumerate(value)]
        raise ValueError(f"must be {', '.join(words)}, an IPv4 address or a list of them by "
                         "device index")

    return validate


def _policy_schema(words: tuple[str, ...]) -> dict[str, Any]:
    ipv4 = {"type": "string", "format": "ipv4"}
    return {"anyOf": [{"enum": list(words)}, ipv4,
                      {"type": "array", "items": ipv4, "maxItems": MAX_DEVICES}]}


_GATEWAY_WORDS = ("first", "none")
_DETECT_WORDS = ("gateway", "none")
GatewayPolicy = Annotated[str | list[str], PlainValidator(_policy_validator(_GATEWAY_WORDS)),
                          WithJsonSchema(_policy_schema(_GATEWAY_WORDS))]
DetectPolicy = Annotated[str | list[str], PlainValidator(_policy_validator(_DETECT_WORDS)),
                         WithJsonSchema(_policy_schema(_DETECT_WORDS))]
# An inventory host's name as Ansible and the transport know it: no blanks or control
# characters, at most a DNS name's length.
HostName = Annotated[str, StringConstraints(min_length=1, max_length=253, pattern=r"^[^\s]+$")]


def index_value(policy: str | list[str], index: int, first: str | None) -> str | None:
    """The address a gateway/netdetect policy gives device `index`; `first` is what 'first' or
    'gateway' stand for there (None: nothing is set)."""
    if isinstance(policy, list):
        return policy[index] if index < len(policy) else None
    if policy in ("first", "gateway"):
        return first
    return None if policy == "none" else policy


class Network(Section):
    """The NPUs' RoCE addresses: per device index a subnet, or explicit addresses per host."""

    netmask: str | None = Field(None, description="netmask of every port, e.g. 255.255.255.0; "
                                "with `subnets` it must be theirs (default), `hosts` needs it")
    subnets: list[str] = Field(default_factory=list, max_length=MAX_DEVICES,
                               description="per device index a subnet (CIDR): device i of host k "
                               "(inventory order, from 1) gets address first_host - 1 + k of "
                               "subnets[i]")
    first_host: int = Field(1, ge=1, le=65534, strict=True,
                            description="host part of the first host's address in each subnet "
                            "(11: host 1 gets .11)")
    hosts: dict[HostName, Annotated[list[str], Field(max_length=MAX_DEVICES)]] = Field(
        default_factory=dict, max_length=4096,
        description="explicit addresses per inventory host, by device index (instead of subnets)")
    gateway: GatewayPolicy = Field(
        "first", description="'first': each subnet's first address; 'none'; one address for "
        "every device; or one per device index")
    netdetect: DetectPolicy = Field(
        "gateway", description="the detect address hccn_tool pings to judge a port's health: "
        "the gateway, 'none', one address, or one per device index")

    @field_validator("netmask")
    @classmethod
    def _netmask(cls, value: str | None) -> str | None:
        if value is None:
            return value
        try:
            mask = ipaddress.IPv4Network(f"0.0.0.0/{value}")
        except ValueError:
            mask = None
        # ipaddress also takes a prefix length ("24") or a host mask ("0.0.0.255") there; the
        # value goes to `hccn_tool -ip -s ... netmask M` as written, so only the dotted netmask
        # itself is a netmask.
        if mask is None or str(mask.netmask) != value or mask.prefixlen == 0:
            raise ValueError(f"{value!r} is not a netmask (dotted, like 255.255.255.0)")
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
            if nets[-1].prefixlen > 30:
                raise ValueError(f"subnets[{index}] {value}: a /{nets[-1].prefixlen} holds no "
                                 "address for a host beside its gateway")
        for i, a in enumerate(nets):
            for j in range(i):
                if a.overlaps(nets[j]):
                    raise ValueError(f"subnets[{j}] {nets[j]} and subnets[{i}] {a} overlap: "
                                     "one subnet per device index (devices that share a subnet, "
                                     "as Atlas 800's 0/4 pairs do: list addresses with `hosts`)")
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
        if self.subnets and self.hosts:
            raise KeyedValueError("hosts", "give either `subnets` (one per device index) or "
                                  "`hosts` (addresses per host), not both")
        if not self.subnets and not self.hosts:
            raise KeyedValueError("", "give `subnets` (one per device index) or `hosts` "
                                  "(addresses per host): neither is there")
        if self.subnets:
            self._check_subnets()
        else:
            self._check_hosts()
        return self

    def _check_subnets(self) -> None:
        nets = [ipaddress.IPv4Network(s) for s in self.subnets]
        if self.netmask is not None:
            for index, net in enumerate(nets):
                if str(net.netmask) != self.netmask:
                    raise KeyedValueError("netmask", f"differs from subnets[{index}] {net} "
                                          f"({net.netmask}): leave netmask out or make them "
                                          "agree", self.netmask)
        for index, net in enumerate(nets):
            _gateway_in(self.gateway, index, net, f"subnets[{index}] {net}")

    def _check_hosts(self) -> None:
        if self.netmask is None:
            raise KeyedValueError("netmask", "`hosts` needs `netmask` (the ports' netmask)")
        if self.gateway == "first":
            raise KeyedValueError("gateway", "gateway 'first' needs `subnets`; with `hosts` "
                                  "give one gateway, one per device index, or 'none'", "first")
        # Device i of every host in one subnet: the vendor's rule for clusters (module note),
        # and what doctor's fleet check network.subnets holds the live ports to.
        subnet_of: dict[int, tuple[str, ipaddress.IPv4Network]] = {}
        for host, addresses in self.hosts.items():
            for index, address in enumerate(addresses):
                net = ipaddress.IPv4Network(f"{address}/{self.netmask}", strict=False)
                key = f"hosts.{host}[{index}]"
                if net.prefixlen <= 30 and ipaddress.IPv4Address(address) in (
                        net.network_address, net.broadcast_address):
                    raise KeyedValueError(key, f"the network or broadcast address of {net}",
                                          address)
                first = subnet_of.setdefault(index, (host, net))
                if first[1] != net:
                    raise KeyedValueError(key, f"in {net}, but device {index} of {first[0]} "
                                          f"is in {first[1]}: device {index} of every host "
                                          "must share one subnet", address)
        for index, (_host, net) in sorted(subnet_of.items()):
            _gateway_in(self.gateway, index, net, f"device {index}'s subnet {net}")


def _gateway_in(policy: str | list[str], index: int, net: ipaddress.IPv4Network,
                where: str) -> None:
    """A port reaches its gateway only inside its own subnet (hccn_tool sets no route)."""
    gateway = index_value(policy, index, None)
    if gateway is None:
        return
    ip = ipaddress.IPv4Address(gateway)
    key = f"gateway[{index}]" if isinstance(policy, list) else "gateway"
    if ip not in net or ip in (net.network_address, net.broadcast_address):
        raise KeyedValueError(key, f"not a host address of {where}: a port reaches its "
                              "gateway only inside its own subnet", gateway)


# HCCL_SOCKET_IFNAME: "eth,enp" (prefixes), "^eth" (not these prefixes), "=eth0,enp0" (these
# NICs), "^=eth0" (not these NICs) (reference page envref_07_0075.html, same releases). A
# Linux interface name is at most 15 characters.
_IFNAMES = r"^(\^?=?)[A-Za-z0-9_.:-]{1,15}(,[A-Za-z0-9_.:-]{1,15}){0,31}$"


class Hccl(Section):
    """HCCL's environment on every rank, from CANN's environment-variable reference
    (https://www.hiascend.com/document/detail/zh/canncommercial/850/maintenref/envvar/envref_07_0149.html
    for HCCL_CONNECT_TIMEOUT: integer, [120, 7200], default 120 s; envref_07_0080.html for
    HCCL_BUFFSIZE: integer MB >= 1, default 200; HCCL_EXEC_TIMEOUT: its range differs by chip,
    chips.yaml's hccl.exec_timeout_s, checked by EnvSpec)."""

    connect_timeout: int | None = Field(None, ge=120, le=7200, strict=True,
                                        description="HCCL_CONNECT_TIMEOUT (s), 120..7200")
    exec_timeout: int | None = Field(None, ge=0, le=2147483647, strict=True,
                                     description="HCCL_EXEC_TIMEOUT (s), in the chip's "
                                     "range (chips.yaml hccl.exec_timeout_s; 0 = no limit "
                                     "where the range starts at 0)")
    # No source states an upper bound; 64 GiB per buffer is past any chip's memory.
    buffsize_mb: int | None = Field(None, ge=1, le=65536, strict=True,
                                    description="HCCL_BUFFSIZE (MB), default 200")
    if_ip: Literal["any", "per-host"] | None = Field(
        None, description="HCCL_IF_IP: 'per-host' = every host must set it to one of its own "
        "addresses; 'any' (or unset) = not required (HCCL picks the NIC)")
    socket_ifname: str | None = Field(None, max_length=512, pattern=_IFNAMES,
                                      description="HCCL_SOCKET_IFNAME, e.g. =eth0, eth,enp or "
                                      "^=docker0")

    @property
    def if_ip_policy(self) -> str:
        """The HCCL_IF_IP policy under the contract's name: 'per-host' or 'any'."""
        return self.if_ip or "any"

    def expected_env(self) -> dict[str, str]:
        """The HCCL_* values every rank must carry (HCCL_IF_IP is per host: not here)."""
        values = {"HCCL_CONNECT_TIMEOUT": self.connect_timeout,
                  "HCCL_EXEC_TIMEOUT": self.exec_timeout, "HCCL_BUFFSIZE": self.buffsize_mb,
                  "HCCL_SOCKET_IFNAME": self.socket_ifname}
        return {key: str(value) for key, value in values.items() if value is not None}
