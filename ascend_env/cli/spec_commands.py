"""Commands that read the truth layer: profiles, spec files, the matrix and install plans.

Each command imports what it runs inside itself, so `--help`, `--version` and the
other commands load none of it (benchmarks/startup.py measures what that saves).
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from ascend_env.cli.options import (
    ArchOption,
    JsonFlag,
    ProfileOption,
    SpecOption,
    arch_value,
)

profiles_app = typer.Typer(no_args_is_help=True, help="Shipped environment profiles.")
spec_app = typer.Typer(no_args_is_help=True, help="Environment spec files.")


class FrameworkChoice(str, Enum):
    """Frameworks with matrix tables."""

    torch = "torch"
    mindspore = "mindspore"


@profiles_app.command("list")
def profiles_list(as_json: JsonFlag = False) -> None:
    """List the shipped profiles."""
    from ascend_env.cli.spec_view import render_profiles

    render_profiles(as_json=as_json)


@profiles_app.command("show")
def profiles_show(
    name: Annotated[str, typer.Argument(help="Profile name, e.g. 910b.")],
    as_json: JsonFlag = False,
    as_yaml: Annotated[bool, typer.Option("--yaml", help="The full spec as YAML.")] = False,
    arch: ArchOption = None,
) -> None:
    """Show one profile as a complete spec (defaults filled in)."""
    from ascend_env.cli.spec_view import render_spec
    from ascend_env.spec.envspec import load_spec

    spec = load_spec(profile=name, arch=arch_value(arch))
    render_spec(spec, as_json=as_json, as_yaml=as_yaml)


@spec_app.command("validate")
def spec_validate(
    file: Annotated[Path, typer.Argument(help="Spec YAML file.")],
    as_json: JsonFlag = False,
    arch: ArchOption = None,
) -> None:
    """Check a spec: shape, unknown keys, and every pairing against the matrix."""
    from ascend_env.cli.spec_view import render_validation
    from ascend_env.spec.validate import validate_file

    result = validate_file(file, arch=arch_value(arch))
    render_validation(result, as_json=as_json)
    raise typer.Exit(0 if result.valid else 1)


@spec_app.command("schema")
def spec_schema() -> None:
    """Print the JSON Schema of spec files (for editors)."""
    import json

    from ascend_env.spec.envspec import EnvSpec

    typer.echo(json.dumps(EnvSpec.model_json_schema(), indent=2))


def matrix(
    cann: Annotated[str | None, typer.Option("--cann", help="Only this CANN release.")] = None,
    framework: Annotated[FrameworkChoice | None, typer.Option(
        "--framework", help="Only this framework's table.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Show the compatibility matrix, filtered."""
    from ascend_env.cli.spec_view import render_matrix

    render_matrix(cann=cann, framework=framework.value if framework else None, as_json=as_json)


def plan(profile: ProfileOption = None, spec: SpecOption = None, arch: ArchOption = None,
         as_json: JsonFlag = False) -> None:
    """Show what would be installed, in order, with exact files and digests."""
    from ascend_env.cli.spec_view import render_plan
    from ascend_env.spec.envspec import load_spec
    from ascend_env.spec.plan import resolve

    resolved = resolve(load_spec(profile=profile, path=spec, arch=arch_value(arch)))
    render_plan(resolved, as_json=as_json)
