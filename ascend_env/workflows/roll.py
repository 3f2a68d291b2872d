"""A fleet upgraded batch by batch, each batch health-gated, and hosts taken back to what they
had: `install --serial 1,10%,25% --gate 2 --on-fail rollback` and `ascend-env rollback`.

One playbook run per batch (site.yml with `--limit`), not Ansible's `serial` inside one run:
the gate is the doctor, which runs here on the controller once the batch's play has ended, and
a failed batch's rollback is an install of another spec; both need the batch's run to be
over. The batches themselves are cut by Ansible's serial rules (install/serial.py) in Ansible's
inventory order, and each batch runs all its hosts at once. A plain `--serial N` with no gate,
drain or rollback stays Ansible's own serial in one run (install/provision.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from ascend_env.ansible.runner import Event, HostResult, HostStatus, PlaybookRun
from ascend_env.core.errors import AscendEnvError
from ascend_env.install.drain import HostCommand, run_for
from ascend_env.install.gate import run_gate
from ascend_env.install.provision import InstallOptions, InstallSummary, install
from ascend_env.install.rollback import (
    Destination,
    destinations,
    previous_states,
    read_records,
)
from ascend_env.install.serial import Serial
from ascend_env.install.state import CannState, InstalledState, SpecRecord, saved_records
from ascend_env.spec.catalogue import Catalogue
from ascend_env.spec.envspec import EnvSpec
from ascend_env.spec.plan import Plan
from ascend_env.targets.inventory import read_inventory
from ascend_env.workflows.install_checked import install_checked, post_install_doctor

ROLLBACK_SCHEMA = "ascend-env/rollback/v1"
_DONE = ("ok", "changed")


@dataclass
class RollOptions:
    """How install rolls through the fleet (the command line's --serial, --gate, --on-fail,
    --drain-cmd, --undrain-cmd)."""

    serial: Serial | None = None
    gate: int | None = None
    on_fail: Literal["stop", "rollback"] = "stop"
    drain: HostCommand | None = None
    undrain: HostCommand | None = None

    @property
    def controlled(self) -> bool:
        """Whether the roll runs batch by batch from here (else Ansible's serial alone)."""
        return (self.gate is not None or self.on_fail == "rollback" or self.drain is not None
                or self.undrain is not None
                or (self.serial is not None and self.serial.single is None))


class BatchResult(BaseModel):
    """One batch of the roll."""

    number: int
    hosts: list[str]
    outcome: Literal["passed", "failed", "not run"]
    gate: list[str] = Field(default_factory=list, description="`host: check: message` for "
                            "each check the gate failed on")
    log: str | None = None


class RolledBack(BaseModel):
    """A host taken back to a recorded state, and how that went."""

    host: str
    to: str = Field(description="the state it went back to: driver, firmware, CANN")
    status: HostStatus
    message: str = ""


class RollSummary(InstallSummary):
    """An install run batch by batch (or a rollback): the install summary, with the batches,
    why the roll stopped and what was rolled back."""

    serial: str | None = None
    gate_level: int | None = None
    batches: list[BatchResult] = Field(default_factory=list)
    stopped: str | None = Field(None, description="why the roll stopped: the batch, its "
                                "hosts and the failed checks")
    rolled_back: list[RolledBack] = Field(default_factory=list)

    @property
    def succeeded(self) -> bool:
        return super().succeeded and self.stopped is None and all(
            host.status in _DONE for host in self.rolled_back)


def fleet_hosts(options: InstallOptions) -> list[str]:
    """The hosts the run targets, in the inventory's order (Ansible's own reading)."""
    if options.inventory is not None:
        return list(read_inventory(options.inventory, options.limit))
    return [options.host] if options.host is not None else ["localhost"]


def _limited(options: InstallOptions, hosts: list[str]) -> InstallOptions:
    return replace(options, limit=",".join(hosts) if options.inventory is not None else None,
                   serial=None)


def _hook(command: HostCommand | None, hosts: list[str]) -> list[str]:
    """Run a drain or undrain command for each host, in order; the failures, one per host."""
    if command is None:
        return []
    return [why for why in (run_for(command, host) for host in hosts) if why is not None]


@dataclass
class _Roll:
    """One roll's progress, so that each step stays short."""

    spec: EnvSpec
    plan: Plan
    options: InstallOptions
    how: RollOptions
    catalogue: Catalogue
    check_after: bool
    on_event: Callable[[Event], None]

    def gate(self, summary: InstallSummary) -> list[str]:
        """The gate (or, without one, the post-install doctor) on the batch's done hosts; a
        host it fails is failed in the summary. Returns the gate's findings."""
        done = [host for host in summary.hosts if host.status in _DONE]
        if not done or self.options.check:
            return []
        if self.how.gate is None:
            if self.check_after:
                wanted = self.options.wanted()
                post_install_doctor(self.spec, done, inventory=self.options.inventory,
                                    host=self.options.host, threads="env" in wanted,
                                    python="python" in wanted
                                    and bool(self.spec.framework_pins()))
            return []
        result = run_gate(self.spec, [host.host for host in done], self.how.gate,
                          inventory=self.options.inventory, target=self.options.host)
        for host in done:
            failed = result.failed.get(host.host)
            if failed:
                host.status = "failed"
                host.message = f"gate (doctor level {self.how.gate}): " + "; ".join(failed)
                host.doctor = {"failed": [line.split(":", 1)[0] for line in failed]}
        return [f"{host}: {line}" for host, lines in result.failed.items() for line in lines]

    def back(self, summary: InstallSummary) -> list[RolledBack]:
        """The failed batch's hosts that changed, back to what preflight found on them."""
        run_dir = Path(summary.log).parent
        targets: dict[str, tuple[InstalledState, InstalledState | None]] = {}
        out: list[RolledBack] = []
        ours = SpecRecord(name=self.spec.name, digest=self.spec.digest(),
                          document=self.spec.model_dump(mode="json"))
        for host in summary.hosts:
            if host.changed == 0 or host.status in ("not run", "locked"):
                continue  # nothing of it changed: nothing to take back
            start, end = saved_records(run_dir, host.host)
            if start is None:
                out.append(RolledBack(host=host.host, to="unknown", status="failed",
                                      message="preflight's reading of it was not kept; "
                                              "nothing to go back to"))
                continue
            # Where the run stopped on it is not known: its CANN may be the new one.
            now = end.current if end is not None else InstalledState(
                cann=CannState(version=self.spec.cann.version.raw), spec=ours)
            targets[host.host] = (start, now)
        if not targets:
            return out
        try:
            found = destinations(targets, self.options.repo, self.catalogue)
        except AscendEnvError as exc:
            return out + [RolledBack(host=host, to=goal.describe(), status="failed",
                                     message=str(exc)) for host, (goal, _) in targets.items()]
        return out + run_destinations(found, self.options, check_after=self.check_after,
                                      on_event=self.on_event)[1]


def run_destinations(found: list[Destination], options: InstallOptions, *, check_after: bool,
                     on_event: Callable[[Event], None]
                     ) -> tuple[list[InstallSummary], list[RolledBack]]:
    """Each destination's rollback run (an install of its spec in rollback mode)."""
    summaries, rolled = [], []
    for destination in found:
        summary = install_checked(destination.spec, destination.plan, replace(
            _limited(options, destination.hosts), components=destination.components,
            force=False, check=options.check, rollback=destination.rollback),
            check_after=check_after, on_event=on_event)
        summaries.append(summary)
        rolled += [RolledBack(host=host.host, to=destination.state.describe(),
                              status=host.status, message=host.message)
                   for host in summary.hosts if host.host in destination.hosts
                   or options.inventory is None]
        if summary.interrupted is not None:
            break
    return summaries, rolled


def roll(spec: EnvSpec, plan: Plan, options: InstallOptions, how: RollOptions,
         catalogue: Catalogue, *, check_after: bool = True,
         on_event: Callable[[Event], None] = lambda event: None) -> RollSummary:
    """Install to the spec batch by batch: drain, install, gate, undrain; the first batch that
    fails stops the roll, later hosts untouched, and with `on_fail="rollback"` its hosts go
    back to what they had."""
    state = _Roll(spec, plan, options, how, catalogue, check_after, on_event)
    hosts = fleet_hosts(options)
    batches = how.serial.batches(hosts) if how.serial is not None else [hosts]
    summary = RollSummary(spec=spec.name, digest=spec.digest(), check=options.check, log="",
                          hosts=[], serial=str(how.serial) if how.serial else None,
                          gate_level=how.gate)
    results: dict[str, HostResult] = {}
    for number, batch in enumerate(batches, 1):
        if summary.stopped is not None or summary.interrupted is not None:
            summary.batches.append(BatchResult(number=number, hosts=batch, outcome="not run"))
            results.update((host, HostResult(
                host=host, status="not run", message="the roll stopped before batch "
                f"{number}; nothing was changed on this host")) for host in batch)
            continue
        result = _batch(state, summary, number, len(batches), batch)
        results.update((host.host, host) for host in result)
    summary.hosts = [results[host] for host in hosts if host in results]
    return summary


def _batch(state: _Roll, summary: RollSummary, number: int, total: int,
           batch: list[str]) -> list[HostResult]:
    """One batch: drain, install, gate, and what follows a failure; its hosts' results."""
    check = state.options.check
    drained = _hook(None if check else state.how.drain, batch)
    if drained:
        _hook(state.how.undrain, batch)  # give back the hosts the drain did take
        summary.stopped = (f"batch {number} of {total} ({', '.join(batch)}) could not be "
                           f"drained, nothing was changed on it: {'; '.join(drained)}")
        summary.batches.append(BatchResult(number=number, hosts=batch, outcome="failed"))
        return [HostResult(host=host, status="not run", message=summary.stopped)
                for host in batch]
    ran = install(state.spec, state.plan, _limited(state.options, batch),
                  on_event=state.on_event)
    summary.log, summary.notes = ran.log, summary.notes + ran.notes
    if ran.interrupted is not None:
        summary.interrupted = ran.interrupted
        summary.batches.append(BatchResult(number=number, hosts=batch, outcome="failed",
                                           log=ran.log))
        return ran.hosts
    found = state.gate(ran)
    bad = [host for host in ran.hosts if host.status not in _DONE]
    outcome: Literal["passed", "failed"] = "failed" if bad else "passed"
    summary.batches.append(BatchResult(number=number, hosts=batch, outcome=outcome,
                                       gate=found, log=ran.log))
    if bad:
        gate = f"the gate (doctor level {state.how.gate}) or " if state.how.gate else ""
        summary.stopped = (f"the roll stopped at batch {number} of {total}: {gate}the install "
                           "failed on " + "; ".join(f"{host.host}: {host.message}"
                                                    for host in bad))
        if state.how.on_fail == "rollback" and not check:
            summary.rolled_back = state.back(ran)
        return ran.hosts
    returned = _hook(None if check else state.how.undrain, batch)
    if returned:
        summary.stopped = (f"batch {number} of {total} passed, but its hosts were not given "
                           f"back: {'; '.join(returned)}")
    return ran.hosts


def rollback(options: InstallOptions, catalogue: Catalogue, *, check_after: bool = True,
             on_event: Callable[[Event], None] = lambda event: None) -> RollSummary:
    """`ascend-env rollback`: every host back to its recorded previous state."""
    records = read_records(PlaybookRun(inventory=options.inventory, host=options.host,
                                       limit=options.limit, log_dir=options.log_dir))
    found = destinations(previous_states(records), options.repo, catalogue)
    summaries, rolled = run_destinations(found, options, check_after=check_after,
                                         on_event=on_event)
    if not summaries:
        raise AscendEnvError("no host to roll back")
    first = summaries[0]
    return RollSummary.model_validate({
        **first.model_dump(by_alias=True), "schema": ROLLBACK_SCHEMA,
        "log": "; ".join(summary.log for summary in summaries),
        "hosts": [host.model_dump() for summary in summaries for host in summary.hosts],
        "notes": [note for summary in summaries for note in summary.notes],
        "interrupted": next((summary.interrupted.model_dump(by_alias=True)
                             for summary in summaries if summary.interrupted), None),
        "rolled_back": [item.model_dump() for item in rolled]})
