"""inventory.py: Ansible's answer, read afresh on every run and written nowhere."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from ansible.parsing.vault import VaultLib, VaultSecret

from ascend_env.core.errors import UsageError
from ascend_env.targets import inventory

INI = """\
[all:vars]
ansible_user=ops

[rack1]
node[01:03] ansible_port=2222
gpu ansible_host=192.0.2.9 ansible_become=True

[rack2]
node04 ansible_user=root weights="{'a': 1}"

[racks:children]
rack1
rack2

[rack2:vars]
ansible_port=22
"""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home-cache"))
    monkeypatch.chdir(tmp_path)
    return tmp_path / "home"


def own(hosts: inventory.HostVars) -> inventory.HostVars:
    """The variables the inventory sets (Ansible adds inventory_file, group_names...)."""
    magic = ("inventory_file", "inventory_dir", "inventory_hostname",
             "inventory_hostname_short", "group_names")
    return {name: {k: v for k, v in variables.items() if k not in magic}
            for name, variables in hosts.items()}


def written(home: Path) -> list[Path]:
    """Files under the operator's home and cache folder (Ansible's own empty ~/.ansible/tmp
    folders are no files)."""
    return sorted(p for top in (home, home.with_name("home-cache")) if top.exists()
                  for p in top.rglob("*") if not p.is_dir())


def ansible_inventory(path: Path, host: str, tmp_path: Path) -> dict[str, Any]:
    """Ansible's own answer, run from a folder with no group_vars/ of its own (Ansible would
    read the current directory's as a playbook's)."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    done = subprocess.run([str(Path(sys.executable).parent / "ansible-inventory"), "-i",
                           str(path), "--host", host], capture_output=True, text=True,
                          check=True, cwd=elsewhere)
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def vaulted(text: str) -> str:
    ciphertext: bytes = VaultLib([("default", VaultSecret(b"pw"))]).encrypt(text)
    return ciphertext.decode()


@pytest.mark.parametrize(("limit", "names"), [
    (None, ["node01", "node02", "node03", "gpu", "node04"]),
    ("rack1:!node02", ["node01", "node03", "gpu"]),
    ("node0*", ["node01", "node02", "node03", "node04"]),
    ("racks:&rack2", ["node04"]),
    ("rack2", ["node04"]),
])
def test_the_hosts_are_ansibles_hosts(home: Path, tmp_path: Path, limit: str | None,
                                      names: list[str]) -> None:
    path = tmp_path / "hosts.ini"
    path.write_text(INI)
    hosts = inventory.read_inventory(path, limit)
    assert list(hosts) == names
    assert own(hosts)[names[-1]] == ansible_inventory(path, names[-1], tmp_path)
    if "node04" in names:
        assert own(hosts)["node04"] == {"ansible_user": "root", "ansible_port": 22,
                                        "weights": {"a": 1}}
    if limit is None:
        assert own(hosts)["node01"] == {"ansible_user": "ops", "ansible_port": 2222}
        assert hosts["gpu"]["ansible_become"] is True
        assert hosts["gpu"]["group_names"] == ["rack1", "racks"]


def test_every_read_sees_the_inventory_as_it_is_now(home: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "hosts.ini"
    path.write_text(INI)
    before = inventory.read_inventory(path, None)
    path.write_text(INI + "\n[rack3]\nnode05\n")
    assert "node05" in inventory.read_inventory(path, None)
    path.write_text(INI.replace("ansible_user=ops", "ansible_user=ops2"))
    assert inventory.read_inventory(path, "node01")["node01"]["ansible_user"] == "ops2"
    path.write_text(INI)
    assert inventory.read_inventory(path, None) == before


def write_kind(kind: str, tmp_path: Path) -> Path:
    """An inventory of each shape the doctor reads: a file, one with group_vars/ beside it,
    a folder, a script."""
    if kind == "file":
        return write(tmp_path / "hosts.ini", INI)
    if kind == "file-with-group-vars":
        write(tmp_path / "site" / "group_vars" / "rack2.yml", "ansible_password: secret\n")
        return write(tmp_path / "site" / "hosts.ini", INI)
    if kind == "folder":
        write(tmp_path / "inventory" / "hosts", INI)
        return tmp_path / "inventory"
    script = write(tmp_path / "hosts.sh", "#!/bin/sh\necho '{\"all\": {\"hosts\": [\"node04\"]}, "
                   "\"_meta\": {\"hostvars\": {\"node04\": {\"ansible_password\": \"s\"}}}}'\n")
    script.chmod(0o755)
    return script


@pytest.mark.parametrize("kind", ["file", "file-with-group-vars", "folder", "script"])
def test_a_read_writes_nothing_on_the_operators_machine(home: Path, tmp_path: Path,
                                                        kind: str) -> None:
    """Host variables (connection secrets among them) are never written to a cache."""
    path = write_kind(kind, tmp_path)
    for _ in range(2):
        assert "node04" in inventory.read_inventory(path, None)
    assert written(home) == []


def test_scripts_are_read_by_ansible(home: Path, tmp_path: Path) -> None:
    script = tmp_path / "hosts.sh"
    script.write_text("#!/bin/sh\necho '{\"all\": {\"hosts\": [\"a\"]}, \"_meta\": "
                      "{\"hostvars\": {}}}'\n")
    script.chmod(0o755)
    assert own(inventory.read_inventory(script, None)) == {"a": {}}


def test_bad_inventories_say_why(home: Path, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="does not exist"):
        inventory.read_inventory(tmp_path / "nope.ini", None)
    path = tmp_path / "hosts.ini"
    path.write_text(INI)
    with pytest.raises(UsageError, match=r"no host of .* matches rack9"):
        inventory.read_inventory(path, "rack9")
    assert written(home) == []


# Each key is set at several levels, so that every step of Ansible's order shows: [all:vars]
# < [group:vars] < group_vars/all < group_vars/<group> < inventory host vars < host_vars/.
SITE = """\
[all:vars]
ansible_user=inv_all
ansible_port=2201
tier=inv_all

[rack1]
node01 ansible_user=inv_host ansible_port=2204
node02

[rack1:vars]
ansible_port=2202
tier=inv_rack1

[rack2]
node03
"""


def test_variable_folders_are_merged_as_ansible_merges_them(home: Path, tmp_path: Path
                                                            ) -> None:
    path = write(tmp_path / "site" / "hosts.ini", SITE)
    write(tmp_path / "site" / "group_vars" / "all.yml", """\
        ansible_user: gv_all
        ansible_port: 2210
        tier: gv_all
        window: 2026-01-31
        ssh: {args: [-C, -q]}
        """)
    write(tmp_path / "site" / "group_vars" / "rack1" / "main.yml",
          "ansible_user: gv_rack1\nansible_port: 2203\n")
    write(tmp_path / "site" / "host_vars" / "node01.yml", "ansible_user: hv_node01\n")
    # The doctor's own directory is no playbook's: its group_vars/ are not the inventory's.
    write(tmp_path / "group_vars" / "all.yml", "ansible_user: cwd\n")
    hosts = inventory.read_inventory(path, None)
    assert list(hosts) == ["node01", "node02", "node03"]
    for name in hosts:
        assert own(hosts)[name] == ansible_inventory(path, name, tmp_path)
    assert {name: (v["ansible_user"], v["ansible_port"], v["tier"])
            for name, v in hosts.items()} == {
        "node01": ("hv_node01", 2204, "gv_all"),
        "node02": ("gv_rack1", 2203, "gv_all"),
        "node03": ("gv_all", 2210, "gv_all"),
    }
    assert hosts["node03"]["window"] == "2026-01-31"
    assert hosts["node03"]["ssh"] == {"args": ["-C", "-q"]}
    assert hosts["node01"]["group_names"] == ["rack1"]  # as without folders
    assert written(home) == []


def test_an_inventory_folder_has_its_variable_folders_inside(home: Path, tmp_path: Path
                                                             ) -> None:
    folder = tmp_path / "inventory"
    write(folder / "hosts", INI)
    write(folder / "group_vars" / "racks.yml", "ansible_user: admin\n")
    hosts = inventory.read_inventory(folder, "node01:node04")
    assert own(hosts) == {name: ansible_inventory(folder, name, tmp_path)
                          for name in ("node01", "node04")}
    assert own(hosts)["node01"] == {"ansible_user": "admin", "ansible_port": 2222}
    assert own(hosts)["node04"]["ansible_user"] == "root"
    assert written(home) == []


def test_without_variable_folders_no_variable_manager_runs(
        home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ansible.vars import manager  # noqa: PLC0415 - Ansible's, patched here only

    made: list[object] = []
    real = manager.VariableManager

    def spy(**kwargs: Any) -> Any:
        made.append(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(manager, "VariableManager", spy)
    path = write(tmp_path / "hosts.ini", INI)
    hosts = inventory.read_inventory(path, "node04")
    assert made == []
    assert own(hosts) == {"node04": ansible_inventory(path, "node04", tmp_path)}
    write(tmp_path / "host_vars" / "node04.yml", "ansible_port: 2022\n")
    assert inventory.read_inventory(path, "node04")["node04"]["ansible_port"] == 2022
    assert len(made) == 1


@pytest.mark.parametrize("text", [
    vaulted("ansible_user: admin\n"),
    "ansible_become_password: !vault |\n" + textwrap.indent(vaulted("admin"), "  "),
])
def test_vaulted_variables_say_where(home: Path, tmp_path: Path, text: str) -> None:
    path = write(tmp_path / "hosts.ini", INI)
    secret = write(tmp_path / "group_vars" / "rack2.yml", text)
    with pytest.raises(UsageError, match=rf"node04.*{re.escape(str(secret))}.*no vault password"):
        inventory.read_inventory(path, "node04")
    assert written(home) == []


@pytest.mark.parametrize("inline", [False, True])
def test_vaulted_variables_decrypt_with_the_configured_password(
        home: Path, tmp_path: Path, inline: bool) -> None:
    # ANSIBLE_VAULT_PASSWORD_FILE read by Ansible's own configuration in a fresh process, as
    # ansible-playbook reads it for `install`; the doctor asks for nothing.
    (tmp_path / "pw").write_text("pw\n")
    path = write(tmp_path / "hosts.ini", INI)
    text = ("ansible_user: !vault |\n" + textwrap.indent(vaulted("admin"), "  ") if inline
            else vaulted("ansible_user: admin\n"))
    write(tmp_path / "group_vars" / "rack2.yml", text)
    code = ("import json, sys; from pathlib import Path; from ascend_env.targets import inventory; "
            "print(json.dumps(inventory.read_inventory(Path(sys.argv[1]), 'node04')))")
    run = [sys.executable, "-c", code, str(path)]
    env = {"HOME": str(home), "XDG_CACHE_HOME": str(home.with_name("home-cache")),
           "PATH": "/usr/bin:/bin", "ANSIBLE_VAULT_PASSWORD_FILE": str(tmp_path / "pw")}
    done = subprocess.run(run, capture_output=True, text=True, check=True, cwd=tmp_path, env=env)
    # node04's own ansible_user in the inventory beats group_vars/rack2 (decrypted to see)
    assert json.loads(done.stdout)["node04"]["ansible_user"] == "root"
    write(tmp_path / "host_vars" / "node04.yml", text)
    done = subprocess.run(run, capture_output=True, text=True, check=True, cwd=tmp_path, env=env)
    assert json.loads(done.stdout)["node04"]["ansible_user"] == "admin"
    assert written(home) == []  # the decrypted value went nowhere but stdout
    (tmp_path / "pw").write_text("wrong\n")
    done = subprocess.run(run, capture_output=True, text=True, check=False, cwd=tmp_path, env=env)
    assert done.returncode != 0 and written(home) == []
    wrong = r"UsageError: .*(node04.*does not decrypt|node04.yml: .*[Dd]ecrypt)"
    assert re.search(wrong, done.stderr), done.stderr[-500:]
