"""The doctor and collect commands: check hosts, or capture them for a later `doctor --from`.

Each command imports what it runs inside itself, so `--help`, `--version` and the
other commands load none of it (benchmarks/startup.py measures what that saves).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import typer

from ascend_env.cli.install_commands import WaitLockOption
from ascend_env.cli.options import (
    CheckFlag,
    HostOption,
    InventoryOption,
    JsonFlag,
    LimitOption,
    ProfileOption,
    SpecOption,
    SshConfigOption,
)
from ascend_env.core.errors import UsageError
from ascend_env.core.host_target import parse_host

PythonOption = Annotated[str | None, typer.Option(
    "--python", help="Framework interpreter on the target (default: the spec's venv, python3).")]
RunUserOption = Annotated[list[str] | None, typer.Option(
    "--run-user", help="An account that runs jobs (checked for the HwHiAiUser group).")]


# useradd's rule (upper case allowed, as HwHiAiUser has it): the names go to the probe as argv.
_USER = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,31}", re.ASCII)


def check_names(python: str | None, run_users: list[str] | None) -> None:
    """--python and --run-user as what they are: an interpreter path or command name, and
    account names; a blank or a control character is a usage error, not a check that fails."""
    if python is not None and (not python.strip()
                               or any(ord(c) < 32 or ord(c) == 127 for c in python)):
        raise UsageError(f"--python {python!r}: give an interpreter path or command name")
    for user in run_users or ():
        if _USER.fullmatch(user) is None:
            raise UsageError(f"--run-user {user!r}: not an account name (letters, digits, "
                             "_ . -, not starting with a digit or -, at most 32)")


def doctor_command(
    profile: ProfileOption = None,
    spec: SpecOption = None,
    inventory: InventoryOption = None,
    limit: LimitOption = None,
    host: HostOption = None,
    ssh_config: SshConfigOption = None,
    level: Annotated[int, typer.Option("--level", min=1, max=3,
                                       help="1 static checks; 2 and 3 add smoke workloads.")
                     ] = 1,
    only: Annotated[list[str] | None, typer.Option(
        "--only", help="A check id, a category or a prefix (repeatable).")] = None,
    list_checks: Annotated[bool, typer.Option("--list", help="List the checks and exit.")
                           ] = False,
    from_files: Annotated[list[Path] | None, typer.Option(
        "--from", help="Evaluate a saved capture (from `collect`) instead of a live host.")
    ] = None,
    fix: Annotated[bool, typer.Option("--fix", help="Apply the fixes of failing checks.")
                   ] = False,
    dry_run: CheckFlag = False,
    python: PythonOption = None,
    run_user: RunUserOption = None,
    junit: Annotated[Path | None, typer.Option("--junit", help="Also write JUnit XML here.")
                     ] = None,
    prometheus: Annotated[Path | None, typer.Option(
        "--prometheus", help="Also write a node_exporter textfile here.")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Details of every check.")
                       ] = False,
    log_dir: Annotated[Path | None, typer.Option("--log-dir", help="Where fix logs go.")
                       ] = None,
    ranktable: Annotated[Path | None, typer.Option(
        "--ranktable", help="A rank table (hccl.json) to check against the hosts.")] = None,
    wait_lock: WaitLockOption = 0.0,
    as_json: JsonFlag = False,
) -> None:
    """Check a host or a fleet: what is wrong, why, the fix (exit 0 ok, 1 not, 2 unreachable)."""
    from ascend_env.doctor.run import DoctorOptions, doctor

    if list_checks:
        from ascend_env.cli.doctor_view import render_check_list
        from ascend_env.doctor.suite import list_checks as checks_of

        render_check_list(checks_of(level=level, only=tuple(only or ())), as_json=as_json)
        return
    if sum(x is not None for x in (inventory, host)) + bool(from_files) > 1:
        raise UsageError("name one of --inventory, --host or --from")
    if dry_run and not fix:
        raise UsageError("--check goes with --fix")
    if fix and from_files:
        raise UsageError("--fix needs live hosts, not --from captures")
    if fix and host is not None:  # the fixes run through Ansible: refused before any probe
        parse_host(host).ansible_args("doctor --fix")
    if wait_lock and not fix:
        raise UsageError("--wait-lock goes with --fix (only a run that changes hosts locks them)")
    check_names(python, run_user)
    if ranktable is not None:
        from ascend_env.cluster.ranktable import load_ranktable

        load_ranktable(ranktable)  # a table that is not one: said before any host is probed
    loaded = None
    if profile is not None or spec is not None:
        from ascend_env.spec.envspec import load_spec

        loaded = load_spec(profile=profile, path=spec)
    options = DoctorOptions(spec=loaded, inventory=inventory, limit=limit, target=host,
                            ssh_config=ssh_config, from_files=list(from_files or []),
                            level=level, only=tuple(only or ()), python=python,
                            run_users=tuple(run_user or ()), ranktable=ranktable)
    if fix:
        from ascend_env.ansible.stopped import RunStopped
        from ascend_env.doctor.fix import doctor_fix

        try:
            document = doctor_fix(options, dry_run=dry_run, log_dir=log_dir,
                                  lock_wait=wait_lock)
        except RunStopped as stopped:
            from ascend_env.cli.install_view import render_interrupted

            render_interrupted(stopped.account, as_json=as_json)
            raise typer.Exit(stopped.exit_code) from None
    else:
        document = doctor(options)
    # Only now: the view loads the report and rich, which the doctor loads while its probes
    # run; imported earlier, they would hold the probes' start back.
    from ascend_env.cli.doctor_view import render_doctor

    render_doctor(document, as_json=as_json, junit=junit, prometheus=prometheus,
                  verbose=verbose)
    raise typer.Exit(document.exit_code())


def collect_command(
    output: Annotated[Path, typer.Option("--output", "-o", help="Capture file to write "
                                         "(.gz compresses).")],
    inventory: InventoryOption = None,
    limit: LimitOption = None,
    host: HostOption = None,
    ssh_config: SshConfigOption = None,
    profile: ProfileOption = None,
    spec: SpecOption = None,
    python: PythonOption = None,
    run_user: RunUserOption = None,
    redact: Annotated[bool, typer.Option(
        "--redact", help="Replace host names, addresses and serial numbers.")] = False,
    as_json: JsonFlag = False,
) -> None:
    """Capture hosts to a file, for `doctor --from` anywhere (exit 2 if a host was unreachable)."""
    from ascend_env.doctor.run import DoctorOptions, collect

    if inventory is not None and host is not None:
        raise UsageError("name either --inventory or --host, not both")
    check_names(python, run_user)
    from ascend_env.core.outputs import output_target

    output_target(output, what="--output")  # before any host is probed
    loaded = None
    if profile is not None or spec is not None:
        from ascend_env.spec.envspec import load_spec

        loaded = load_spec(profile=profile, path=spec)
    result = collect(DoctorOptions(spec=loaded, inventory=inventory, limit=limit, target=host,
                                   ssh_config=ssh_config, python=python,
                                   run_users=tuple(run_user or ())), output, redact=redact)
    from ascend_env.cli.doctor_view import render_collect  # after the probes, as in doctor

    render_collect(result, as_json=as_json)
    raise typer.Exit(result.exit_code())
