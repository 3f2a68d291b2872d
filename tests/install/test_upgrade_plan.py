"""Each component from -> to, as `install --check` shows it per host."""

from __future__ import annotations

from pathlib import Path

from ascend_env.install.state import CannState, HostRecord, InstalledState, VenvState
from ascend_env.install.upgrade_plan import changes, describe, run_changes

OLD = InstalledState(driver="25.3.RC1", firmware="7.8.0.3.225",
                     cann=CannState(version="8.3.RC1", ops="8.3.RC1"))
NEW = InstalledState(driver="25.5.0", firmware="7.8.0.5.225",
                     cann=CannState(version="8.5.0", ops="8.5.0"))


def kinds(before: InstalledState, after: InstalledState) -> dict[str, str]:
    return {item.component: item.change for item in changes(before, after)}


def test_an_upgrade_a_downgrade_and_nothing() -> None:
    assert kinds(OLD, NEW) == dict.fromkeys(("driver", "firmware", "cann", "ops"), "upgrade")
    assert kinds(NEW, OLD) == dict.fromkeys(("driver", "firmware", "cann", "ops"), "downgrade")
    # The HDK spelt in file names (25.3.rc1) and in version files (25.3.RC1) is one release.
    same = OLD.model_copy(update={"driver": "25.3.rc1"})
    assert kinds(OLD, same) == dict.fromkeys(("driver", "firmware", "cann", "ops"), "unchanged")
    assert describe(changes(OLD, NEW)).startswith("driver 25.3.RC1 -> 25.5.0 (upgrade), ")
    assert describe(changes(OLD, same)).startswith("driver 25.3.rc1 (unchanged), ")


def test_a_bare_host_installs_and_a_venv_is_named() -> None:
    venv = NEW.model_copy(update={"venv": VenvState(path="/opt/v", closure={"numpy": "1.26.4"})})
    assert kinds(InstalledState(), venv) == {**dict.fromkeys(
        ("driver", "firmware", "cann", "ops"), "install"), "venv": "install"}
    other = venv.model_copy(update={"venv": VenvState(path="/opt/v", closure={"numpy": "2.0"})})
    assert kinds(venv, other)["venv"] == "reinstall"


def test_only_hosts_the_run_got_through_have_changes(tmp_path: Path) -> None:
    folder = tmp_path / "state"
    folder.mkdir()
    (folder / "node1.before.json").write_text(OLD.model_dump_json())
    (folder / "node1.json").write_text(HostRecord(current=NEW, previous=OLD).model_dump_json(
        by_alias=True))
    (folder / "node2.before.json").write_text(OLD.model_dump_json())
    found = run_changes(tmp_path, ["node1", "node2", "node3"])
    assert list(found) == ["node1"]
    assert found["node1"][0].change == "upgrade"
