"""The image commands: build an image from a spec, validate any image, print run arguments.

Each command imports what it runs inside itself, so `--help`, `--version` and the
other commands load none of it (benchmarks/startup.py measures what that saves).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
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

image_app = typer.Typer(no_args_is_help=True, help="Validated container images.")


class ImageFramework(str, Enum):
    """Which of the spec's frameworks go into an image."""

    torch = "torch"
    mindspore = "mindspore"
    none = "none"


class BuilderOption(str, Enum):
    """Container builders."""

    auto = "auto"
    docker = "docker"
    podman = "podman"
    buildah = "buildah"


class RuntimeOption(str, Enum):
    """How the container gets its NPUs."""

    docker = "docker"
    podman = "podman"
    ascend_docker_runtime = "ascend-docker-runtime"


class SelinuxOption(str, Enum):
    """Relabel bind mounts (:z) for SELinux."""

    auto = "auto"
    on = "on"
    off = "off"


@image_app.command("build")
def image_build(
    profile: ProfileOption = None,
    spec: SpecOption = None,
    arch: ArchOption = None,
    framework: Annotated[ImageFramework | None, typer.Option(
        "--framework", help="Only this framework of the spec (default: all it names).")
    ] = None,
    base: Annotated[str | None, typer.Option(
        "--base", help="Base image (default: the spec's OS, e.g. ubuntu:22.04).")] = None,
    tag: Annotated[str | None, typer.Option(
        "--tag", help="Tag given on success (default ascend-env/<spec>:<cann>-<chip>-...).")
    ] = None,
    builder: Annotated[BuilderOption, typer.Option("--builder", help="Container builder.")
                       ] = BuilderOption.auto,
    repo: Annotated[Path, typer.Option("--repo", help="Repository made by `fetch`.")
                    ] = Path("ascend-repo"),
    catalogue: Annotated[Path | None, typer.Option(
        "--catalogue", help="Catalogue overlay used for fetch.")] = None,
    gid: Annotated[int | None, typer.Option(
        "--gid", min=0, max=2**31 - 2,
        help="gid of the image's HwHiAiUser (default: this host's, else 1000).")
    ] = None,
    offline: Annotated[bool, typer.Option(
        "--offline", help="pip uses only the repository's wheels (no index).")] = False,
    context: Annotated[Path | None, typer.Option(
        "--context", help="Write the build context here and keep it.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Build an image from a spec, validate it inside, tag it only if it passed."""
    from ascend_env.cli.image_view import render_build_failure, render_image
    from ascend_env.image.build import BuildRequest, build_image
    from ascend_env.image.builders import BuilderError, detect
    from ascend_env.spec.catalogue import load_catalogue, load_overlay
    from ascend_env.spec.envspec import load_spec

    if context is not None:
        from ascend_env.core.outputs import output_folder

        output_folder(context, what="--context")  # before the spec, builder or repository
    merged = load_catalogue()
    if catalogue is not None:
        merged = merged.merged(load_overlay(catalogue))
    loaded = load_spec(profile=profile, path=spec, arch=arch_value(arch))
    chosen = detect(builder.value)
    request = BuildRequest(spec=loaded, repo=repo, catalogue=merged,
                           framework=framework.value if framework else None, base=base,
                           tag=tag, gid=gid, offline=offline, context=context,
                           on_line=_build_line(as_json))
    try:
        result = build_image(chosen, request)
    except BuilderError as error:  # the build's output explained in place
        render_build_failure(error, as_json=as_json)
        raise typer.Exit(error.exit_code) from error
    render_image(result, as_json=as_json)
    raise typer.Exit(result.exit_code())


def _build_line(as_json: bool) -> Callable[[str], None]:
    """Builder output goes to stderr (stdout stays the result, JSON or text)."""
    if as_json or not sys.stderr.isatty():
        return lambda line: None
    return lambda line: typer.echo(line, err=True)


@image_app.command("validate")
def image_validate(
    image: Annotated[str, typer.Argument(help="Image reference or id (ours or not).")],
    profile: ProfileOption = None,
    spec: SpecOption = None,
    on_device: Annotated[bool, typer.Option(
        "--on-device", help="Also run the level-2 smoke inside, with the NPUs (NPU hosts).")
    ] = False,
    devices: Annotated[str, typer.Option(
        "--device", help="With --on-device: NPU numbers (0,1) or all.")] = "0",
    runtime: Annotated[RuntimeOption, typer.Option(
        "--runtime", help="With --on-device: how the container gets its NPUs.")
    ] = RuntimeOption.docker,
    builder: Annotated[BuilderOption, typer.Option("--builder", help="Container tool.")
                       ] = BuilderOption.auto,
    as_json: JsonFlag = False,
) -> None:
    """Re-run the image-scope validation on any image (the spec stored in ours, or given)."""
    from ascend_env.cli.image_view import render_image
    from ascend_env.image.build import validate_image
    from ascend_env.image.builders import detect

    loaded = None
    if profile is not None or spec is not None:
        from ascend_env.spec.envspec import load_spec

        loaded = load_spec(profile=profile, path=spec)
    chosen = detect(builder.value)
    result = validate_image(chosen, image, loaded)
    if on_device:
        from ascend_env.image.device import smoke_on_device

        result = smoke_on_device(result, chosen, image, devices=devices,
                                 runtime=runtime.value, spec=loaded)
    render_image(result, as_json=as_json)
    raise typer.Exit(result.exit_code())


@image_app.command("run-args")
def image_run_args(
    devices: Annotated[str, typer.Option(
        "--device", help="NPU (davinci) numbers, e.g. 0,1 or 0-3, or all.")] = "all",
    profile: ProfileOption = None,
    spec: SpecOption = None,
    runtime: Annotated[RuntimeOption, typer.Option(
        "--runtime", help="docker, podman, or the Ascend Docker Runtime.")
    ] = RuntimeOption.docker,
    selinux: Annotated[SelinuxOption, typer.Option(
        "--selinux", help="Relabel mounts with :z (auto: when SELinux is enforcing).")
    ] = SelinuxOption.auto,
    shm_size: Annotated[str | None, typer.Option(
        "--shm-size", help="Give /dev/shm this size instead of --ipc=host.")] = None,
    image: Annotated[str | None, typer.Option(
        "--image", help="Print a whole `run` line for this image.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Print the exact arguments that give a container its NPUs and the host's driver."""
    from ascend_env.cli.image_view import render_run_args
    from ascend_env.image.runargs import RunArgsRequest, run_args

    loaded = None
    if profile is not None or spec is not None:
        from ascend_env.spec.envspec import load_spec

        loaded = load_spec(profile=profile, path=spec)
    result = run_args(RunArgsRequest(devices=devices, runtime=runtime.value,
                                     selinux=selinux.value, spec=loaded, shm_size=shm_size))
    render_run_args(result, as_json=as_json, image=image)
