"""What a host has installed, as each successful install records it, and what it had before.

The install playbook's `state` role writes one record per host (`/var/lib/ascend-env/
installed.json`): the versions it left (driver, firmware, CANN with its ops and NNAL, the
frameworks' venv and its closure) with the spec they came from, and the record it replaced.
`rollback` goes back to that previous record; a gated roll goes back to what preflight read at
the start of the run. The same record reaches the controller through Ansible's custom stats
and is kept in the run's folder (`state/<host>.json`).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from ascend_env.core.errors import AscendEnvError

STATE_SCHEMA = "ascend-env/installed-state/v1"
# The custom stats the playbook sets per host (playbooks/roles/preflight, roles/state).
BEFORE_STAT, AFTER_STAT = "ascend_state_before", "ascend_state"
# A record is a few kilobytes; preflight's probe reads no more of a file than this.
MAX_RECORD_BYTES = 256 * 1024


class SpecRecord(BaseModel):
    """The spec an install ran with: enough to install it again."""

    name: str
    digest: str
    document: dict[str, Any] = Field(description="the spec as install read it (JSON)")


class CannState(BaseModel):
    """The active CANN toolkit and the packages of the same release beside it."""

    version: str | None = None
    ops: str | None = None
    nnal: str | None = None


class VenvState(BaseModel):
    """The frameworks' virtual environment and the distributions it was filled with."""

    path: str
    closure: dict[str, str] | None = Field(
        None, description="distribution -> version; null when pip took them from an index")


class InstalledState(BaseModel):
    """One host's installed software at one moment."""

    driver: str | None = None
    firmware: str | None = None
    cann: CannState = Field(default_factory=CannState)
    venv: VenvState | None = None
    spec: SpecRecord | None = Field(None, description="null: installed by something else")
    recorded: str = ""

    def versions(self) -> tuple[Any, ...]:
        """What a rollback would change, the spec and the time aside; case-blind, as file
        names spell the HDK (25.3.rc1) and version files may not (25.3.RC1)."""
        return (*(v.lower() if v else None for v in (
            self.driver, self.firmware, self.cann.version, self.cann.ops, self.cann.nnal)),
            self.venv.model_dump() if self.venv else None)

    def describe(self) -> str:
        """`driver 25.3.rc1, firmware 7.8.0.3.225, CANN 8.3.RC1` for messages."""
        parts = [f"driver {self.driver or 'none'}", f"firmware {self.firmware or 'none'}",
                 f"CANN {self.cann.version or 'none'}"]
        if self.venv is not None:
            parts.append(f"venv {self.venv.path}")
        return ", ".join(parts)


class HostRecord(BaseModel):
    """The file on the host: what it has now and what it had before the last change."""

    schema_: str = Field(STATE_SCHEMA, alias="schema")
    current: InstalledState
    previous: InstalledState | None = None

    model_config = {"populate_by_name": True}


def parse_record(text: object, where: str) -> HostRecord | None:
    """A record as read from a host (its first line) or from the stats; None when there is
    none. One that is not ours (another schema, not JSON, too big) is an error naming it."""
    if text is None or text == "":
        return None
    if isinstance(text, dict):
        data: object = text
    else:
        raw = str(text)
        if len(raw.encode()) > MAX_RECORD_BYTES:
            raise AscendEnvError(f"{where}: the installed-state record is over "
                                 f"{MAX_RECORD_BYTES} bytes; it is not ascend-env's")
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise AscendEnvError(f"{where}: the installed-state record is not JSON ({exc}); "
                                 "remove it and run install again") from exc
    if not isinstance(data, dict) or data.get("schema") != STATE_SCHEMA:
        raise AscendEnvError(f"{where}: the installed-state record is not an "
                             f"{STATE_SCHEMA} document")
    try:
        return HostRecord.model_validate(data)
    except ValidationError as exc:
        raise AscendEnvError(f"{where}: the installed-state record does not read: "
                             f"{exc.errors()[0]['msg']}") from exc


def _now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


def from_preflight(host: dict[str, Any]) -> InstalledState:
    """What preflight's probe found installed (actions.read_host), with no spec."""
    installed = host.get("installed") or {}
    return InstalledState(
        driver=installed.get("driver"), firmware=installed.get("firmware"),
        cann=CannState(version=installed.get("toolkit"), ops=installed.get("ops"),
                       nnal=installed.get("nnal")))


def before(host: dict[str, Any], line: object, where: str) -> dict[str, Any]:
    """What the host had when preflight read it: its record's current state when that agrees
    with what is installed, else what is installed (changed by hand, or never recorded)."""
    found = from_preflight(host)
    record = parse_record(line, where)
    # Driver, firmware and toolkit: ops and NNAL go with their toolkit, and the venv is not
    # what preflight reads.
    if record is not None and record.current.versions()[:3] == found.versions()[:3]:
        return record.current.model_dump(mode="json")
    return found.model_dump(mode="json")


def _after(old: InstalledState, actions: dict[str, Any], targets: dict[str, Any]
           ) -> InstalledState:
    """What the run left: each component the run changed at its target, the rest as read."""

    def pick(action: str, target_key: str, now: str | None) -> str | None:
        changed = actions.get(action, "none") != "none" or (
            action == "toolkit" and actions.get("cann_switch"))
        return str(targets[target_key]) if changed and targets.get(target_key) else now

    cann = CannState(version=pick("toolkit", "cann", old.cann.version),
                     ops=pick("ops", "cann", old.cann.ops),
                     nnal=pick("nnal", "cann", old.cann.nnal))
    return InstalledState(driver=pick("driver", "driver", old.driver),
                          firmware=pick("firmware", "firmware", old.firmware), cann=cann,
                          venv=old.venv)


def record_after(host: dict[str, Any], actions: dict[str, Any], targets: dict[str, Any], *,
                 spec: dict[str, Any], python: dict[str, Any] | None, line: object,
                 where: str) -> dict[str, Any]:
    """The record a successful run leaves on the host. An unchanged host keeps its record as
    it is (nothing to write); a change moves the record's current state to `previous`."""
    existing = parse_record(line, where)
    old = InstalledState.model_validate(before(host, line, where))
    if existing is not None and existing.current.venv is not None:
        old.venv = existing.current.venv
    new = _after(old, actions, targets)
    if python is not None:
        new.venv = VenvState(path=str(python["venv"]), closure=python.get("closure"))
    new.spec = SpecRecord.model_validate(spec)
    if existing is not None and existing.current.versions() == new.versions() and (
            existing.current.spec is not None
            and existing.current.spec.digest == new.spec.digest):
        return existing.model_dump(mode="json", by_alias=True)
    new.recorded = _now()
    if existing is not None and existing.current.versions() == new.versions():
        previous = existing.previous  # the same software under another spec
    elif old.driver or old.cann.version or old.firmware:
        previous = old
    else:
        previous = None  # a bare host: nothing to go back to
    return HostRecord(current=new, previous=previous).model_dump(mode="json", by_alias=True)


def record_line(record: dict[str, Any]) -> str:
    """The record as the host keeps it: one line of JSON (preflight reads the first line)."""
    return json.dumps(record, sort_keys=True, separators=(",", ":"))


def from_stats(stats: dict[str, Any]) -> dict[str, tuple[InstalledState | None,
                                                         HostRecord | None]]:
    """Per host, the state preflight read and the record the run left (None where the run
    did not get that far), from the playbook's final stats event."""
    found: dict[str, tuple[InstalledState | None, HostRecord | None]] = {}
    for host, counts in (stats or {}).items():
        custom = counts.get("custom") or {}
        start = custom.get(BEFORE_STAT)
        end = custom.get(AFTER_STAT)
        found[host] = (InstalledState.model_validate(start) if start else None,
                       parse_record(end, f"{host} (the run's stats)") if end else None)
    return found


def stats_of(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The hosts of the last stats event of a playbook run ({} when it had none)."""
    for event in reversed(events):
        if event.get("event") == "stats":
            hosts: dict[str, Any] = event.get("hosts") or {}
            return hosts
    return {}


def save_records(events: list[dict[str, Any]], run_dir: Path) -> list[Path]:
    """In the run's folder, per host: the record the run left (`state/<host>.json`) and what
    preflight found (`state/<host>.before.json`), which a roll goes back to."""
    written = []
    for host, (start, record) in from_stats(stats_of(events)).items():
        folder = run_dir / "state"
        name = Path(host).name
        for path, model in ((folder / f"{name}.before.json", start),
                            (folder / f"{name}.json", record)):
            if model is None:
                continue
            folder.mkdir(exist_ok=True)
            path.write_text(model.model_dump_json(by_alias=True, indent=2) + "\n")
            written.append(path)
    return written


def saved_records(run_dir: Path, host: str) -> tuple[InstalledState | None, HostRecord | None]:
    """What save_records kept of one host (None where the run did not get that far)."""
    folder, name = run_dir / "state", Path(host).name
    start, end = folder / f"{name}.before.json", folder / f"{name}.json"
    return (InstalledState.model_validate_json(start.read_text()) if start.is_file() else None,
            HostRecord.model_validate_json(end.read_text()) if end.is_file() else None)
