"""`explain --host/--inventory/--from`: each target captured once (or read from a saved
capture); the doctor runs only the checks the matched causes name and the pairing checks of
the packages they involve; the installed versions are read from the same capture."""

from __future__ import annotations

from dataclasses import replace

from ascend_env.doctor.run import DoctorOptions, captured_targets, evaluate
from ascend_env.explain.confirm import (
    HostChecks,
    installed_versions,
    involved_packages,
    pairings,
    wanted_checks,
)
from ascend_env.explain.hits import Hit
from ascend_env.facts.assemble import facts_from_capture


def confirm_on_hosts(options: DoctorOptions, hits: list[Hit]) -> list[HostChecks]:
    """Per target: the checks' results, the packages' versions and the matrix's pairings;
    nothing is captured when no cause names a check or a package."""
    packages = involved_packages(hits)
    checks = wanted_checks([c for hit in hits for c in hit.signature.causes], packages)
    if not checks and not packages:
        return []
    captured = captured_targets(options)
    # `only=()` would run every check: with none wanted, the suite is not run at all.
    reports = {r.host: r for r in evaluate(captured, replace(options, only=checks))} \
        if checks else {}
    out = []
    for item in captured:
        if item.capture is None:
            out.append(HostChecks(host=item.name, reachable=False, error=item.error))
            continue
        report = reports.get(item.name)
        results = {check.id: check for check in report.checks} if report else {}
        pairs, unpaired = pairings(packages, dict(results))
        out.append(HostChecks(
            host=item.name, reachable=True, results=dict(results),
            installed=installed_versions(facts_from_capture(item.capture), packages)
            if packages else [],
            pairings=pairs, unpaired=unpaired))
    return out
