"""`install -e/--extra-vars`: ansible-playbook's own forms, checked first, passed after ours."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ascend_env.ansible import runner
from ascend_env.ansible.extra_vars import extra_vars_args
from ascend_env.ansible.runner import PlaybookRun, run_playbook
from ascend_env.core.errors import UsageError
from tests.cli_invoke import invoke


def test_the_forms_ansible_playbook_takes_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                               ) -> None:
    (tmp_path / "site.yml").write_text("hdk_reboot_timeout: 90\n")
    monkeypatch.chdir(tmp_path)
    assert extra_vars_args(["hdk_reboot_timeout=90", "a=1 b=two", "@site.yml",
                            '{"ascend_extra_users": ["alice"]}']) == [
        "hdk_reboot_timeout=90", "a=1 b=two", f"@{tmp_path / 'site.yml'}",
        '{"ascend_extra_users": ["alice"]}']


@pytest.mark.parametrize(("value", "says"), [
    ("hdk_reboot_timeout", "expected key=value"),
    ("=90", "expected key=value"),
    ("", "expected key=value"),
    ("@no-such-file.yml", "is not a readable file"),
    ('{"a": ', "not valid JSON"),
    ('{"a": 1} x', "not valid JSON"),
])
def test_a_malformed_value_is_a_usage_error(value: str, says: str, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match=says):
        extra_vars_args([value])


def test_install_refuses_a_malformed_value_before_any_host(tmp_path: Path) -> None:
    result = invoke("install", "--profile", "910b", "--repo", str(tmp_path / "none"),
                    "-e", "no_equals_sign")
    assert result.code == 2
    assert "--extra-vars 'no_equals_sign': expected key=value" in result.err
    assert "Traceback" not in result.err


def test_they_reach_ansible_playbook_after_ascend_envs_own(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    """Later -e wins in ansible-playbook: the operator's values override ours."""
    recorder = tmp_path / "ansible-playbook"
    argv_file = tmp_path / "argv.json"
    recorder.write_text("#!/usr/bin/env python3\nimport json, sys\n"
                        f"json.dump(sys.argv[1:], open({str(argv_file)!r}, 'w'))\n")
    recorder.chmod(0o755)
    monkeypatch.setattr(runner, "ansible_playbook", lambda: str(recorder))
    options = PlaybookRun(host="node1", log_dir=tmp_path / "logs",
                             extra_args=["hdk_reboot_timeout=90", "@/etc/site.yml"])
    rc, _log, _events = run_playbook({"ascend_allow_reboot": True}, options)
    assert rc == 0
    argv = json.loads(argv_file.read_text())
    flags = [argv[i + 1] for i, arg in enumerate(argv) if arg == "-e"]
    assert flags[0].startswith("@") and flags[0].endswith("extra-vars.json")
    assert flags[1:] == ["hdk_reboot_timeout=90", "@/etc/site.yml"]
