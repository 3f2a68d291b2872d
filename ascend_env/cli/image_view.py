"""Terminal and JSON renderings of image builds, validations and run arguments."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from rich.markup import escape

from ascend_env.cli.terminal import console, print_json
from ascend_env.doctor.report import render_terminal
from ascend_env.explain.inline import explain_text, explained_lines

if TYPE_CHECKING:
    from ascend_env.image.build import ImageResult
    from ascend_env.image.builders import BuilderError
    from ascend_env.image.runargs import RunArgs


def render_image(result: ImageResult, *, as_json: bool) -> None:
    """An image build or validation: the report, then what was tagged (or why not)."""
    if as_json:
        print_json(result.to_json())
        return
    render_terminal(result.report, console)
    for warning in result.warnings:
        console.print(f"[yellow]note[/yellow] {escape(warning)}")
    if result.cache is not None and result.build_seconds is not None:
        stages = ", ".join(f"{stage} {cached}/{steps}"
                           for stage, (steps, cached) in result.cache.by_stage.items())
        # The storage driver tells why a rebuild was fast or slow (vfs copies whole layers).
        storage = f" on {result.storage.driver} storage" if result.storage else ""
        console.print(f"built with {result.builder}{storage} in {result.build_seconds:.1f} s; "
                      f"layers from cache: {stages}")
    if result.validated and result.tag:
        console.print(f"[green]validated[/green] {result.tag} ({result.image_id})  "
                      f"report in /etc/ascend-env/validation.json, "
                      f"{result.validation_digest}")
    elif result.validated:
        console.print(f"[green]valid[/green] {result.image}")
    elif result.action == "build":
        console.print(f"[red]not validated[/red]: no tag was given; the image is "
                      f"{result.image_id} for inspection (`buildah from {result.image_id}`)")
    else:
        console.print(f"[red]not valid[/red] {result.image}")


BUILD_FAILURE_SCHEMA = "ascend-env/image-build-failure/v1"


def render_build_failure(error: BuilderError, *, as_json: bool) -> None:
    """A build the builder could not finish: its output's end, and the known Ascend errors
    in it explained (the knowledge base of `ascend-env explain`)."""

    found = explain_text(str(error))
    if as_json:
        print_json({"schema": BUILD_FAILURE_SCHEMA, "error": str(error), "explained": found})
        return
    # On stderr, where the CLI's other errors go ("ascend-env: error: ..."), explanations after.
    print(f"ascend-env: error: {error}", file=sys.stderr)
    for line in explained_lines(found):
        print(line, file=sys.stderr)


def render_run_args(result: RunArgs, *, as_json: bool, image: str | None = None) -> None:
    """Run arguments: JSON, a whole command line, or one argument per line to paste."""
    if as_json:
        print_json(result.model_dump(mode="json", by_alias=True))
        return
    if image is not None:
        print(result.command_line(image))
    else:
        print(" \\\n".join(result.paste_lines()))
    for note in result.notes:
        print(f"# {note}", file=sys.stderr)
