"""`install -e/--extra-vars`: ansible-playbook's own forms, read with bounds, typed by the
install's model and the roles' argument specs before any host is touched."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any

import pytest

from ascend_env.ansible import runner
from ascend_env.ansible.extra_vars import check_extra_vars, read_extra_vars
from ascend_env.ansible.role_options import declared_options, playbook_roles
from ascend_env.ansible.variables import SiteVars
from ascend_env.core.errors import UsageError
from ascend_env.install.provision import InstallOptions
from ascend_env.repository.fetch import Source, fetch
from tests.cli_invoke import invoke
from tests.repository.test_fetch import overlay_for, plan_with, served
from tests.vendor_server import ServerState

__all__ = ["served"]  # the fixture, used by name


def test_the_forms_ansible_playbook_takes_are_read(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "vars.yml").write_text("hdk_reboot_timeout: 90\nascend_serial: 2\n")
    monkeypatch.chdir(tmp_path)
    assert read_extra_vars(["ascend_serial=1", "user_shell='/bin/sh -l' ascend_force=yes",
                            "@vars.yml", '{"ascend_extra_users": ["alice"]}',
                            "{ascend_stage_dir: /scratch}"]) == {
        # A later value wins, as in ansible-playbook; key=value gives strings.
        "ascend_serial": 2, "user_shell": "/bin/sh -l", "ascend_force": "yes",
        "hdk_reboot_timeout": 90, "ascend_extra_users": ["alice"],
        "ascend_stage_dir": "/scratch"}


@pytest.mark.parametrize(("value", "says"), [
    ("hdk_reboot_timeout", "expected key=value"),
    ("=90", "expected key=value"),
    ("", "expected key=value"),
    ("a=1 junk", "expected key=value"),
    ("a='x", "unbalanced quotes"),
    ("@no-such-file.yml", "cannot read --extra-vars file no-such-file.yml"),
    ('{"a": ', "not valid YAML or JSON"),
    ('{"a": 1} x', "not valid YAML or JSON"),
    ("[1, 2]", "not a mapping of variables"),
])
def test_a_malformed_value_is_a_usage_error(value: str, says: str, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match=says):
        read_extra_vars([value])


def test_hostile_files_are_refused_without_hanging(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # no writer: a plain open() would wait forever
    big = tmp_path / "big.yml"
    big.write_text("a: " + "x" * (1024 * 1024) + "\n")
    bomb = tmp_path / "bomb.yml"
    bomb.write_text("a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(8)))
    duplicate = tmp_path / "twice.yml"
    duplicate.write_text("ascend_serial: 1\nascend_serial: 0\n")
    for path, says in ((fifo, "a FIFO"), (tmp_path, "a directory"),
                       (Path("/dev/zero"), "a character device"),
                       (big, "more than the 1048576"), (bomb, "alias bomb"),
                       (duplicate, "duplicate key 'ascend_serial'")):
        with pytest.raises(UsageError, match=says):
            read_extra_vars([f"@{path}"])


def test_each_variable_is_typed_by_what_takes_it() -> None:
    typed = check_extra_vars({"ascend_serial": "3", "ascend_force": "yes",
                              "hdk_reboot_timeout": "90", "host_lock_wait": "2.5",
                              "ascend_extra_users": "alice,bob", "ansible_user": "root"})
    # The model's fields as the model types them, role options as Ansible's validator of
    # role arguments converts them, Ansible's own variables as given.
    assert typed == {"ascend_serial": 3, "ascend_force": True, "hdk_reboot_timeout": 90,
                     "host_lock_wait": 2.5, "ascend_extra_users": ["alice", "bob"],
                     "ansible_user": "root"}


@pytest.mark.parametrize(("variables", "says"), [
    ({"ascend_serial": "abc"}, "ascend_serial='abc': ascend_serial: Input should be a valid "
                               "integer"),
    ({"ascend_serial": -1}, "ascend_serial: Input should be greater than or equal to 0"),
    ({"ascend_arch": "sparc"}, "ascend_arch: Input should be 'aarch64' or 'x86_64'"),
    ({"ascend_targets": {"packages": ["kernels"]}}, r"ascend_targets\.packages\.0: Input "),
    ({"hdk_reboot_timeout": "soon"}, "hdk_reboot_timeout='soon': role hdk_reboot refuses it: "
                                     "argument 'hdk_reboot_timeout' is of type str"),
    ({"preflight_min_free_mb": [1]}, "preflight_min_free_mb=.*role preflight refuses it"),
    ({"ascend_serail": "2"}, "ascend_serail: no role of site.yml takes this variable"),
    ({"ascend_lock_wait": "60"}, "ascend_lock_wait: set by ascend-env itself.*--wait-lock"),
    ({"host_lock_holder": {}}, "host_lock_holder: set by ascend-env itself"),
    ({"ansible_control_path_dir": "/tmp"}, "ansible_control_path_dir: set by ascend-env"),
])
def test_a_value_the_model_or_a_role_refuses_names_the_variable(variables: dict[str, Any],
                                                                says: str) -> None:
    with pytest.raises(UsageError, match=says) as raised:
        check_extra_vars(variables)
    assert raised.value.exit_code == 2
    # Any caller of install, not only the command line, gets the same check.
    with pytest.raises(UsageError, match=says):
        InstallOptions(repo=Path("repo"), extra_vars=variables)


def test_every_option_a_site_yml_role_declares_may_be_set() -> None:
    assert set(playbook_roles("site.yml")) == {
        "host_lock", "preflight", "ascend", "prerequisites", "user", "firmware", "driver",
        "hdk_reboot", "cann", "python", "env", "state"}
    options = declared_options("site.yml")
    assert {"hdk_reboot_timeout", "hdk_reboot_command", "user_shell", "cann_install_for_all",
            "preflight_min_free_mb", "ascend_install_path", "ascend_boot_id_file"} <= set(options)
    assert not {"fix_network_ip_ports", "fix_python_deps_packages"} & set(options)  # fix.yml's
    assert set(SiteVars.model_fields) - {"ascend_serial", "ascend_max_fail_percentage"} <= \
        set(options)


def test_install_refuses_a_malformed_value_before_any_host(tmp_path: Path) -> None:
    result = invoke("install", "--profile", "910b", "--repo", str(tmp_path / "none"),
                    "-e", "no_equals_sign")
    assert result.code == 2
    assert "--extra-vars 'no_equals_sign': expected key=value" in result.err
    assert "Traceback" not in result.err


def test_install_with_a_value_the_model_refuses_stops_before_any_connection(
        served: tuple[str, ServerState, dict[str, bytes]], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The same command with a good value goes on to ansible-playbook; with `ascend_serial=abc`
    nothing runs and nothing connects to the inventory's host (an address nobody answers)."""
    url, _, files = served
    overlay = tmp_path / "overlay.json"
    overlay.write_text(json.dumps(overlay_for(files, url)))
    assert fetch(plan_with(overlay_for(files, url), tmp_path), tmp_path / "repo",
                 Source()).complete
    inventory = tmp_path / "hosts.ini"
    inventory.write_text("node1 ansible_host=192.0.2.1 ansible_user=root\n")  # TEST-NET-1
    started = tmp_path / "argv.json"
    recorder = tmp_path / "ansible-playbook"
    recorder.write_text("#!/usr/bin/env python3\nimport json, sys\n"
                        f"json.dump(sys.argv[1:], open({str(started)!r}, 'w'))\n")
    recorder.chmod(0o755)
    monkeypatch.setattr(runner, "ansible_playbook", lambda: str(recorder))
    connections: list[object] = []
    real_connect = socket.socket.connect

    def connect(self: socket.socket, address: Any) -> None:
        connections.append(address)
        real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    logs = tmp_path / "logs"

    def install(*extra: str) -> tuple[int, str]:
        result = invoke("install", "--profile", "310p", "--catalogue", str(overlay),
                        "--repo", str(tmp_path / "repo"), "--inventory", str(inventory),
                        "--components", "driver,firmware,cann", "--no-doctor",
                        "--log-dir", str(logs), *extra)
        return result.code, result.err

    code, err = install("-e", "ascend_serial=abc", "-e", "hdk_reboot_timeout=90")
    assert code == 2, err
    assert "--extra-vars ascend_serial='abc': ascend_serial: Input should be a valid " \
           "integer" in err
    assert "Traceback" not in err
    assert not started.exists() and not logs.exists() and connections == []

    install("-e", "ascend_serial=1", "-e", "hdk_reboot_timeout=90")
    argv = json.loads(started.read_text())
    assert [argv[i + 1] for i, arg in enumerate(argv) if arg == "-e"] == [
        f"@{next(logs.glob('*/extra-vars.json'))}"]
    sent = json.loads(next(logs.glob("*/extra-vars.json")).read_text())
    assert (sent["ascend_serial"], sent["hdk_reboot_timeout"]) == (1, 90)
