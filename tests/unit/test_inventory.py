"""inventory.py: Ansible's answer, kept for static inventory files and only for them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ascend_env import inventory
from ascend_env.errors import UsageError

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
    monkeypatch.chdir(tmp_path)
    return tmp_path / "home"


def own(hosts: inventory.HostVars) -> inventory.HostVars:
    """The variables the inventory sets (Ansible adds inventory_file, group_names...)."""
    magic = ("inventory_file", "inventory_dir", "inventory_hostname",
             "inventory_hostname_short", "group_names")
    return {name: {k: v for k, v in variables.items() if k not in magic}
            for name, variables in hosts.items()}


def kept(home: Path) -> list[Path]:
    return sorted((home / ".cache" / "ascend-env" / "inventories").glob("*.json"))


@pytest.mark.parametrize("limit", [None, "rack1:!node02", "node0*", "racks:&rack2"])
def test_a_kept_answer_is_ansibles_answer(home: Path, tmp_path: Path, limit: str | None
                                          ) -> None:
    path = tmp_path / "hosts.ini"
    path.write_text(INI)
    first = inventory.read_inventory(path, limit)
    assert first == inventory.ansible_hosts(path, limit)
    assert len(kept(home)) == 1
    assert inventory.read_inventory(path, limit) == first
    if limit is None:
        assert list(first) == ["node01", "node02", "node03", "gpu", "node04"]
        assert own(first)["node01"] == {"ansible_user": "ops", "ansible_port": 2222}
        assert first["gpu"]["ansible_become"] is True
        assert first["gpu"]["group_names"] == ["rack1", "racks"]
        assert own(first)["node04"] == {"ansible_user": "root", "ansible_port": 22,
                                   "weights": {"a": 1}}


def test_a_kept_answer_is_read_without_ansible(home: Path, tmp_path: Path) -> None:
    path = tmp_path / "hosts.ini"
    path.write_text(INI)
    inventory.read_inventory(path, "rack2")
    code = ("import json, sys; from pathlib import Path; from ascend_env import inventory; "
            f"hosts = inventory.read_inventory(Path({str(path)!r}), 'rack2'); "
            "print(json.dumps([hosts, 'ansible' in sys.modules]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, env={"HOME": str(home), "PATH": "/usr/bin:/bin"},
                          cwd=tmp_path)
    hosts, loaded = json.loads(done.stdout)
    assert own(hosts) == {"node04": {"ansible_user": "root", "ansible_port": 22,
                                "weights": {"a": 1}}}
    assert loaded is False


def test_any_change_it_depends_on_is_read_again(home: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "hosts.ini"
    path.write_text(INI)
    before = inventory.read_inventory(path, None)
    path.write_text(INI + "\n[rack3]\nnode05\n")
    assert "node05" in inventory.read_inventory(path, None)
    monkeypatch.setenv("ANSIBLE_TRANSFORM_INVALID_GROUP_CHARS", "never")
    (tmp_path / "ansible.cfg").write_text("[defaults]\n")
    inventory.read_inventory(path, None)
    assert len(kept(home)) == 3
    path.write_text(INI)
    assert inventory.read_inventory(path, None) == before


def test_the_oldest_answers_are_dropped(home: Path, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inventory, "KEEP", 2)
    path = tmp_path / "hosts.ini"
    path.write_text(INI)
    for limit in ("node01", "node02", "node03"):
        inventory.read_inventory(path, limit)
    assert len(kept(home)) == 2
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in kept(home))


@pytest.mark.parametrize("text", [
    "node01 ansible_password=!vault |\n  $ANSIBLE_VAULT;1.1;AES256\n  6162\n",
    "plugin: constructed\nstrict: false\n",
])
def test_vaults_and_plugins_are_never_kept(home: Path, tmp_path: Path, text: str) -> None:
    path = tmp_path / "hosts.yml"
    path.write_text(text)
    assert inventory.cache_key(path, None) is None


def test_inventories_with_variable_folders_are_never_kept(home: Path, tmp_path: Path) -> None:
    path = tmp_path / "hosts.ini"
    path.write_text(INI)
    assert inventory.cache_key(path, None) is not None
    (tmp_path / "group_vars").mkdir()
    assert inventory.cache_key(path, None) is None


def test_scripts_and_folders_are_never_kept(home: Path, tmp_path: Path) -> None:
    script = tmp_path / "hosts.sh"
    script.write_text("#!/bin/sh\necho '{\"all\": {\"hosts\": [\"a\"]}, \"_meta\": "
                      "{\"hostvars\": {}}}'\n")
    script.chmod(0o755)
    assert own(inventory.read_inventory(script, None)) == {"a": {}}
    assert inventory.cache_key(tmp_path, None) is None
    assert kept(home) == []


def test_bad_inventories_say_why(home: Path, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="does not exist"):
        inventory.read_inventory(tmp_path / "nope.ini", None)
    path = tmp_path / "hosts.ini"
    path.write_text(INI)
    with pytest.raises(UsageError, match=r"no host of .* matches rack9"):
        inventory.read_inventory(path, "rack9")
    assert kept(home) == []
