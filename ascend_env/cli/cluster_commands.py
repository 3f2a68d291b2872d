"""`ascend-env ranktable`: the rank table (hccl.json) of a fleet, from its live device addresses.

Each command imports what it runs inside itself, so `--help`, `--version` and the
other commands load none of it (benchmarks/startup.py measures what that saves).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from ascend_env.cli.options import InventoryOption, JsonFlag, LimitOption, ProfileOption, SpecOption
from ascend_env.core.errors import UsageError

RANKTABLE_SCHEMA = "ascend-env/ranktable/v1"


def ranktable(
    output: Annotated[Path, typer.Option("--output", "-o", help="Rank table to write.")],
    inventory: InventoryOption = None,
    limit: LimitOption = None,
    from_files: Annotated[list[Path] | None, typer.Option(
        "--from", help="Saved captures (from `collect`) instead of live hosts.")] = None,
    profile: ProfileOption = None,
    spec: SpecOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Write the rank table HCCL and MindSpore read, from the hosts' live device addresses
    (exit 0 written, 1 a host or the plan is not right, 2 could not run)."""
    from ascend_env.cluster.table_of_fleet import table_of_fleet
    from ascend_env.core.outputs import output_target, write_output
    from ascend_env.doctor.run import DoctorOptions

    if (inventory is None) == (not from_files):
        raise UsageError("name one of --inventory or --from")
    output_target(output, what="--output")  # before any host is probed
    loaded = None
    if profile is not None or spec is not None:
        from ascend_env.spec.envspec import load_spec

        loaded = load_spec(profile=profile, path=spec)
    table, notes = table_of_fleet(DoctorOptions(spec=loaded, inventory=inventory, limit=limit,
                                                from_files=list(from_files or [])))
    write_output(output, json.dumps(table, indent=4) + "\n", what="--output")
    ranks = sum(len(server["device"]) for server in table["server_list"])
    if as_json:
        typer.echo(json.dumps({"schema": RANKTABLE_SCHEMA, "output": str(output),
                               "version": table["version"], "servers": len(table["server_list"]),
                               "ranks": ranks,
                               "server_ids": [s["server_id"] for s in table["server_list"]],
                               "notes": notes}, indent=2))
        return
    typer.echo(f"wrote {output}: version {table['version']}, "
               f"{len(table['server_list'])} server(s), {ranks} rank(s)")
    for note in notes:
        typer.echo(f"note: {note}")
