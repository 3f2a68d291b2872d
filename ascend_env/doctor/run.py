"""`ascend-env doctor`: capture -> facts -> the check suite (pytest, in-process) -> Report.

Each target is captured once (live through a testinfra transport, or read from a saved
capture); facts are parsed centrally; then the suite (ascend_env/doctor/suite.py) runs checks/ once
for all targets, every check parametrised by target. Level 1 checks read only facts; level
2/3 checks (smoke workloads) take the `host` fixture and run things on the target.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from ascend_env.core.errors import AscendEnvError, UsageError
from ascend_env.doctor.report import CheckResult, FleetReport, Report, SpecRef
from ascend_env.doctor.suite import DoctorContext, Target, run_checks
from ascend_env.facts.assemble import facts_from_capture
from ascend_env.facts.capture import (
    CollectedHost,
    CollectResult,
    load_capture,
    save_captures,
)
from ascend_env.facts.capture import redact as redact_captures
from ascend_env.spec.envspec import EnvSpec
from ascend_env.targets.collect import (
    Captured,
    ProbeOptions,
    capture_hosts,
    capture_local,
    resolve_hosts,
)
from ascend_env.targets.inventory import read_inventory

LEVELS = (1, 2, 3)


# -- the whole run ----------------------------------------------------------------------------

@dataclass
class DoctorOptions:
    """What `ascend-env doctor` was asked to do."""

    spec: EnvSpec | None = None
    inventory: Path | None = None
    limit: str | None = None
    target: str | None = None
    ssh_config: Path | None = None
    from_files: list[Path] = field(default_factory=list)
    level: int = 1
    only: tuple[str, ...] = ()
    python: str | None = None
    run_users: tuple[str, ...] = ()
    timeout_s: float = 300.0
    ranktable: Path | None = None  # a rank table (hccl.json) to check against the fleet

    @property
    def fleet(self) -> bool:
        return self.inventory is not None


def probe_options(options: DoctorOptions) -> ProbeOptions:
    spec = options.spec
    return ProbeOptions(install_path=spec.install.path if spec else "/usr/local/Ascend",
                        python=options.python, venv=spec.python.venv if spec else None,
                        users=options.run_users)


def captured_targets(options: DoctorOptions) -> list[Captured]:
    """Every target's capture (or why there is none), in the order they were named."""
    if options.from_files:
        out = []
        sources: dict[str, str] = {}
        for path in options.from_files:
            captures = load_capture(path)
            for index, capture in enumerate(captures):
                name = capture.host or path.stem
                where = f"{path}[{index}]" if len(captures) > 1 else str(path)
                if name in sources:
                    # A report is keyed by host: the second would silently replace or
                    # merge into the first, so two captures of one name are refused.
                    raise UsageError(f"two captures are of host {name!r} ({sources[name]} "
                                     f"and {where}); a report holds one per host, so give "
                                     "one of them")
                sources[name] = where
                out.append(Captured(name=name, capture=capture, extra={"source": str(path)}))
        return out
    probe = probe_options(options)
    if options.inventory is None and options.target is None:
        local = capture_local(probe)
        if options.level > 1:  # smoke checks run things through a testinfra Host
            local.host = resolve_hosts(target="local://")[0][1]
        return [local]
    hosts = resolve_hosts(inventory=options.inventory, limit=options.limit,
                          target=options.target, ssh_config=options.ssh_config)
    captured = capture_hosts(hosts, probe, timeout_s=options.timeout_s)
    for item in captured:
        # The address the transport reaches the host at: a rank table's server id.
        # testinfra keeps it as a HostSpec (name, port, user) on the backend.
        spec = getattr(getattr(item.host, "backend", None), "host", None)
        address = getattr(spec, "name", spec)
        if isinstance(address, str) and address:
            item.extra.setdefault("address", address)
    return captured


def plan_order(options: DoctorOptions, captured: list[Captured]) -> list[str]:
    """The hosts a spec's network plan numbers (host k gets address k of each subnet): the
    whole inventory in its order, whatever --limit picked, so that a host's planned address
    never depends on which hosts one run looked at; else the targets named."""
    if options.inventory is not None and options.limit:
        return list(read_inventory(options.inventory, None))
    return [item.name for item in captured]


def now_iso() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


def evaluate(captured: list[Captured], options: DoctorOptions) -> list[Report]:
    """Facts and the check suite for every captured target; a Report per target."""
    return evaluate_fleet(captured, options)[0]


def evaluate_fleet(captured: list[Captured], options: DoctorOptions
                   ) -> tuple[list[Report], list[CheckResult]]:
    """A Report per target, and the results of the fleet-wide checks (once for all)."""
    started, clock = now_iso(), time.monotonic()
    spec_ref = SpecRef(name=options.spec.name, digest=options.spec.digest()) \
        if options.spec else None
    targets, reports = [], {}
    fleet_checks: list[CheckResult] = []
    for item in captured:
        source = str(item.extra.get("source", "live"))
        if item.capture is None:
            reports[item.name] = Report(host=item.name, reachable=False, error=item.error,
                                        spec=spec_ref, level=options.level, started=started,
                                        source=source)
            continue
        facts = facts_from_capture(item.capture)
        targets.append(Target(name=item.name, facts=facts, host=item.host, source=source))
        reports[item.name] = Report(host=item.name, spec=spec_ref, level=options.level,
                                    started=started, source=source,
                                    captured_at=item.capture.captured_at or None)
    if targets:
        plugin = run_checks(DoctorContext(
            targets=targets, spec=options.spec, level=options.level, only=options.only,
            run_users=options.run_users, ranktable=options.ranktable,
            plan_hosts=plan_order(options, captured)
            if options.spec is not None and options.spec.network is not None else [],
            addresses={item.name: str(item.extra["address"]) for item in captured
                       if item.extra.get("address")}))
        for name, results in plugin.results.items():
            reports[name].checks = results
        fleet_checks = plugin.fleet_results
    elapsed = time.monotonic() - clock
    for item in captured:
        reports[item.name].duration_s = round(elapsed + item.duration_s, 3)
        reports[item.name].summarize()
    return [reports[item.name] for item in captured], fleet_checks


def as_document(reports: list[Report], options: DoctorOptions, started: str,
                duration_s: float, fleet_checks: list[CheckResult] | None = None
                ) -> Report | FleetReport:
    """One Report for one target (a fleet of one: the fleet-wide checks are its own); a
    FleetReport for an inventory or a list of captures."""
    if len(reports) == 1 and not options.fleet:
        reports[0].checks += fleet_checks or []
        return reports[0].summarize()
    spec_ref = reports[0].spec if reports else None
    return FleetReport(spec=spec_ref, level=options.level, started=started,
                       duration_s=round(duration_s, 3), hosts=reports,
                       fleet_checks=fleet_checks or []).summarize()


def doctor(options: DoctorOptions) -> Report | FleetReport:
    """Capture every target, run the suite, build the report."""
    if options.level not in LEVELS:
        raise UsageError(f"--level {options.level}: choose 1, 2 or 3")
    started, clock = now_iso(), time.monotonic()
    captured = captured_targets(options)
    reports, fleet_checks = evaluate_fleet(captured, options)
    return as_document(reports, options, started, time.monotonic() - clock, fleet_checks)


def collect(options: DoctorOptions, output: Path, *, redact: bool = False) -> CollectResult:
    """Capture the targets into one file (a list for several hosts) for `doctor --from`."""
    captured = captured_targets(options)
    captures = [c.capture for c in captured if c.capture is not None]
    if not captures:
        reasons = "; ".join(f"{c.name}: {c.error}" for c in captured)
        raise AscendEnvError(f"no host could be captured: {reasons}")
    if redact:
        captures = redact_captures(captures)
    save_captures(output, captures)
    return CollectResult(output=str(output), redacted=redact, hosts=[
        CollectedHost(name=c.name, captured=c.capture is not None, error=c.error)
        for c in captured])
