"""`ascend-env install`: resolved spec + verified repository -> ansible-playbook site.yml.

The playbook runs through ascend_env/ansible/runner.py; the post-install doctor is composed
by the command (workflows/install_checked.py), so install knows nothing of the check suite.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from ascend_env.ansible.extra_vars import check_extra_vars
from ascend_env.ansible.host_lock import takeovers
from ascend_env.ansible.runner import (
    RUNS_DIR,
    Event,
    HostResult,
    PlaybookRun,
    run_playbook,
    summarize,
)
from ascend_env.ansible.stopped import Interruption, RunStopped
from ascend_env.ansible.variables import (
    Installers,
    OsPackagesVars,
    PythonVars,
    RollbackVars,
    SiteVars,
    Targets,
    ThreadVars,
)
from ascend_env.core.errors import AscendEnvError, UsageError
from ascend_env.install.prerequisites import os_package_notes, os_vars
from ascend_env.install.state import save_records
from ascend_env.install.upgrade_plan import Change, run_changes
from ascend_env.repository.installers import Installer, RepoError, verify_repo
from ascend_env.repository.wheelhouse import PythonStack, bundle, python_stack
from ascend_env.spec.cann_layout import cann_layout
from ascend_env.spec.envspec import EnvSpec
from ascend_env.spec.matrix import load_chips, load_matrix
from ascend_env.spec.plan import Plan

INSTALL_SCHEMA = "ascend-env/install/v1"
COMPONENTS = ("driver", "firmware", "cann", "python", "env", "user")
_FIRMWARE_RE = re.compile(r"npu-firmware_(?P<version>.+)\.run$")


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
    interrupted: Interruption | None = Field(
        None, description="a signal stopped the run: where each host was, the log, and the "
                          "command that continues")
    changes: dict[str, list[Change]] = Field(
        default_factory=dict, description="per host, each component from -> to: what "
        "preflight found and what the run left (in check mode: would leave)")

    model_config = {"populate_by_name": True}

    @property
    def succeeded(self) -> bool:
        """Every host reached the spec (or, in check mode, nothing failed)."""
        return bool(self.hosts) and self.interrupted is None and \
            all(h.status in ("ok", "changed") for h in self.hosts)

    def exit_code(self) -> int:
        """0 every host reached the spec; 1 not; 128 + the signal's number when one stopped it."""
        if self.interrupted is not None:
            return self.interrupted.exit_code
        return 0 if self.succeeded else 1


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
    offline: bool = False  # a wheel missing from the repository is an error, not the index's
    # -e/--extra-vars, read (ansible/extra_vars.py read_extra_vars); typed here, so a value
    # site.yml's roles would refuse stops the command before anything else is done.
    extra_vars: dict[str, Any] = field(default_factory=dict)
    # Seconds to wait for a host's lock held by another run (--wait-lock); 0 refuses at once.
    lock_wait: float = 0.0
    # A rollback to a recorded state (install/rollback.py); None for an install.
    rollback: RollbackVars | None = None

    def __post_init__(self) -> None:
        self.extra_vars = check_extra_vars(self.extra_vars)

    def playbook_run(self) -> PlaybookRun:
        """site.yml's hosts, tags (the components), check mode and log folder."""
        return PlaybookRun(inventory=self.inventory, host=self.host, limit=self.limit,
                           tags=self.components, check=self.check, log_dir=self.log_dir,
                           lock_wait=self.lock_wait)

    def wanted(self) -> set[str]:
        """The components this run installs (all of them unless --components narrowed it)."""
        components = set(self.components or COMPONENTS)
        unknown = components - set(COMPONENTS)
        if unknown:
            raise UsageError(f"--components: unknown {', '.join(sorted(unknown))}; "
                             f"choose from {', '.join(COMPONENTS)}")
        return components


def build_vars(spec: EnvSpec, plan: Plan, installers: dict[str, Installer],
               options: InstallOptions,
               python: PythonStack | None = None, *,
               os_packages: OsPackagesVars | None = None) -> dict[str, Any]:
    """site.yml's extra vars: the dump of one SiteVars, then `options.extra_vars`.

    An override of a SiteVars field is checked again with the whole model; the others are
    role options, typed already as their roles declare them (InstallOptions)."""
    components = options.wanted()
    chip = load_chips().get(spec.hardware.chip)
    assert chip is not None
    cann = spec.cann.version
    layout = cann_layout(spec)
    driver_item = next((i for i in plan.items if i.component == "driver"), None)
    firmware_file = installers["firmware"].path if "firmware" in installers else None
    firmware_match = _FIRMWARE_RE.search(firmware_file.name) if firmware_file else None
    cann_row = load_matrix().cann_row(cann)
    minimum = cann_row.minimum_hdk() if cann_row else None
    # Relative to the install path, which an inventory may set per host. On a host the
    # `cann` link names the installed release (the images name cann-<ver>).
    home = f"{layout.install_path}/cann" if layout.new else layout.home
    below = layout.install_path.rstrip("/") + "/"
    built = SiteVars(
        ascend_spec_name=spec.name,
        ascend_spec_digest=spec.digest(),
        ascend_spec_document=spec.model_dump(mode="json"),
        ascend_arch=spec.hardware.arch,
        ascend_chip_family=chip.family,
        ascend_pci_device_id=chip.pci_device_id.lower(),
        ascend_pci_expected=plan.devices // chip.chips_per_card,
        ascend_spec_install_path=layout.install_path,
        ascend_spec_user=spec.install.user,
        ascend_cann_set_env=layout.set_env.removeprefix(below),
        ascend_cann_home=home.removeprefix(below),
        ascend_force=options.force,
        ascend_allow_reboot=options.allow_reboot,
        ascend_targets=Targets(
            driver=driver_item.file_version if driver_item and "driver" in components
            else None,
            firmware=firmware_match["version"] if firmware_match and "firmware" in components
            else None,
            cann=cann.raw if "cann" in components else None,
            packages=["ops" if p == "kernels" else p for p in spec.cann.packages],
            min_driver=minimum.raw if minimum else None),
        ascend_files=Installers.model_validate(
            {name: str(installer.path) for name, installer in installers.items()}),
        # The host checks its copy of each installer against these before running it.
        ascend_digests=Installers.model_validate(
            {name: installer.sha256 for name, installer in installers.items()}),
        ascend_python=PythonVars.model_validate(python_vars(spec, python, options))
        if python else None,
        ascend_os_packages=os_packages,
        # The env role writes the thread settings threads.omp expects (doctor/threads.py).
        ascend_threads=ThreadVars(spec=spec.threads, devices=spec.hardware.devices),
        ascend_serial=options.serial or 0,
        ascend_max_fail_percentage=0 if options.serial else 100,
        ascend_rollback=options.rollback)
    ours = {k: v for k, v in options.extra_vars.items() if k in SiteVars.model_fields}
    tunables = {k: v for k, v in options.extra_vars.items() if k not in ours}
    try:
        checked = SiteVars.model_validate({**built.model_dump(), **ours})
    except ValidationError as exc:
        raise UsageError(f"extra vars for site.yml: {exc}") from exc
    return {**checked.model_dump(mode="json"), **tunables}


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


def bundle_cache(options: InstallOptions) -> Path:
    """Where the archives shipped to hosts (wheels, OS packages) are made and kept."""
    return options.log_dir / "bundles" if options.log_dir else RUNS_DIR.parent / "bundles"


def python_vars(spec: EnvSpec, stack: PythonStack, options: InstallOptions) -> dict[str, Any]:
    """The python role's `ascend_python` (a PythonVars, dumped)."""
    cache = bundle_cache(options)
    archive = bundle(stack.wheels, cache) if stack.wheels else None
    return PythonVars(
        version=spec.python.version, venv=spec.python.venv,
        requirements=stack.requirements, offline=stack.offline,
        # Offline, the exact versions the venv must hold: a venv that has them all is left
        # alone without starting pip.
        closure=stack.closure if stack.offline else None,
        # Offline, pip installs with --require-hashes from these (repository/wheel_digests.py).
        hashes=stack.hashed_requirements() if stack.offline else None,
        bundle=str(archive) if archive else None,
        bundle_id=archive.stem if archive else None).model_dump(mode="json")


def install(spec: EnvSpec, plan: Plan, options: InstallOptions, *,
            on_event: Callable[[Event], None] = lambda event: None) -> InstallSummary:
    """Verify the repository, then run site.yml and summarise every host."""
    files = verify_repo(plan, options.repo, options.wanted())
    python = python_stack(spec, options.repo) if "python" in options.wanted() else None
    notes = check_python_stack(python, options)
    # The OS packages the prerequisites role may install, checked against repo.json here.
    os_packages = os_vars(spec, options.repo, bundle_cache(options), venv=python is not None) \
        if options.wanted() & {"driver", "cann", "python"} else None
    variables = build_vars(spec, plan, files, options, python, os_packages=os_packages)
    try:
        rc, log, events = run_playbook(variables, options.playbook_run(), on_event=on_event)
    except RunStopped as stopped_run:
        stopped = stopped_run.account
        return InstallSummary(
            spec=spec.name, digest=spec.digest(), check=options.check, log=stopped.log,
            hosts=[HostResult(host=where.host, status="interrupted", ok=where.tasks_done,
                              changed=where.changed, failed=int(where.failed),
                              message=where.describe())
                   for where in stopped.hosts], notes=notes, interrupted=stopped)
    results = summarize(events)
    notes += takeovers(events) + os_package_notes(events, options.check)
    save_records(events, log.parent)
    if not results and rc != 0:
        raise AscendEnvError(f"ansible-playbook failed before any host ran (exit {rc}); "
                             f"see {log}")
    return InstallSummary(spec=spec.name, digest=spec.digest(), check=options.check,
                          log=str(log), hosts=results, notes=notes,
                          changes=run_changes(log.parent, [host.host for host in results]))
