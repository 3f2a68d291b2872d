"""`ascend-env explain`: known Ascend error signatures in log text, what they mean, their
causes and fix; with a host, the checks that say which cause holds there.

Each command imports what it runs inside itself, so `--help`, `--version` and the
other commands load none of it (benchmarks/startup.py measures what that saves).
"""

from __future__ import annotations

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
    if host is not None and inventory is not None:
        raise UsageError("name either --host or --inventory, not both")
    if (profile is not None or spec is not None) and host is None and inventory is None:
        raise UsageError("--profile/--spec set what the confirming checks expect: they go "
                         "with --host or --inventory")
    inputs = read_inputs(list(files or []))
    scan = default_matcher().scan(inputs.texts())
    explanation = Explanation(inputs=inputs, scan=scan)
    if (host is not None or inventory is not None) and scan.hits:
        from ascend_env.doctor.confirm import run_checks
        from ascend_env.doctor.run import DoctorOptions
        from ascend_env.explain.confirm import wanted_checks

        loaded = None
        if profile is not None or spec is not None:
            from ascend_env.spec.envspec import load_spec

            loaded = load_spec(profile=profile, path=spec)
        checks = wanted_checks([c for hit in scan.hits for c in hit.signature.causes])
        if checks:
            options = DoctorOptions(spec=loaded, inventory=inventory, limit=limit,
                                    target=host, ssh_config=ssh_config)
            explanation.hosts = run_checks(options, checks)
    from ascend_env.cli.explain_view import render_explanation

    render_explanation(explanation, as_json=as_json, host=host,
                       host_asked=host is not None or inventory is not None)
    raise typer.Exit(explanation.exit_code())
