"""One `--host` grammar for every command: what a target names and which commands can use it.

`NAME`, `USER@NAME` and `ssh://[USER@]NAME[:PORT]` are a host over ssh; `local://` is this
machine; `docker://CTR`, `podman://CTR` and `ansible://NAME` are testinfra's other transports
(https://testinfra.readthedocs.io/en/latest/backends.html). The doctor, collect, smoke and perf
reach all of them through testinfra; install and `doctor --fix` run Ansible, which reaches
ssh hosts and this machine only, so they refuse the others by name instead of passing a URL
through as a host name.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from ascend_env.core.errors import UsageError

SCHEMES = ("ssh", "local", "docker", "podman", "ansible")
_EXAMPLES = "ssh://user@node[:port], user@node, node, local://, docker://ctr or podman://ctr"


@dataclass(frozen=True)
class HostTarget:
    """A parsed --host: how it is reached and where."""

    text: str
    scheme: str
    host: str = ""
    user: str | None = None
    port: int | None = None

    @property
    def url(self) -> str:
        """The testinfra URL (a bare name is ssh)."""
        return self.text if "://" in self.text else f"ssh://{self.text}"

    @property
    def name(self) -> str:
        """What reports call it: the URL without its scheme, `localhost` for local://."""
        return self.text.split("://", 1)[1] if "://" in self.text else self.text or "localhost"

    def ansible_args(self, command: str) -> list[str]:
        """ansible-playbook's inventory and connection arguments for this one target."""
        if self.scheme == "local":
            return ["-i", "localhost,", "-c", "local"]
        if self.scheme != "ssh":
            raise UsageError(f"{command} --host {self.text}: Ansible reaches hosts over ssh or "
                             f"this machine (local://); a {self.scheme}:// target is for the "
                             "doctor, collect, smoke and perf")
        host = f"[{self.host}]" if ":" in self.host else self.host
        args = ["-i", f"{host}:{self.port}," if self.port else f"{self.host},"]
        return [*args, "-u", self.user] if self.user else args


def _control(text: str) -> bool:
    return any(ord(c) < 32 or ord(c) == 127 or c.isspace() for c in text)


def parse_host(text: str) -> HostTarget:
    """The target a --host names; a usage error (exit 2) for one that names none."""
    if not text.strip():
        raise UsageError(f"--host {text!r} names no host; give {_EXAMPLES}")
    if _control(text):
        raise UsageError(f"--host {text!r}: a host name holds no spaces or control characters")
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "ssh", text
    if scheme not in SCHEMES:
        raise UsageError(f"--host {text!r}: unknown transport {scheme}://; give {_EXAMPLES}")
    if scheme == "local":
        if rest:  # testinfra ignores it: local://node would check this machine
            raise UsageError(f"--host {text!r}: local:// is this machine and takes no host "
                             "name")
        return HostTarget(text=text, scheme="local")
    user, at, address = rest.rpartition("@")
    address = address.split("?", 1)[0]
    port: int | None = None
    if scheme == "ssh":
        address, port = _host_port(text, address)
    if not address or (at and not user):
        raise UsageError(f"--host {text!r} names no host; give {_EXAMPLES}")
    return HostTarget(text=text, scheme=scheme, host=address, user=user or None, port=port)


def _host_port(text: str, address: str) -> tuple[str, int | None]:
    """`node`, `node:22`, `[::1]:22` or a bare IPv6 address."""
    if address.startswith("["):
        inner, _, after = address[1:].partition("]")
        port_text = after.removeprefix(":") if after.startswith(":") else None
        if after and port_text is None:
            raise UsageError(f"--host {text!r}: not a host (text after ']')")
        return inner, _port(text, port_text)
    if address.count(":") > 1:  # IPv6 without brackets: no port
        try:
            ipaddress.IPv6Address(address)
        except ValueError:
            raise UsageError(f"--host {text!r}: not a host or address") from None
        return address, None
    host, sep, port_text = address.partition(":")
    return host, _port(text, port_text) if sep else None


def _port(text: str, port: str | None) -> int | None:
    if port is None:
        return None
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--host {text!r}: port {port!r} is not a TCP port (1-65535)")
    return int(port)
