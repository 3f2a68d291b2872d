"""The `ascend-env` command line: the root app, its command groups, errors as exit codes.

Start-up stays light: the command modules import only typer and the shared options at module
level and each command imports what it needs, so `ascend-env --version` never loads pydantic
models, ansible, pytest or torch.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated, NoReturn

import typer

from ascend_env import __version__
from ascend_env.cli import (
    cluster_commands,
    doctor_commands,
    explain_commands,
    image_commands,
    install_commands,
    perf_commands,
    smoke_commands,
    spec_commands,
)
from ascend_env.cli.renamed import modernize
from ascend_env.core.children import supervision
from ascend_env.core.errors import AscendEnvError

app = typer.Typer(no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
                  help="Provision and validate Huawei Ascend NPU environments.")
app.add_typer(spec_commands.profiles_app, name="profiles")
app.add_typer(spec_commands.spec_app, name="spec")
app.command("matrix")(spec_commands.matrix)
app.command("plan")(spec_commands.plan)
app.command("fetch")(install_commands.fetch)
app.command("install")(install_commands.install)
app.command("rollback")(install_commands.rollback)
app.command("smoke")(smoke_commands.smoke)
app.command("perf")(perf_commands.perf)
app.command("doctor")(doctor_commands.doctor_command)
app.command("collect")(doctor_commands.collect_command)
app.command("explain")(explain_commands.explain)
app.command("ranktable")(cluster_commands.ranktable)
app.add_typer(image_commands.image_app, name="image")


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"ascend-env {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", callback=_version_callback,
                                          is_eager=True, help="Show the version.")] = False,
) -> None:
    """Provision and validate Huawei Ascend NPU environments."""


def _fail(error: AscendEnvError) -> NoReturn:
    typer.echo(f"ascend-env: error: {error}", err=True)
    sys.exit(error.exit_code)


def main() -> None:
    """The command line: user errors become messages and exit codes; a stop signal stops
    every process the command started and ends it with 128 + the signal's number."""
    argv, warnings = modernize(sys.argv[1:])
    for warning in warnings:
        typer.echo(warning, err=True)
    with supervision():
        try:
            app(args=argv, prog_name="ascend-env")
        except AscendEnvError as error:
            _fail(error)


def run() -> None:
    """Console-script entry point: main(), then stdout flushed while a closed pipe can be met."""
    try:
        main()
    finally:
        _flush_stdout()


def _flush_stdout() -> None:
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader left (`| head`): stdout goes to /dev/null so that the interpreter's own
        # flush at exit neither prints a traceback nor turns the command's exit code into 120.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout closed or not a real file: nothing left to deliver
        pass
