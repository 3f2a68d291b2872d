"""`ascend-env install`: resolved spec + verified repository -> ansible-playbook site.yml.

ansible-playbook runs as a subprocess rather than through ansible-runner: it is already a
dependency (ansible-core), needs no private-data directory layout, and our own callback plugin
(playbooks/callback_plugins/ascend_env_events.py) gives the per-host events that the progress
view and the summary need, while Ansible's normal output goes to a log file kept for the user.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from ascend_env.core.errors import AscendEnvError, UsageError
from ascend_env.core.resources import shipped_dir
from ascend_env.core.versions import AscendVersion
from ascend_env.install.installers import Installer, RepoError, verify_repo
from ascend_env.install.wheelhouse import PythonStack, bundle, python_stack
from ascend_env.spec.envspec import EnvSpec
from ascend_env.spec.matrix import load_chips, load_matrix
from ascend_env.spec.plan import Plan

# RepoError and verify_repo live in installers.py; callers keep importing them from here.
__all__ = ["COMPONENTS", "INSTALL_SCHEMA", "HostResult", "InstallOptions", "InstallSummary",
           "RepoError", "build_vars", "check_python_stack", "install", "post_install_doctor",
           "python_vars", "run_playbook", "summarize", "verify_repo"]

INSTALL_SCHEMA = "ascend-env/install/v1"
COMPONENTS = ("driver", "firmware", "cann", "python", "env", "user")
_FIRMWARE_RE = re.compile(r"npu-firmware_(?P<version>.+)\.run$")

# Where runs keep their Ansible log and events unless --log-dir says otherwise.
RUNS_DIR = Path.home() / ".cache" / "ascend-env" / "runs"

HostStatus = Literal["ok", "changed", "failed", "unreachable", "reboot required", "not run"]


class HostResult(BaseModel):
    """How one host ended."""

    host: str
    status: HostStatus
    ok: int = 0
    changed: int = 0
    failed: int = 0
    unreachable: int = 0
    skipped: int = 0
    reboot_required: bool = False
    message: str = ""
    output: str = Field("", description="the failed task's stderr and stdout (tails), which "
                        "the install view explains (issue 18)")
    doctor: dict[str, Any] | None = Field(
        None, description="the post-install doctor: counts by status and the failed check ids")


class InstallSummary(BaseModel):
    """The outcome of one install run, per host."""

    schema_: str = Field(INSTALL_SCHEMA, alias="schema")
    spec: str
    digest: str
    check: bool
    log: str
    hosts: list[HostResult]
    notes: list[str] = Field(default_factory=list,
                             description="what the operator should know that is not an error")

    model_config = {"populate_by_name": True}

    @property
    def succeeded(self) -> bool:
        """Every host reached the spec (or, in check mode, nothing failed)."""
        return bool(self.hosts) and all(h.status in ("ok", "changed") for h in self.hosts)


@dataclass
class InstallOptions:
    """What the command line says about how to install."""

    repo: Path
    inventory: Path | None = None
    host: str | None = None
    limit: str | None = None
    components: list[str] | None = None
    check: bool = False
    allow_reboot: bool = False
    force: bool = False
    serial: int | None = None
    log_dir: Path | None = None
    doctor: bool = True
    offline: bool = False  # a wheel missing from the repository is an error, not the index's
    extra_vars: dict[str, Any] = field(default_factory=dict)
    # -e/--extra-vars as typed (`key=value ...`, `@file`, JSON), after ours: theirs win.
    extra_args: list[str] = field(default_factory=list)


Event = dict[str, Any]


def _wanted(options: InstallOptions) -> set[str]:
    components = set(options.components or COMPONENTS)
    unknown = components - set(COMPONENTS)
    if unknown:
        raise UsageError(f"--components: unknown {', '.join(sorted(unknown))}; "
                         f"choose from {', '.join(COMPONENTS)}")
    return components


def build_vars(spec: EnvSpec, plan: Plan, installers: dict[str, Installer],
               options: InstallOptions,
               python: PythonStack | None = None) -> dict[str, Any]:
    """The extra-vars the playbook reads (ascend_*)."""
    components = _wanted(options)
    files = {name: installer.path for name, installer in installers.items()}
    chip = load_chips().get(spec.hardware.chip)
    assert chip is not None
    cann = spec.cann.version
    new_layout = cann.release() >= AscendVersion.parse("8.5.0")
    path = spec.install.path
    driver_item = next((i for i in plan.items if i.component == "driver"), None)
    firmware_file = files.get("firmware")
    firmware_match = _FIRMWARE_RE.search(firmware_file.name) if firmware_file else None
    cann_row = load_matrix().cann_row(cann)
    minimum = cann_row.minimum_hdk() if cann_row else None
    hdk_file = driver_item.file_version if driver_item else None
    packages = ["ops" if p == "kernels" else p for p in spec.cann.packages]
    return {
        "ascend_spec_name": spec.name,
        "ascend_spec_digest": spec.digest(),
        "ascend_arch": spec.hardware.arch,
        "ascend_chip_family": chip.family,
        "ascend_pci_device_id": chip.pci_device_id.lower(),
        "ascend_pci_expected": plan.devices // chip.chips_per_card,
        "ascend_install_path": path,
        "ascend_user": spec.install.user,
        "ascend_force": options.force,
        "ascend_allow_reboot": options.allow_reboot,
        "ascend_set_env": f"{path}/cann/set_env.sh" if new_layout
        else f"{path}/ascend-toolkit/set_env.sh",
        "ascend_toolkit_home": f"{path}/cann" if new_layout else f"{path}/ascend-toolkit/latest",
        "ascend_targets": {
            "driver": hdk_file if "driver" in components else None,
            "firmware": firmware_match["version"] if firmware_match and "firmware" in components
            else None,
            "cann": cann.raw if "cann" in components else None,
            "packages": packages,
            "min_driver": minimum.raw if minimum else None,
        },
        "ascend_files": {name: str(path_) for name, path_ in files.items()},
        # The host checks its copy of each installer against these before running it.
        "ascend_digests": {name: installer.sha256 for name, installer in installers.items()},
        "ascend_python": python_vars(spec, python, options) if python else None,
        # The env role writes the thread settings threads.omp expects (doctor/threads.py).
        "ascend_threads": {"spec": spec.threads.model_dump(mode="json"),
                           "devices": spec.hardware.devices},
        "ascend_serial": options.serial or 0,
        "ascend_max_fail_percentage": 0 if options.serial else 100,
        **options.extra_vars,
    }


def check_python_stack(stack: PythonStack | None, options: InstallOptions) -> list[str]:
    """Notes for the summary; with --offline, a gap is an error before any host is touched."""
    if stack is None or stack.offline:
        return []
    listed = "\n  ".join(str(m) for m in stack.missing)
    if options.offline:
        raise RepoError("--offline: the repository lacks wheels the frameworks need, nothing "
                        f"was changed on any host:\n  {listed}\nOn a machine with internet "
                        f"access, fetch them with:\n  {stack.hint}")
    return [f"python: {len(stack.missing)} requirement(s) are not in the repository; pip on "
            f"each host will take them from its configured index:\n  {listed}\nTo install "
            f"offline, first run: {stack.hint}"]


def python_vars(spec: EnvSpec, stack: PythonStack, options: InstallOptions) -> dict[str, Any]:
    cache = options.log_dir / "bundles" if options.log_dir else RUNS_DIR.parent / "bundles"
    archive = bundle(stack.wheels, cache) if stack.wheels else None
    return {"version": spec.python.version, "venv": spec.python.venv,
            "requirements": stack.requirements, "offline": stack.offline,
            # Offline, the exact versions the venv must hold: a venv that has them all is
            # left alone without starting pip (about a second per host).
            "closure": stack.closure if stack.offline else None,
            # Offline, pip installs with --require-hashes from these (install/wheel_digests.py).
            "hashes": stack.hashed_requirements() if stack.offline else None,
            "bundle": str(archive) if archive else None,
            "bundle_id": archive.stem if archive else None}


def _inventory_args(options: InstallOptions) -> list[str]:
    if options.inventory is not None:
        if not options.inventory.exists():
            raise UsageError(f"inventory {options.inventory} does not exist")
        return ["-i", str(options.inventory)]
    if options.host is not None:
        return ["-i", f"{options.host},"]
    # No inventory: provision this machine.
    return ["-i", "localhost,", "-c", "local"]


def _ansible_playbook() -> str:
    beside = Path(sys.executable).parent / "ansible-playbook"
    found = str(beside) if beside.exists() else shutil.which("ansible-playbook")
    if found is None:
        raise UsageError("ansible-playbook is not installed (it comes with ansible-core; "
                         "reinstall ascend-env)")
    return found


def _tail(path: Path, stop: threading.Event, on_event: Callable[[Event], None]) -> None:
    """Follow the events file until `stop` is set and everything written was read."""
    while not path.exists() and not stop.is_set():
        time.sleep(0.05)
    if not path.exists():
        return
    with path.open(encoding="utf-8") as handle:
        while True:
            line = handle.readline()
            if line:
                on_event(json.loads(line))
            elif stop.is_set():
                return
            else:
                time.sleep(0.1)


def run_playbook(variables: dict[str, Any], options: InstallOptions, *,
                 playbook: str = "site.yml",
                 on_event: Callable[[Event], None] = lambda event: None) -> tuple[int, Path,
                                                                                   list[Event]]:
    """Run one playbook with the events callback; returns rc, log path and all events."""
    run_dir = options.log_dir or RUNS_DIR
    run_dir = run_dir / time.strftime("%Y%m%d-%H%M%S")
    suffix = 0
    while run_dir.exists():
        suffix += 1
        run_dir = run_dir.with_name(run_dir.name.split(".")[0] + f".{suffix}")
    run_dir.mkdir(parents=True)
    (run_dir / "extra-vars.json").write_text(json.dumps(variables, indent=2))
    events_path, log_path = run_dir / "events.jsonl", run_dir / "ansible.log"
    playbooks = shipped_dir("playbooks")
    command = [_ansible_playbook(), str(playbooks / playbook), *_inventory_args(options),
               "-e", f"@{run_dir / 'extra-vars.json'}"]
    for extra in options.extra_args:
        command += ["-e", extra]
    if options.limit:
        command += ["--limit", options.limit]
    if options.check:
        command += ["--check", "--diff"]
    if options.components:
        command += ["--tags", ",".join(options.components)]
    env = {**os.environ, "ASCEND_ENV_EVENTS": str(events_path),
           "ANSIBLE_CALLBACKS_ENABLED": "ascend_env_events",
           "ANSIBLE_CALLBACK_PLUGINS": str(playbooks / "callback_plugins"),
           "ANSIBLE_NOCOLOR": "1", "ANSIBLE_RETRY_FILES_ENABLED": "0",
           # One ssh round-trip per task instead of three (module copy, run, clean-up).
           "ANSIBLE_PIPELINING": os.environ.get("ANSIBLE_PIPELINING", "True"),
           "ANSIBLE_INTERPRETER_PYTHON": os.environ.get("ANSIBLE_INTERPRETER_PYTHON",
                                                        "auto_silent")}
    events: list[Event] = []

    def collect(event: Event) -> None:
        events.append(event)
        on_event(event)

    stop = threading.Event()
    follower = threading.Thread(target=_tail, args=(events_path, stop, collect), daemon=True)
    follower.start()
    with log_path.open("w", encoding="utf-8") as log:
        log.write("$ " + " ".join(command) + "\n")
        log.flush()
        done = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, env=env,
                              stdin=subprocess.DEVNULL, check=False)
    stop.set()
    follower.join()
    return done.returncode, log_path, events


def summarize(events: list[Event]) -> list[HostResult]:
    """Per-host results from the callback's events (hosts never run are `not run`)."""
    stats: dict[str, dict[str, Any]] = {}
    last_failure: dict[str, str] = {}
    last_output: dict[str, str] = {}
    hosts: set[str] = set()
    for event in events:
        if event["event"] == "play":
            hosts.update(event["hosts"])
        elif event["event"] == "stats":
            stats = event["hosts"]
        elif event["event"] == "result" and event["status"] in ("failed", "unreachable"):
            text = event.get("message") or event.get("stdout") or ""
            last_failure[event["host"]] = f"{event['task']}: {text}".strip()
            last_output[event["host"]] = "\n".join(
                str(event.get(k) or "") for k in ("stderr", "stdout") if event.get(k))
    results = []
    for host in sorted(set(stats) | set(last_failure) | hosts):
        counts = stats.get(host)
        if counts is None:
            results.append(HostResult(host=host, status="not run",
                                      message=last_failure.get(host, "the roll stopped before "
                                                               "this host's batch")))
            continue
        reboot = bool(counts.get("custom", {}).get("ascend_reboot_required"))
        if counts.get("unreachable"):
            status: HostStatus = "unreachable"
        elif counts.get("failures"):
            status = "failed"
        elif reboot:
            status = "reboot required"
        elif counts.get("changed"):
            status = "changed"
        else:
            status = "ok"
        results.append(HostResult(
            host=host, status=status, ok=counts.get("ok", 0), changed=counts.get("changed", 0),
            failed=counts.get("failures", 0), unreachable=counts.get("unreachable", 0),
            skipped=counts.get("skipped", 0), reboot_required=reboot,
            message=last_failure.get(host, "reboot the host, then run install again"
                                     if reboot else ""),
            output=last_output.get(host, "")))
    return results


# What install controls, so what its doctor run judges (the full doctor is `ascend-env
# doctor`). The python role adds the frameworks and their dependencies, the env role the
# thread settings.
POST_INSTALL_CATEGORIES = ("hardware", "driver", "firmware", "devices", "cann", "env",
                           "permissions")
PYTHON_CATEGORIES = ("frameworks", "python")


def post_install_doctor(spec: EnvSpec, options: InstallOptions,
                        results: list[HostResult], *, python: bool = False) -> None:
    """Run the level-1 doctor on the hosts that reached the spec; a failed check fails them."""
    from ascend_env.doctor.report import FleetReport  # noqa: PLC0415
    from ascend_env.doctor.run import DoctorOptions, doctor  # noqa: PLC0415 - pytest is heavy

    done = [host for host in results if host.status in ("ok", "changed")]
    if not done:
        return
    local = options.inventory is None and options.host is None
    document = doctor(DoctorOptions(
        spec=spec, inventory=options.inventory, target=options.host,
        limit=",".join(host.host for host in done) if options.inventory else None,
        only=POST_INSTALL_CATEGORIES + (PYTHON_CATEGORIES if python else ())
        + (("threads",) if "env" in _wanted(options) else ())))
    reports = document.hosts if isinstance(document, FleetReport) else [document]
    by_name = {report.host: report for report in reports}
    for host in done:
        # Ansible calls this machine `localhost`; the doctor uses its host name.
        report = by_name.get(host.host) or (reports[0] if local or len(reports) == 1 else None)
        if report is None:
            continue
        failed = [check for check in report.checks if check.status in ("fail", "error")]
        host.doctor = {"summary": dict(report.summary),
                       "failed": [check.id for check in failed]}
        if not report.reachable:
            host.status, host.message = "failed", f"post-install doctor: {report.error}"
        elif failed:
            host.status = "failed"
            host.message = "post-install doctor: " + "; ".join(
                f"{check.id}: {check.message}" for check in failed)


def install(spec: EnvSpec, plan: Plan, options: InstallOptions, *,
            on_event: Callable[[Event], None] = lambda event: None) -> InstallSummary:
    """Verify the repository, then run site.yml and summarise every host."""
    files = verify_repo(plan, options.repo, _wanted(options))
    python = python_stack(spec, options.repo) if "python" in _wanted(options) else None
    notes = check_python_stack(python, options)
    variables = build_vars(spec, plan, files, options, python)
    rc, log, events = run_playbook(variables, options, on_event=on_event)
    results = summarize(events)
    if not results and rc != 0:
        raise AscendEnvError(f"ansible-playbook failed before any host ran (exit {rc}); "
                             f"see {log}")
    if options.doctor and not options.check:
        post_install_doctor(spec, options, results,
                            python=variables["ascend_python"] is not None)
    return InstallSummary(spec=spec.name, digest=spec.digest(), check=options.check,
                          log=str(log), hosts=results, notes=notes)
