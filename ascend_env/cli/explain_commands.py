"""`ascend-env explain`: known Ascend error signatures in log text, what they mean, their
causes and fix; with a host, the checks that say which cause holds there.

Each command imports what it runs inside itself, so `--help`, `--version` and the
other commands load none of it (benchmarks/startup.py measures what that saves).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ascend_env.cli.options import (
    HostOption,
    InventoryOption,
    JsonFlag,
    LimitOption,
    ProfileOption,
    SpecOption,
    SshConfigOption,
)
from ascend_env.core.errors import UsageError

FilesArgument = Annotated[list[str] | None, typer.Argument(
    help="Log files or folders (CANN's plog tree, e.g. ~/ascend/log/debug/plog/); "
         "`-` or nothing: standard input.", show_default=False)]


def explain(
    files: FilesArgument = None,
    host: HostOption = None,
    inventory: InventoryOption = None,
    from_files: Annotated[list[Path] | None, typer.Option(
        "--from", help="Confirm the causes against saved captures (from `collect`) instead "
                       "of a live host.")] = None,
    limit: LimitOption = None,
    ssh_config: SshConfigOption = None,
    profile: ProfileOption = None,
    spec: SpecOption = None,
    as_json: JsonFlag = False,
    list_entries: Annotated[bool, typer.Option(
        "--list", help="List the knowledge base's entries by family, with counts.")] = False,
) -> None:
    """Explain Ascend errors in logs (exit 0 all explained, 1 some not, 2 unreadable input)."""
    from ascend_env.explain.match import default_matcher
    from ascend_env.explain.plog import read_inputs
    from ascend_env.explain.report import Explanation

    if list_entries:
        from ascend_env.cli.explain_view import render_list
        from ascend_env.explain.signatures import load_signatures

        if files:
            raise UsageError("--list takes no log: it lists the knowledge base")
        render_list(load_signatures(), as_json=as_json)
        return
    named = [name for name, given in (("--host", host), ("--inventory", inventory),
                                      ("--from", from_files)) if given]
    if len(named) > 1:
        raise UsageError(f"name one of {', '.join(named)}, not several")
    if (profile is not None or spec is not None) and not named:
        raise UsageError("--profile/--spec set what the confirming checks expect: they go "
                         "with --host, --inventory or --from")
    inputs = read_inputs(list(files or []))
    scan = default_matcher().scan(inputs.texts())
    explanation = Explanation(inputs=inputs, scan=scan)
    if named and scan.hits:
        from ascend_env.cli.explain_host import confirm_on_hosts
        from ascend_env.doctor.run import DoctorOptions

        loaded = None
        if profile is not None or spec is not None:
            from ascend_env.spec.envspec import load_spec

            loaded = load_spec(profile=profile, path=spec)
        options = DoctorOptions(spec=loaded, inventory=inventory, limit=limit, target=host,
                                ssh_config=ssh_config, from_files=list(from_files or []))
        explanation.hosts = confirm_on_hosts(options, scan.hits)
    from ascend_env.cli.explain_view import render_explanation

    render_explanation(explanation, as_json=as_json, host=host, host_asked=bool(named))
    raise typer.Exit(explanation.exit_code())
