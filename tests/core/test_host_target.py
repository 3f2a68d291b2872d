"""The one --host grammar (ascend_env/core/host_target.py)."""

from __future__ import annotations

import pytest

from ascend_env.core.errors import UsageError
from ascend_env.core.host_target import parse_host


@pytest.mark.parametrize(("text", "scheme", "host", "user", "port"), [
    ("node1", "ssh", "node1", None, None),
    ("root@node1", "ssh", "node1", "root", None),
    ("ssh://root@10.0.0.5:2222", "ssh", "10.0.0.5", "root", 2222),
    ("ssh://[fe80::1]:22", "ssh", "fe80::1", None, 22),
    ("fe80::1", "ssh", "fe80::1", None, None),
    ("local://", "local", "", None, None),
    ("docker://ctr", "docker", "ctr", None, None),
    ("podman://root@ctr", "podman", "ctr", "root", None),
])
def test_targets_parse(text: str, scheme: str, host: str, user: str | None,
                       port: int | None) -> None:
    target = parse_host(text)
    assert (target.scheme, target.host, target.user, target.port) == (scheme, host, user, port)


@pytest.mark.parametrize("text", ["", "ssh://", "ssh://root@", "@node", "local://node",
                                  "ftp://node", "node:0", "node:99999", "node:ssh",
                                  "no de", "node\n", "ssh://[::1]x", "a:b:c"])
def test_targets_that_name_no_host_are_refused(text: str) -> None:
    with pytest.raises(UsageError, match="--host"):
        parse_host(text)


@pytest.mark.parametrize(("text", "args"), [
    ("node1", ["-i", "node1,"]),
    ("ssh://admin@node1:2222", ["-i", "node1:2222,", "-u", "admin"]),
    ("ssh://[fe80::1]:22", ["-i", "[fe80::1]:22,"]),
    ("local://", ["-i", "localhost,", "-c", "local"]),
])
def test_ansible_reaches_ssh_hosts_and_this_machine(text: str, args: list[str]) -> None:
    assert parse_host(text).ansible_args("install") == args


@pytest.mark.parametrize("text", ["docker://ctr", "podman://ctr", "ansible://node"])
def test_ansible_refuses_the_other_transports_by_name(text: str) -> None:
    with pytest.raises(UsageError, match=r"install --host .*: Ansible reaches hosts over ssh"):
        parse_host(text).ansible_args("install")
