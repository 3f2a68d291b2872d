"""system.os through `doctor --from`: captures that differ only in /etc/os-release (and the
machine arch) report the OS key and package manager of every real os-release text, and an OS
outside the data warns naming the nearest key and how to add one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ascend_env.facts import system
from ascend_env.facts.capture import CommandResult, save_captures
from tests.cli_invoke import invoke
from tests.facts.captures import host_910b
from tests.spec.test_os_keys import EXPECTED, NEAREST, SAMPLES

ALL = [(name, arch, key, manager) for name, cases in EXPECTED.items()
       for arch, key, manager in cases]


def capture_with(name: str, arch: str, host: str) -> Any:
    """The same provisioned host, with this os-release and machine arch."""
    base = host_910b()
    files = {path: text for path, text in base.files.items() if not path.endswith("os-release")}
    files["/etc/os-release"] = (SAMPLES / f"{name}.txt").read_text(encoding="utf-8")
    commands = {**base.commands, system.UNAME_M: CommandResult(argv=[], rc=0, stdout=arch + "\n")}
    return base.model_copy(update={"host": host, "files": files, "commands": commands})


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """One `doctor --from` over a fleet capture: a host per (text, arch)."""
    hosts = {f"h{i}": case for i, case in enumerate(ALL)}
    path = tmp_path_factory.mktemp("os") / "fleet.json"
    save_captures(path, [capture_with(name, arch, host)
                         for host, (name, arch, _, _) in hosts.items()])
    result = invoke("doctor", "--from", str(path), "--only", "system.os", "--json")
    assert result.code == 0, result.err  # warnings only: exit 0
    report = json.loads(result.out)
    by_host = {r["host"]: r for r in report["hosts"]}
    return {f"{name}@{arch}": next(c for c in by_host[host]["checks"] if c["id"] == "system.os")
            for host, (name, arch, _, _) in hosts.items()}


@pytest.mark.parametrize(("name", "arch", "key", "manager"), ALL,
                         ids=[f"{n}-{a}" for n, a, _, _ in ALL])
def test_system_os_reports_key_and_manager(judged: dict[str, dict[str, Any]], name: str,
                                           arch: str, key: str | None,
                                           manager: str | None) -> None:
    check = judged[f"{name}@{arch}"]
    assert check["category"] == "system" and check["level"] == 1
    assert check["evidence"]["os_key"] == key
    assert check["evidence"]["package_manager"] == manager
    if key is not None:
        assert check["status"] == "pass", check["message"]
        assert check["observed"] == f"{key} ({manager})"
    else:
        nearest = NEAREST[(name, arch)]
        assert check["status"] == "warn"
        assert check["evidence"]["nearest"] == nearest and nearest in check["message"]
        assert "os.d" in (check["fix"] or {}).get("command", ""), check


def test_at_least_25_texts_pass_with_their_manager(judged: dict[str, dict[str, Any]]) -> None:
    passed = {k.split("@")[0] for k, c in judged.items() if c["status"] == "pass"}
    assert len(passed) >= 25
    managers = {c["evidence"]["package_manager"] for c in judged.values()}
    assert managers == {"dnf", "yum", "apt", None}


def test_no_os_release_warns_never_passes(tmp_path: Path) -> None:
    base = host_910b()
    files = {p: t for p, t in base.files.items() if not p.endswith("os-release")}
    path = save_captures(tmp_path / "c.json", [base.model_copy(update={"files": files})])
    result = invoke("doctor", "--from", str(path), "--only", "system.os", "--json")
    check = json.loads(result.out)["checks"][0]
    assert check["status"] == "warn" and check["evidence"]["os_key"] is None


def test_spec_naming_another_os_warns(tmp_path: Path) -> None:
    """The profile says Ubuntu 22.04; an openEuler host is reported, not silently passed."""
    path = save_captures(tmp_path / "c.json", [capture_with("openeuler-22.03-sp3", "aarch64",
                                                            "oe")])
    result = invoke("doctor", "--from", str(path), "--profile", "910b", "--only", "system.os",
                    "--json")
    check = json.loads(result.out)["checks"][0]
    assert check["status"] == "warn"
    assert "ubuntu-22.04-aarch64" in check["message"]
    assert check["evidence"]["os_key"] == "openeuler-22.03-sp3-aarch64"
