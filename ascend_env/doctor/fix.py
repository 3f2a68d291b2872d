"""`doctor --fix`: failing checks name fix ids -> fix.yml --tags <ids> -> the checks again.

Only the hosts with fixable failures are touched, each with its own values worked out from
its facts (the CANN it really has, its device nodes, its topology). `--check` runs Ansible
in check and diff mode and re-checks nothing.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ascend_env.ansible.runner import PlaybookRun, run_playbook, summarize
from ascend_env.ansible.variables import FixHostVars, FixTargets, FixVars, NetworkPort
from ascend_env.core.errors import AscendEnvError
from ascend_env.doctor.report import FixRef, FixRun, FleetReport, Report
from ascend_env.doctor.run import (
    DoctorOptions,
    as_document,
    captured_targets,
    evaluate_fleet,
    now_iso,
    plan_order,
)
from ascend_env.doctor.threads import plan_threads
from ascend_env.facts.assemble import facts_from_capture
from ascend_env.facts.model import Facts
from ascend_env.spec.envspec import EnvSpec, Threads
from ascend_env.spec.network_plan import plan_for
from ascend_env.targets.collect import Captured

FIX_IDS = ("ld-library-path", "device-permissions", "python-deps", "aicpu-threads",
           "selinux-context", "network-ip")
NETWORK_IP = "network-ip"
# checks/test_python.py's list; the fix installs what the check found missing.
_PYTHON_DEPS_CHECK = "python.cann-deps"


def network_ports(spec: EnvSpec | None, names: list[str], name: str,
                  facts: Facts) -> list[dict[str, Any]]:
    """The spec's planned settings of each NPU port of host `name`, the hosts numbered in the
    plan's order `names` (run.plan_order: the whole inventory); empty without a plan or
    without ports seen on the host, where the network-ip fix has nothing it could set."""
    if spec is None or spec.network is None or not facts.network.devices:
        return []
    plan = plan_for(spec.network, names, max(facts.network.devices) + 1)[name]
    return [{"device": device, "address": port.address, "netmask": port.netmask,
             "gateway": port.gateway, "netdetect": port.netdetect}
            for device, port in sorted(plan.items()) if device in facts.network.devices]


def network_refusal(spec: EnvSpec | None, facts: Facts) -> str | None:
    """Why network-ip cannot run on a host (None: it can): the addresses come from the
    spec's plan and the ports from hccn_tool's answers; a fix that guessed either would set
    addresses the rank table and the other hosts do not expect."""
    if spec is None:
        return ("not applied: no spec, so no address plan; give --spec with a `network` "
                "section (per device index a subnet, or addresses per host)")
    if spec.network is None:
        return (f"not applied: spec {spec.name} has no `network` section, so no address "
                "plan; add one (per device index a subnet, or addresses per host)")
    if not facts.network.devices:
        return ("not applied: hccn_tool answered for no NPU port on this host (see "
                "network.hccn-tool); there is no port to set")
    return None


def host_vars(facts: Facts, spec: EnvSpec | None, run_users: tuple[str, ...],
              report: Report, ports: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The values fix.yml's roles need for one host, from that host's own facts (a
    FixHostVars, dumped: the entry of ascend_fix_hosts that fix.yml hands to its roles)."""
    cann = facts.cann
    base = (cann.install_path if cann else None) or \
        (facts.driver.install_path if facts.driver else None) or \
        (spec.install.path if spec else "/usr/local/Ascend")
    new_layout = cann.layout == "new" if cann else True
    set_env = (cann.set_env if cann else None) or \
        (f"{base}/cann/set_env.sh" if new_layout else f"{base}/ascend-toolkit/set_env.sh")
    users = facts.users
    plan = plan_threads(facts, spec.threads if spec else Threads(),
                        spec.hardware.devices if spec else None)
    missing = next((c.message.split(": ", 1)[1].split(", ") for c in report.checks
                    if c.id == _PYTHON_DEPS_CHECK and c.status == "fail" and ": " in c.message),
                   [])
    python = facts.frameworks.python.executable if facts.frameworks.python else None
    return FixHostVars(
        spec_name=spec.name if spec else "doctor",
        spec_digest=spec.digest() if spec else "no spec (doctor --fix)",
        install_path=base,
        set_env=set_env,
        toolkit_home=f"{base}/cann" if new_layout else f"{base}/ascend-toolkit/latest",
        targets=FixTargets(cann=cann.version_raw if cann else None,
                           packages=sorted(cann.packages) if cann else []),
        driver_user=users.driver_user,
        driver_group=users.driver_group,
        device_nodes=[n.path for n in facts.device_nodes],
        run_users=[u for u in run_users if u in users.others],
        python=python or "python3",
        python_packages=[p.strip() for p in missing if p.strip()],
        omp_num_threads=plan.omp_num_threads,
        cpu_affinity_conf=plan.cpu_affinity_conf,
        threads_basis=plan.basis,
        selinux_paths=[base, *(spec.selinux.container_paths if spec else [])],
        network_tool=f"{base}/driver/tools/hccn_tool",
        network_ports=[NetworkPort.model_validate(port) for port in ports or []],
    ).model_dump(mode="json")


def fixable(report: Report, *, network_plan: bool = True) -> list[str]:
    """The fix ids of a host's failing (or warning) checks, in fix.yml's order; network-ip
    only with a spec's network plan (without one there is no address to set)."""
    wanted = {c.fix.id for c in report.checks
              if c.status in ("fail", "warn") and c.fix is not None and c.fix.id}
    if not network_plan:
        wanted.discard(NETWORK_IP)
    return [f for f in FIX_IDS if f in wanted]


def _refused(name: str, reason: str, run: FixRun | None, *, log: Path | None,
             dry_run: bool) -> FixRun:
    """The host's fix run with the refused network-ip in `failed`, so the report says why."""
    note = f"{NETWORK_IP}: {reason}"
    if run is None:
        return FixRun(mode="dry-run" if dry_run else "apply", ids=[], status="not run",
                      failed=[note], log=str(log) if log else "")
    return run.model_copy(update={"failed": [*run.failed, note]})


def _fix_run(name: str, ids: list[str], events: list[dict[str, Any]], status: str, *,
             log: Path, dry_run: bool) -> FixRun:
    mine = [e for e in events if e.get("event") == "result" and e.get("host") == name]
    changed = [e["task"] for e in mine if e.get("changed")]
    failed = [f"{e['task']}: {e.get('message', '')}".strip() for e in mine
              if e.get("status") in ("failed", "unreachable")]
    return FixRun(mode="dry-run" if dry_run else "apply", ids=ids, status=status,
                  changed=list(dict.fromkeys(changed)), failed=failed, log=str(log))


def _not_applied(report: Report) -> None:
    """Mark the checks whose fix is the refused network-ip: their fix was not applied."""
    for check in report.checks:
        if check.fix is not None and check.fix.id == NETWORK_IP and check.status != "pass":
            check.fix = check.fix.model_copy(update={"applied": False})


def _plan_fixes(captured: list[Captured], reports: list[Report], options: DoctorOptions
                ) -> tuple[dict[str, list[str]], dict[str, str], dict[str, dict[str, Any]]]:
    """Per host: the fix ids to run, why network-ip cannot run there (if it cannot), and the
    extra vars of fix.yml."""
    plans: dict[str, list[str]] = {}
    refused: dict[str, str] = {}
    variables: dict[str, dict[str, Any]] = {}
    planned = options.spec is not None and options.spec.network is not None
    names = plan_order(options, captured) if planned else []
    for item, report in zip(captured, reports, strict=True):
        if item.capture is None:
            continue
        ids = fixable(report)
        facts = facts_from_capture(item.capture)
        ports: list[dict[str, Any]] = []
        if NETWORK_IP in ids:
            reason = network_refusal(options.spec, facts)
            if reason is None:
                ports = network_ports(options.spec, names, item.name, facts)
            else:
                refused[item.name] = reason
                ids.remove(NETWORK_IP)
        if ids:
            plans[item.name] = ids
            variables[item.name] = host_vars(facts, options.spec, options.run_users, report,
                                             ports)
    return plans, refused, variables


def doctor_fix(options: DoctorOptions, *, dry_run: bool = False,
               log_dir: Path | None = None, lock_wait: float = 0.0) -> Report | FleetReport:
    """Check, apply the fixes of failing checks (or show them), check the fixed hosts again.
    fix.yml takes each host's lock (waiting `lock_wait` seconds for another run's); a stop
    signal ends it with RunStopped (ansible/stopped.py)."""
    started, clock = now_iso(), time.monotonic()
    captured = captured_targets(options)
    reports, fleet_checks = evaluate_fleet(captured, options)
    plans, refused, variables = _plan_fixes(captured, reports, options)
    if not plans:
        for report in reports:
            if report.host in refused:
                report.fixes = _refused(report.host, refused[report.host], None, log=None,
                                        dry_run=dry_run)
                _not_applied(report)
        return as_document(reports, options, started, time.monotonic() - clock, fleet_checks)
    tags = [f for f in FIX_IDS if any(f in ids for ids in plans.values())]
    local = options.inventory is None and options.target is None
    playbook_run = PlaybookRun(inventory=options.inventory,
                               host=options.target if not local else None,
                               limit=",".join(plans) if not local else None, tags=tags,
                               check=dry_run, log_dir=log_dir, lock_wait=lock_wait)
    fix_vars = FixVars.model_validate({"ascend_fix_hosts": variables})
    rc, log, events = run_playbook(fix_vars.model_dump(mode="json"), playbook_run,
                                   playbook="fix.yml")
    results = {r.host: r for r in summarize(events)}
    if not results and rc != 0:
        raise AscendEnvError(f"ansible-playbook fix.yml failed before any host ran (exit {rc});"
                             f" see {log}")
    runs = {name: _fix_run(name, ids, events, results[name].status if name in results
                           else "not run", log=log, dry_run=dry_run)
            for name, ids in plans.items()}
    before = {r.host: {c.id: c.fix for c in r.checks if c.fix is not None and c.fix.id}
              for r in reports}
    if not dry_run:
        # Re-check the fixed hosts: the report shows the state after the fix.
        # The whole fleet again, not only the fixed hosts: fleet-wide checks judge all.
        fresh_reports, fleet_checks = evaluate_fleet(captured_targets(options), options)
        fresh = {r.host: r for r in fresh_reports}
        reports = [fresh.get(r.host, r) if r.host in plans else r for r in reports]
    for report in reports:
        run = runs.get(report.host)
        if report.host in refused:
            run = _refused(report.host, refused[report.host], run, log=log, dry_run=dry_run)
            _not_applied(report)
        if run is None:
            continue
        report.fixes = run
        applied = not dry_run and run.status in ("ok", "changed")
        for check in report.checks:
            earlier = before[report.host].get(check.id)
            if earlier is not None and earlier.id in run.ids:
                # A check the fix made pass still says what fixed it.
                check.fix = FixRef(id=earlier.id, command=earlier.command, applied=applied)
    return as_document(reports, options, started, time.monotonic() - clock, fleet_checks)
