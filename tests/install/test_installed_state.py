"""The installed-state record: what a successful run leaves on a host, what it moves to
`previous`, and what a roll reads back from a run's stats."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ascend_env.core.errors import AscendEnvError
from ascend_env.install.state import (
    AFTER_STAT,
    BEFORE_STAT,
    HostRecord,
    InstalledState,
    before,
    from_stats,
    parse_record,
    record_after,
    record_line,
    save_records,
)

OLD = {"driver": "25.3.rc1", "firmware": "7.8.0.3.225", "toolkit": "8.3.RC1",
       "ops": "8.3.RC1", "nnal": None}
NEW_TARGETS = {"driver": "25.5.0", "firmware": "7.8.0.5.225", "cann": "8.5.0",
               "packages": ["toolkit", "ops"], "min_driver": None}
SPEC_OLD = {"name": "lab-previous", "digest": "a" * 64, "document": {"name": "lab-previous"}}
SPEC_NEW = {"name": "lab", "digest": "b" * 64, "document": {"name": "lab"}}
ALL = {"driver": "upgrade", "firmware": "upgrade", "toolkit": "upgrade", "ops": "install",
       "nnal": "none"}
NONE = {"driver": "none", "firmware": "none", "toolkit": "none", "ops": "none", "nnal": "none"}


def host(**installed: str | None) -> dict[str, Any]:
    return {"arch": "aarch64", "installed": {**dict.fromkeys(OLD), **installed}}


def after(reading: dict[str, Any], actions: dict[str, Any], targets: dict[str, Any],
          spec: dict[str, Any], line: object = None, *,
          python: dict[str, Any] | None = None) -> dict[str, Any]:
    return record_after(reading, actions, targets, spec=spec, python=python, line=line,
                        where="node1")


def test_a_fresh_host_records_what_it_got_and_has_nothing_before() -> None:
    fresh = {**ALL, "driver": "full", "firmware": "full", "toolkit": "install"}
    record = HostRecord.model_validate(after(host(), fresh, NEW_TARGETS, SPEC_NEW))
    assert record.previous is None
    assert (record.current.driver, record.current.firmware, record.current.cann.version,
            record.current.cann.ops) == ("25.5.0", "7.8.0.5.225", "8.5.0", "8.5.0")
    assert record.current.spec is not None and record.current.spec.name == "lab"
    assert record.current.recorded


def test_an_upgrade_moves_the_recorded_state_to_previous() -> None:
    first = after(host(), {**ALL, "driver": "full", "firmware": "full", "toolkit": "install"},
                  {**NEW_TARGETS, "driver": "25.3.rc1", "firmware": "7.8.0.3.225",
                   "cann": "8.3.RC1"}, SPEC_OLD)
    line = record_line(first)
    # What the probe reads on the host spells the HDK in capitals; the record does not.
    upgraded = HostRecord.model_validate(after(host(**{**OLD, "driver": "25.3.RC1"}), ALL,
                                               NEW_TARGETS, SPEC_NEW, line))
    assert upgraded.previous is not None
    assert upgraded.previous.spec is not None and upgraded.previous.spec.name == "lab-previous"
    assert upgraded.previous.describe() == ("driver 25.3.rc1, firmware 7.8.0.3.225, "
                                            "CANN 8.3.RC1")
    assert upgraded.current.describe() == "driver 25.5.0, firmware 7.8.0.5.225, CANN 8.5.0"


def test_a_run_that_changes_nothing_keeps_the_record_as_it_is() -> None:
    first = after(host(), {**ALL, "driver": "full", "firmware": "full", "toolkit": "install"},
                  NEW_TARGETS, SPEC_NEW)
    line = record_line(first)
    now = host(driver="25.5.0", firmware="7.8.0.5.225", toolkit="8.5.0", ops="8.5.0")
    assert after(now, NONE, NEW_TARGETS, SPEC_NEW, line) == json.loads(line)
    # The same software under another spec: recorded under it, `previous` kept.
    renamed = HostRecord.model_validate(after(now, NONE, NEW_TARGETS, SPEC_OLD, line))
    assert renamed.current.spec is not None and renamed.current.spec.name == "lab-previous"
    assert renamed.previous is None


def test_a_host_installed_by_hand_gets_its_software_as_previous_without_a_spec() -> None:
    record = HostRecord.model_validate(after(host(**OLD), ALL, NEW_TARGETS, SPEC_NEW))
    assert record.previous is not None and record.previous.spec is None
    assert record.previous.cann.version == "8.3.RC1"


def test_only_what_the_run_changed_takes_its_target() -> None:
    cann_only = {**NONE, "toolkit": "upgrade", "ops": "install"}
    record = HostRecord.model_validate(after(host(**OLD), cann_only, NEW_TARGETS, SPEC_NEW,
                                             python={"venv": "/opt/v", "closure": {"a": "1"}}))
    assert (record.current.driver, record.current.cann.version) == ("25.3.rc1", "8.5.0")
    assert record.current.venv is not None and record.current.venv.closure == {"a": "1"}


def test_before_is_the_record_when_it_agrees_with_the_host_else_the_host() -> None:
    line = record_line(after(host(), {**ALL, "driver": "full", "firmware": "full",
                                      "toolkit": "install"}, NEW_TARGETS, SPEC_NEW))
    now = host(driver="25.5.0", firmware="7.8.0.5.225", toolkit="8.5.0", ops="8.5.0")
    assert before(now, line, "node1")["spec"]["name"] == "lab"
    # Changed by hand since: what is there, with no spec to go back with.
    assert before(host(**OLD), line, "node1")["spec"] is None
    assert before(host(**OLD), None, "node1")["driver"] == "25.3.rc1"


@pytest.mark.parametrize(("line", "why"), [
    ("not json", "not JSON"), ('{"schema": "other/v1"}', "not an ascend-env/installed"),
    ('{"schema": "ascend-env/installed-state/v1"}', "does not read"),
    ("x" * (2 << 20), "over")])
def test_a_record_that_is_not_ours_is_named(line: str, why: str) -> None:
    with pytest.raises(AscendEnvError, match=why):
        parse_record(line, "node1")


def test_the_runs_stats_give_each_hosts_before_and_after(tmp_path: Path) -> None:
    record = after(host(**OLD), ALL, NEW_TARGETS, SPEC_NEW)
    start = before(host(**OLD), None, "node1")
    events: list[dict[str, Any]] = [{"event": "stats", "hosts": {
        "node1": {"ok": 3, "custom": {BEFORE_STAT: start, AFTER_STAT: record}},
        "node2": {"ok": 1, "custom": {BEFORE_STAT: start}}, "node3": {"ok": 0}}}]
    found = from_stats(events[0]["hosts"])
    assert found["node1"][0] == InstalledState.model_validate(start)
    assert found["node1"][1] is not None and found["node1"][1].current.cann.version == "8.5.0"
    assert found["node2"][1] is None and found["node3"] == (None, None)
    written = save_records(events, tmp_path)
    assert [path.name for path in written] == ["node1.before.json", "node1.json",
                                               "node2.before.json"]
    assert HostRecord.model_validate_json(written[1].read_text()).current.driver == "25.5.0"
