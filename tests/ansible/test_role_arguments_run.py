"""site.yml for real: ansible-playbook on this machine (`-c local`, check mode, the managed
files pointed into a temporary folder), with the variables `install` builds and an inventory
that sets values per host. A wrong per-host value is refused by the role's argument
validation (or, for the install path and user, by preflight's first tasks) before any task
reads or changes the host; a good one is what the role uses; `--tags env` runs that role
alone after preflight.
"""

from __future__ import annotations

import platform
import sys
from pathlib import Path
from typing import Any

import pytest

from ascend_env.ansible.runner import Event, PlaybookRun, run_playbook, summarize
from ascend_env.ansible.variables import SiteVars
from ascend_env.install.provision import InstallOptions
from tests.ansible.conftest import profile_spec, site_vars_of

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
VALIDATION = "Validating arguments against arg spec"


@pytest.fixture
def local_vars(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """What `install --components env` builds for this machine's architecture; this machine
    has no Ascend card, which is what the spec is told to expect."""
    # ansible-playbook loads the filter plugins, which import ascend_env: this tree's.
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    repo = tmp_path / "repo"
    options = InstallOptions(repo=repo, components=["env"], log_dir=tmp_path / "logs",
                             extra_vars={"ascend_pci_expected": 0})
    variables = site_vars_of(profile_spec(hardware={"arch": platform.machine()}), repo,
                             options)
    return variables.model_dump(mode="json")


def inventory(tmp_path: Path, hosts: dict[str, str], groups: str = "") -> Path:
    """Local hosts with their own variables (and `groups`, INI sections after them); each
    writes its managed files under tmp_path."""
    lines = []
    for name, extra in hosts.items():
        files = " ".join(f"{var}={tmp_path / name}-{leaf}" for var, leaf in (
            ("env_profile_file", "ascend-env.sh"), ("env_ld_conf_file", "ascend-env.conf"),
            ("fix_aicpu_threads_file", "threads.sh")))
        lines.append(f"{name} ansible_connection=local ansible_python_interpreter="
                     f"{sys.executable} {files} {extra}")
    path = tmp_path / "hosts.ini"
    path.write_text("\n".join(lines) + "\n" + groups)
    return path


def run(tmp_path: Path, variables: dict[str, Any], hosts: dict[str, str],
        groups: str = "") -> tuple[int, str, list[Event]]:
    rc, log, events = run_playbook(variables, PlaybookRun(
        inventory=inventory(tmp_path, hosts, groups), tags=["env"], check=True,
        log_dir=tmp_path / "runs"))
    return rc, log.read_text(encoding="utf-8"), events


def results(events: list[Event], host: str) -> list[Event]:
    return [e for e in events if e["event"] == "result" and e["host"] == host]


def ran(events: list[Event], host: str) -> list[str]:
    """The roles' tasks that did something on `host` (ok, changed or failed), argument
    checks aside (an include's own result is not a role's task: no `role : ` prefix)."""
    return [e["task"] for e in results(events, host)
            if e["status"] in ("ok", "changed", "failed") and " : " in e["task"]
            and VALIDATION not in e["task"]]


def diffs(log: str) -> dict[str, str]:
    """Each host's check-mode diffs from Ansible's log (a diff comes before its host's line)."""
    found: dict[str, str] = {}
    block: list[str] = []
    for line in log.splitlines():
        if line.startswith(("changed: [", "ok: [")):
            host = line.split("[", 1)[1].split("]", 1)[0]
            found[host] = found.get(host, "") + "\n".join(block)
            block = []
        elif line.startswith(("TASK [", "PLAY")):
            block = []
        else:
            block.append(line)
    return found


def test_a_per_host_install_path_is_what_that_host_gets(tmp_path: Path,
                                                        local_vars: dict[str, Any]) -> None:
    """Set on the host's line, or for its group in a [group:vars] section (which a playbook's
    group_vars/all would outrank: the host's settings are preflight's role defaults)."""
    assert SiteVars.model_validate(local_vars).ascend_spec_install_path == "/usr/local/Ascend"
    rc, log, events = run(tmp_path, local_vars, {
        "nodeA": "ascend_install_path=/opt/vendor/Ascend", "nodeB": "", "nodeC": ""},
        groups="[rack]\nnodeB\n[rack:vars]\nascend_install_path=/srv/Ascend\n")
    assert rc == 0, log[-3000:]
    shown = diffs(log)
    assert "+/opt/vendor/Ascend/driver/lib64" in shown["nodeA"]
    assert ". /opt/vendor/Ascend/cann/set_env.sh" in shown["nodeA"]
    assert "/usr/local/Ascend" not in shown["nodeA"]
    assert "+/srv/Ascend/driver/lib64" in shown["nodeB"]
    assert "/usr/local/Ascend" not in shown["nodeB"]
    assert "+/usr/local/Ascend/driver/lib64" in shown["nodeC"]
    assert "/opt/vendor" not in shown["nodeC"] and "/srv/" not in shown["nodeC"]
    # --tags env: preflight (always), then the env role alone, its arguments checked first.
    roles = {e.get("role") for e in events if e["event"] == "task"}
    assert {"preflight", "env"} <= roles
    assert not roles & {"user", "driver", "firmware", "hdk_reboot", "cann", "python"}
    env_tasks = [e["task"] for e in results(events, "nodeA") if e["task"].startswith("env : ")]
    assert VALIDATION in env_tasks[0]
    # The host's settings are checked first of all (the ascend role, preflight's dependency).
    checks = [e["task"].split(" : ")[0] for e in results(events, "nodeA")
              if VALIDATION in e["task"] and not e["task"].startswith("host_lock")]
    assert checks[:2] == ["ascend", "preflight"], checks
    assert {r.host: r.status for r in summarize(events)} == dict.fromkeys(
        ("nodeA", "nodeB", "nodeC"), "changed")


def test_a_wrong_per_host_type_is_refused_before_any_task(tmp_path: Path,
                                                          local_vars: dict[str, Any]) -> None:
    """A setting of the host (the ascend role's) or of one role (preflight's)."""
    rc, _log, events = run(tmp_path, local_vars, {
        "nodeA": "preflight_min_free_mb=plenty",
        "nodeB": """ascend_extra_users='{"alice": "admin"}'""", "nodeC": ""})
    assert rc != 0
    for host, role, says in (
            ("nodeA", "preflight", "argument 'preflight_min_free_mb' is of type str and we "
             "were unable to convert to int"),
            ("nodeB", "ascend", "argument 'ascend_extra_users' is of type dict and we were "
             "unable to convert to list")):
        failed = [e for e in results(events, host) if e["status"] == "failed"]
        assert len(failed) == 1 and failed[0]["task"].startswith(f"{role} : {VALIDATION}")
        assert says in failed[0]["message"], failed[0]["message"]
        assert ran(events, host) == []
    # The host whose values are right goes on.
    assert "preflight : Read the host as the doctor does (the doctor's probe)" in \
        ran(events, "nodeC")
    assert {r.host: r.status for r in summarize(events)} == {
        "nodeA": "failed", "nodeB": "failed", "nodeC": "changed"}


def test_a_bad_choice_in_the_extra_vars_is_refused_for_every_host(tmp_path: Path,
                                                                   local_vars: dict[str, Any]
                                                                   ) -> None:
    """`install -e` refuses it on the controller (tests/install/test_extra_vars.py); one that
    reaches the playbook anyway (a hand-run ansible-playbook) meets the role's own check."""
    rc, _log, events = run(tmp_path, {**local_vars, "ascend_arch": "sparc"}, {"nodeA": ""})
    assert rc != 0
    failed = [e for e in results(events, "nodeA") if e["status"] == "failed"]
    assert [e["task"].split(" - ")[0] for e in failed] == [
        f"preflight : {VALIDATION} 'main'"]
    assert "value of ascend_arch must be one of: aarch64, x86_64, got: sparc" in \
        failed[0]["message"]
    assert ran(events, "nodeA") == []


@pytest.mark.parametrize(("value", "says"), [
    ("ascend_install_path=42", "ascend_install_path 42 for nodeA must be an absolute path"),
    ("ascend_install_path=opt/Ascend", 'ascend_install_path "opt/Ascend" for nodeA must be'),
    ("ascend_install_path='/opt/$(reboot)'", "must be an absolute path of letters"),
    ("ascend_user=-rf", 'ascend_user "-rf" / ascend_group "-rf" for nodeA: a user or group'),
], ids=["number", "relative", "shell", "user-as-option"])
def test_a_per_host_path_or_user_the_spec_would_refuse_stops_that_host_first(
        value: str, says: str, tmp_path: Path, local_vars: dict[str, Any]) -> None:
    """Ansible's `str` takes a number (it converts it), so preflight's first tasks apply the
    spec's own rules to what the inventory gave, before the probe reads the host."""
    rc, _log, events = run(tmp_path, local_vars, {"nodeA": value})
    assert rc != 0
    done = ran(events, "nodeA")
    assert len(done) <= 2 and done[-1].startswith("preflight : Check the "), done
    failed = [e for e in results(events, "nodeA") if e["status"] == "failed"]
    assert len(failed) == 1 and says in failed[0]["message"], failed
