"""Commands that fill a verified repository and install a host or a fleet from it.

Each command imports what it runs inside itself, so `--help`, `--version` and the
other commands load none of it (benchmarks/startup.py measures what that saves).
"""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ascend_env.cli.options import (
    DEFAULT_REPO,
    ArchOption,
    CheckFlag,
    ExtraVarsOption,
    HostOption,
    InventoryOption,
    JsonFlag,
    LimitOption,
    ProfileOption,
    RepoOption,
    SpecOption,
    arch_value,
)
from ascend_env.core.errors import UsageError
from ascend_env.core.host_target import parse_host

if TYPE_CHECKING:
    from ascend_env.spec.catalogue import Catalogue


class OnFail(str, Enum):
    """What a failed batch leads to."""

    stop = "stop"
    rollback = "rollback"


# What install and rollback both take.
CatalogueOption = Annotated[Path | None, typer.Option(
    "--catalogue", help="Catalogue overlay used for fetch.")]
AllowRebootOption = Annotated[bool, typer.Option(
    "--allow-reboot", help="Reboot hosts after a driver/firmware change.")]
LogDirOption = Annotated[Path | None, typer.Option("--log-dir", help="Where run logs go.")]
PostDoctorOption = Annotated[bool, typer.Option(
    "--doctor/--no-doctor", help="Run the level-1 doctor on the hosts afterwards.")]

# One change to a host at a time: install and doctor --fix take each host's lock.
WaitLockOption = Annotated[float, typer.Option(
    "--wait-lock", min=0, max=86400, metavar="SECONDS",
    help="Wait this long for a host that another run is changing (its lock), instead of "
         "refusing that host at once.")]


def fetch(
    dest: RepoOption = DEFAULT_REPO,
    profile: ProfileOption = None,
    spec: SpecOption = None,
    arch: ArchOption = None,
    mirror: Annotated[str | None, typer.Option(
        "--mirror", help="Site mirror: the catalogue URL's path under this base URL.")] = None,
    from_dir: Annotated[Path | None, typer.Option(
        "--from-dir", help="Import files you already have (e.g. ascend-deployer resources/).")
    ] = None,
    catalogue: Annotated[Path | None, typer.Option(
        "--catalogue", help="Catalogue overlay JSON (files and sha256 sums).")] = None,
    allow_unverified: Annotated[list[str] | None, typer.Option(
        "--allow-unverified", help="Accept this overlay file without a sha256.")] = None,
    python_wheels: Annotated[bool, typer.Option(
        "--python-wheels", help="Also pip-download what the framework venv needs (CANN's "
                                "Python dependencies and the frameworks' own) into DEST/wheels.")
    ] = False,
    index_url: Annotated[str | None, typer.Option(
        "--index-url", help="The package index for --python-wheels (default: pip's).")] = None,
    os_mirror: Annotated[list[str] | None, typer.Option(
        "--os-mirror", help="Also the OS packages the spec's OS needs (driver build, Python, "
        "CANN's prerequisites), resolved by its own dnf/apt from this mirror: a URL (apt: "
        "'URL [SUITE [COMPONENT...]]') or a folder copied from one. Repeatable. Without it, "
        "a copy in --from-dir's os/<os key>/ is used.")] = None,
    kernel: Annotated[list[str] | None, typer.Option(
        "--kernel", metavar="RELEASE", help="A running kernel of the hosts (`uname -r`): the "
        "OS packages include its devel packages. Repeatable.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Download or import every vendor file of a spec into a verified local repository."""
    from ascend_env.cli.install_view import fetch_progress, render_fetch
    from ascend_env.repository.fetch import Source, fetch_python
    from ascend_env.repository.fetch import fetch as fetch_files
    from ascend_env.repository.os_packages import OsSource, fetch_os
    from ascend_env.spec.catalogue import load_catalogue, load_overlay
    from ascend_env.spec.envspec import load_spec
    from ascend_env.spec.plan import resolve

    merged = load_catalogue()
    if catalogue is not None:
        merged = merged.merged(load_overlay(
            catalogue, allow_unverified=frozenset(allow_unverified or [])))
    loaded = load_spec(profile=profile, path=spec, arch=arch_value(arch))
    resolved = resolve(loaded, merged)
    with fetch_progress(enabled=not as_json and sys.stderr.isatty()) as progress:
        result = fetch_files(resolved, dest, Source(mirror=mirror, from_dir=from_dir),
                             progress=progress)
    result = fetch_python(result, loaded, download=python_wheels, index_url=index_url,
                          mirror=mirror)
    result = fetch_os(result, loaded, OsSource(mirrors=tuple(os_mirror or ()),
                                               kernels=tuple(kernel or ()), from_dir=from_dir))
    render_fetch(result, as_json=as_json)
    raise typer.Exit(0 if result.complete else 1)


def _playbook_inputs(command: str, inventory: Path | None, host: str | None,
                     catalogue: Path | None) -> Catalogue:
    """What install and rollback check before anything runs: one kind of target, a host
    Ansible can reach, and the catalogue with the operator's overlay."""
    from ascend_env.spec.catalogue import load_catalogue, load_overlay

    if inventory is not None and host is not None:
        raise UsageError("name either --inventory or --host, not both")
    if host is not None:  # refused before anything runs, as a target Ansible cannot reach
        parse_host(host).ansible_args(command)
    merged = load_catalogue()
    return merged if catalogue is None else merged.merged(load_overlay(catalogue))


def install(
    profile: ProfileOption = None,
    spec: SpecOption = None,
    arch: ArchOption = None,
    inventory: InventoryOption = None,
    host: HostOption = None,
    limit: LimitOption = None,
    repo: RepoOption = DEFAULT_REPO,
    catalogue: CatalogueOption = None,
    components: Annotated[str | None, typer.Option(
        "--components", help="Comma list: driver,firmware,cann,python,env,user.")] = None,
    check: CheckFlag = False,
    allow_reboot: AllowRebootOption = False,
    force: Annotated[bool, typer.Option("--force", help="Allow downgrades.")] = False,
    serial: Annotated[str | None, typer.Option(
        "--serial", metavar="N|LIST", help="Roll through the fleet in batches: N hosts at a "
        "time, or Ansible's list form such as 1,10%,25% (a canary, then growing batches).")
    ] = None,
    gate: Annotated[int | None, typer.Option(
        "--gate", min=1, max=3, metavar="LEVEL", help="After each batch, the doctor at this "
        "level on its hosts (1: what install controls, 2: and the NPU network, 3: and the "
        "smoke workloads); a failed check stops the roll.")] = None,
    on_fail: Annotated[OnFail, typer.Option(
        "--on-fail", help="When a batch fails: stop the roll, or also put the batch's hosts "
        "back on what they had.")] = OnFail.stop,
    drain_cmd: Annotated[str | None, typer.Option(
        "--drain-cmd", metavar="TEMPLATE", help="Run here for each host of a batch before it "
        "changes, {host} its name (e.g. 'kubectl drain {host} --ignore-daemonsets').")
    ] = None,
    undrain_cmd: Annotated[str | None, typer.Option(
        "--undrain-cmd", metavar="TEMPLATE", help="Run here for each host of a batch once its "
        "gate passed, {host} its name.")] = None,
    drain_timeout: Annotated[float, typer.Option(
        "--drain-timeout", min=1, metavar="SECONDS", help="How long --drain-cmd and "
        "--undrain-cmd may run for one host (a drain waits for the jobs it evicts).")
    ] = 3600.0,
    log_dir: LogDirOption = None,
    post_doctor: PostDoctorOption = True,
    offline: Annotated[bool, typer.Option(
        "--offline", help="Every wheel from the repository; one missing is an error before "
                          "any host is touched.")] = False,
    extra_vars: ExtraVarsOption = None,
    wait_lock: WaitLockOption = 0.0,
    as_json: JsonFlag = False,
) -> None:
    """Install driver, firmware, CANN and frameworks on one host or a fleet, to the spec."""
    from ascend_env.ansible.extra_vars import read_extra_vars
    from ascend_env.cli.install_view import install_progress, render_install
    from ascend_env.install.drain import parse_template
    from ascend_env.install.provision import InstallOptions, InstallSummary
    from ascend_env.install.serial import parse_serial
    from ascend_env.spec.envspec import load_spec
    from ascend_env.spec.plan import resolve
    from ascend_env.workflows.install_checked import install_checked
    from ascend_env.workflows.roll import RollOptions, roll

    merged = _playbook_inputs("install", inventory, host, catalogue)
    how = RollOptions(serial=parse_serial(serial) if serial is not None else None, gate=gate,
                      on_fail=on_fail.value,
                      drain=parse_template("--drain-cmd", drain_cmd, drain_timeout),
                      undrain=parse_template("--undrain-cmd", undrain_cmd, drain_timeout))
    loaded = load_spec(profile=profile, path=spec, arch=arch_value(arch))
    resolved = resolve(loaded, merged)
    options = InstallOptions(
        # Absolute: Ansible's copy looks for a relative src in the roles' folders, not here.
        repo=repo.absolute(), inventory=inventory, host=host, limit=limit,
        components=[c.strip() for c in components.split(",") if c.strip()]
        if components else None,
        check=check, allow_reboot=allow_reboot, force=force,
        serial=how.serial.single if how.serial and not how.controlled else None,
        log_dir=log_dir, offline=offline, extra_vars=read_extra_vars(extra_vars or []),
        lock_wait=wait_lock)
    with install_progress(enabled=not as_json and sys.stderr.isatty()) as on_event:
        summary: InstallSummary
        if how.controlled:
            summary = roll(loaded, resolved, options, how, merged, check_after=post_doctor,
                           on_event=on_event)
        else:
            summary = install_checked(loaded, resolved, options, check_after=post_doctor,
                                      on_event=on_event)
    render_install(summary, as_json=as_json)
    raise typer.Exit(summary.exit_code())


def rollback(
    inventory: InventoryOption = None,
    host: HostOption = None,
    limit: LimitOption = None,
    repo: RepoOption = DEFAULT_REPO,
    catalogue: CatalogueOption = None,
    check: CheckFlag = False,
    allow_reboot: AllowRebootOption = False,
    log_dir: LogDirOption = None,
    post_doctor: PostDoctorOption = True,
    extra_vars: ExtraVarsOption = None,
    wait_lock: WaitLockOption = 0.0,
    as_json: JsonFlag = False,
) -> None:
    """Put hosts back on the state they had before their last change, in the vendor's order."""
    from ascend_env.ansible.extra_vars import read_extra_vars
    from ascend_env.cli.install_view import install_progress, render_install
    from ascend_env.install.provision import InstallOptions
    from ascend_env.workflows.roll import rollback as roll_back

    merged = _playbook_inputs("rollback", inventory, host, catalogue)
    options = InstallOptions(
        repo=repo.absolute(), inventory=inventory, host=host, limit=limit, check=check,
        allow_reboot=allow_reboot, log_dir=log_dir,
        extra_vars=read_extra_vars(extra_vars or []), lock_wait=wait_lock)
    with install_progress(enabled=not as_json and sys.stderr.isatty()) as on_event:
        summary = roll_back(options, merged, check_after=post_doctor, on_event=on_event)
    render_install(summary, as_json=as_json)
    raise typer.Exit(summary.exit_code())
