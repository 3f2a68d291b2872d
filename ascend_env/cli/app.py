"""The `ascend-env` command line: parse, call one function, render.

Start-up stays light: only typer is imported here; each command imports what it needs, so
`ascend-env --version` never loads pydantic models, ansible, pytest or torch.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from ascend_env import __version__
from ascend_env.core.errors import AscendEnvError, UsageError

app = typer.Typer(no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
                  help="Provision and validate Huawei Ascend NPU environments.")
profiles_app = typer.Typer(no_args_is_help=True, help="Shipped environment profiles.")
spec_app = typer.Typer(no_args_is_help=True, help="Environment spec files.")
app.add_typer(profiles_app, name="profiles")
app.add_typer(spec_app, name="spec")


class ArchChoice(str, Enum):
    """CPU architectures of Ascend hosts."""

    aarch64 = "aarch64"
    x86_64 = "x86_64"


class FrameworkChoice(str, Enum):
    """Frameworks with matrix tables."""

    torch = "torch"
    mindspore = "mindspore"


JsonFlag = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]
ArchOption = Annotated[ArchChoice | None, typer.Option("--arch", help="Host architecture.")]
ProfileOption = Annotated[str | None, typer.Option("--profile", help="A shipped profile name.")]
SpecOption = Annotated[Path | None, typer.Option("--spec", help="A spec YAML file.")]


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


@profiles_app.command("list")
def profiles_list(as_json: JsonFlag = False) -> None:
    """List the shipped profiles."""
    from ascend_env.cli.render import render_profiles

    render_profiles(as_json=as_json)


@profiles_app.command("show")
def profiles_show(
    name: Annotated[str, typer.Argument(help="Profile name, e.g. 910b.")],
    as_json: JsonFlag = False,
    as_yaml: Annotated[bool, typer.Option("--yaml", help="The full spec as YAML.")] = False,
    arch: ArchOption = None,
) -> None:
    """Show one profile as a complete spec (defaults filled in)."""
    from ascend_env.cli.render import render_spec
    from ascend_env.spec.model import load_spec

    spec = load_spec(profile=name, arch=arch.value if arch else None)
    render_spec(spec, as_json=as_json, as_yaml=as_yaml)


@spec_app.command("validate")
def spec_validate(
    file: Annotated[Path, typer.Argument(help="Spec YAML file.")],
    as_json: JsonFlag = False,
    arch: ArchOption = None,
) -> None:
    """Check a spec: shape, unknown keys, and every pairing against the matrix."""
    from ascend_env.cli.render import render_validation
    from ascend_env.spec.validate import validate_file

    result = validate_file(file, arch=arch.value if arch else None)
    render_validation(result, as_json=as_json)
    raise typer.Exit(0 if result.valid else 1)


@spec_app.command("schema")
def spec_schema() -> None:
    """Print the JSON Schema of spec files (for editors)."""
    import json

    from ascend_env.spec.model import EnvSpec

    typer.echo(json.dumps(EnvSpec.model_json_schema(), indent=2))


@app.command("matrix")
def matrix(
    cann: Annotated[str | None, typer.Option("--cann", help="Only this CANN release.")] = None,
    framework: Annotated[FrameworkChoice | None, typer.Option(
        "--framework", help="Only this framework's table.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Show the compatibility matrix, filtered."""
    from ascend_env.cli.render import render_matrix

    render_matrix(cann=cann, framework=framework.value if framework else None, as_json=as_json)


@app.command("plan")
def plan(profile: ProfileOption = None, spec: SpecOption = None, arch: ArchOption = None,
         as_json: JsonFlag = False) -> None:
    """Show what would be installed, in order, with exact files and digests."""
    from ascend_env.cli.render import render_plan
    from ascend_env.spec.model import load_spec
    from ascend_env.spec.plan import resolve

    resolved = resolve(load_spec(profile=profile, path=spec, arch=arch.value if arch else None))
    render_plan(resolved, as_json=as_json)


@app.command("fetch")
def fetch(
    dest: Annotated[Path, typer.Option("--dest", help="Repository directory to fill.")],
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
    as_json: JsonFlag = False,
) -> None:
    """Download or import every vendor file of a spec into a verified local repository."""
    from ascend_env.cli.render import fetch_progress, render_fetch
    from ascend_env.install.fetch import Source, fetch_python
    from ascend_env.install.fetch import fetch as fetch_files
    from ascend_env.spec.catalogue import load_catalogue, load_overlay
    from ascend_env.spec.model import load_spec
    from ascend_env.spec.plan import resolve

    merged = load_catalogue()
    if catalogue is not None:
        merged = merged.merged(load_overlay(
            catalogue, allow_unverified=frozenset(allow_unverified or [])))
    loaded = load_spec(profile=profile, path=spec, arch=arch.value if arch else None)
    resolved = resolve(loaded, merged)
    with fetch_progress(enabled=not as_json and sys.stderr.isatty()) as progress:
        result = fetch_files(resolved, dest, Source(mirror=mirror, from_dir=from_dir),
                             progress=progress)
    result = fetch_python(result, loaded, download=python_wheels, index_url=index_url)
    render_fetch(result, as_json=as_json)
    raise typer.Exit(0 if result.complete else 1)


@app.command("install")
def install(
    profile: ProfileOption = None,
    spec: SpecOption = None,
    arch: ArchOption = None,
    inventory: Annotated[Path | None, typer.Option(
        "--inventory", "-i", help="Ansible inventory; without one, this machine.")] = None,
    host: Annotated[str | None, typer.Option("--host", help="One host reached over ssh.")
                    ] = None,
    limit: Annotated[str | None, typer.Option("--limit", help="Ansible host pattern.")] = None,
    repo: Annotated[Path, typer.Option("--repo", help="Repository made by `fetch`.")
                    ] = Path("ascend-repo"),
    catalogue: Annotated[Path | None, typer.Option(
        "--catalogue", help="Catalogue overlay used for fetch.")] = None,
    components: Annotated[str | None, typer.Option(
        "--components", help="Comma list: driver,firmware,cann,python,env,user.")] = None,
    check: Annotated[bool, typer.Option("--check", help="Show what would change.")] = False,
    allow_reboot: Annotated[bool, typer.Option(
        "--allow-reboot", help="Reboot hosts after a driver/firmware change.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Allow downgrades.")] = False,
    serial: Annotated[int | None, typer.Option(
        "--serial", min=1, help="Roll through the fleet N hosts at a time.")] = None,
    log_dir: Annotated[Path | None, typer.Option("--log-dir", help="Where run logs go.")
                       ] = None,
    post_doctor: Annotated[bool, typer.Option(
        "--doctor/--no-doctor", help="Run the level-1 doctor on the hosts afterwards.")] = True,
    offline: Annotated[bool, typer.Option(
        "--offline", help="Every wheel from the repository; one missing is an error before "
                          "any host is touched.")] = False,
    as_json: JsonFlag = False,
) -> None:
    """Install driver, firmware, CANN and frameworks on one host or a fleet, to the spec."""
    from ascend_env.cli.render import install_progress, render_install
    from ascend_env.install.provision import InstallOptions
    from ascend_env.install.provision import install as run_install
    from ascend_env.spec.catalogue import load_catalogue, load_overlay
    from ascend_env.spec.model import load_spec
    from ascend_env.spec.plan import resolve

    if inventory is not None and host is not None:
        raise UsageError("name either --inventory or --host, not both")
    merged = load_catalogue()
    if catalogue is not None:
        merged = merged.merged(load_overlay(catalogue))
    loaded = load_spec(profile=profile, path=spec, arch=arch.value if arch else None)
    resolved = resolve(loaded, merged)
    options = InstallOptions(
        repo=repo, inventory=inventory, host=host, limit=limit,
        components=[c.strip() for c in components.split(",") if c.strip()]
        if components else None,
        check=check, allow_reboot=allow_reboot, force=force, serial=serial, log_dir=log_dir,
        doctor=post_doctor, offline=offline)
    with install_progress(enabled=not as_json and sys.stderr.isatty()) as on_event:
        summary = run_install(loaded, resolved, options, on_event=on_event)
    render_install(summary, as_json=as_json)
    raise typer.Exit(0 if summary.succeeded else 1)


class SmokeFramework(str, Enum):
    """Smoke workloads."""

    torch = "torch"
    mindspore = "mindspore"
    hccl = "hccl"


@app.command("smoke")
def smoke(
    framework: Annotated[SmokeFramework, typer.Option(
        "--framework", help="torch, mindspore, or hccl (an all-reduce over every device).")],
    device: Annotated[str | None, typer.Option(
        "--device", help="npu:N, all, cuda:N or cpu; default npu:0 (hccl: all).")] = None,
    steps: Annotated[int | None, typer.Option(
        "--steps", min=2, help="Training steps (hccl: iterations); default spec or 50.")] = None,
    timeout: Annotated[float | None, typer.Option(
        "--timeout", min=1, help="Seconds; default spec smoke.timeout_s or 600.")] = None,
    python: Annotated[str | None, typer.Option(
        "--python", help="The framework's Python; default this one (python3 with --host).")
                      ] = None,
    chip: Annotated[str | None, typer.Option(
        "--chip", help="Chip family for the thresholds; default from the spec or device.")
                    ] = None,
    peak_tflops: Annotated[float | None, typer.Option(
        "--peak-tflops", help="The chip's fp16 peak, where the data has none.")] = None,
    host: Annotated[str | None, typer.Option(
        "--host", help="testinfra host to run on, e.g. ssh://user@node; default here.")
                    ] = None,
    inventory: Annotated[Path | None, typer.Option(
        "--inventory", "-i", help="Run on every host of this Ansible inventory.")] = None,
    limit: Annotated[str | None, typer.Option("--limit", help="Ansible host pattern.")] = None,
    profile: ProfileOption = None,
    spec: SpecOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Prove a device computes: run a workload there and judge its evidence."""
    from ascend_env.smoke.render import render_fleet, render_verdict
    from ascend_env.smoke.runner import request_from_options, run_fleet, run_smoke, target_for

    if inventory is not None and host is not None:
        raise UsageError("name either --inventory or --host, not both")
    request = request_from_options(
        framework=framework.value, device=device, steps=steps, timeout_s=timeout,
        python=python, chip=chip, peak_tflops=peak_tflops,
        host=host or ("inventory" if inventory else None), profile=profile, spec=spec)
    if inventory is not None:
        raise typer.Exit(render_fleet(dict(run_fleet(request, inventory, limit)),
                                      as_json=as_json))
    verdict = run_smoke(request, target_for(host))
    render_verdict(verdict, as_json=as_json)
    raise typer.Exit(verdict.exit_code)


InventoryOption = Annotated[Path | None, typer.Option(
    "--inventory", "-i", help="Ansible inventory; without it and --host, this machine.")]
LimitOption = Annotated[str | None, typer.Option("--limit", help="Ansible host pattern.")]
HostOption = Annotated[str | None, typer.Option(
    "--host", help="One target: ssh://user@node, docker://ctr, local://, or a host name.")]
SshConfigOption = Annotated[Path | None, typer.Option("--ssh-config",
                                                      help="ssh config for --host.")]
PythonOption = Annotated[str | None, typer.Option(
    "--python", help="Framework interpreter on the target (default: the spec's venv, python3).")]
RunUserOption = Annotated[list[str] | None, typer.Option(
    "--run-user", help="An account that runs jobs (checked for the HwHiAiUser group).")]


@app.command("doctor")
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
    dry_run: Annotated[bool, typer.Option("--dry-run", help="With --fix: show, change nothing.")
                       ] = False,
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
    as_json: JsonFlag = False,
) -> None:
    """Check a host or a fleet: what is wrong, why, the fix (exit 0 ok, 1 not, 2 unreachable)."""
    from ascend_env.doctor.run import DoctorOptions, doctor

    if list_checks:
        from ascend_env.cli.render import render_check_list
        from ascend_env.doctor.suite import list_checks as checks_of

        render_check_list(checks_of(level=level, only=tuple(only or ())), as_json=as_json)
        return
    if sum(x is not None for x in (inventory, host)) + bool(from_files) > 1:
        raise UsageError("name one of --inventory, --host or --from")
    if dry_run and not fix:
        raise UsageError("--dry-run goes with --fix")
    if fix and from_files:
        raise UsageError("--fix needs live hosts, not --from captures")
    loaded = None
    if profile is not None or spec is not None:
        from ascend_env.spec.model import load_spec

        loaded = load_spec(profile=profile, path=spec)
    options = DoctorOptions(spec=loaded, inventory=inventory, limit=limit, target=host,
                            ssh_config=ssh_config, from_files=list(from_files or []),
                            level=level, only=tuple(only or ()), python=python,
                            run_users=tuple(run_user or ()))
    if fix:
        from ascend_env.doctor.fix import doctor_fix

        document = doctor_fix(options, dry_run=dry_run, log_dir=log_dir)
    else:
        document = doctor(options)
    # Only now: rich loads while the probes run (report.py), the rest of output.py need not.
    from ascend_env.cli.render import render_doctor

    render_doctor(document, as_json=as_json, junit=junit, prometheus=prometheus,
                  verbose=verbose)
    raise typer.Exit(document.exit_code())


@app.command("collect")
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
    from ascend_env.cli.render import render_collect
    from ascend_env.doctor.run import DoctorOptions, collect

    if inventory is not None and host is not None:
        raise UsageError("name either --inventory or --host, not both")
    loaded = None
    if profile is not None or spec is not None:
        from ascend_env.spec.model import load_spec

        loaded = load_spec(profile=profile, path=spec)
    result = collect(DoctorOptions(spec=loaded, inventory=inventory, limit=limit, target=host,
                                   ssh_config=ssh_config, python=python,
                                   run_users=tuple(run_user or ())), output, redact=redact)
    render_collect(result, as_json=as_json)
    raise typer.Exit(result.exit_code())


def _fail(error: AscendEnvError) -> NoReturn:
    typer.echo(f"ascend-env: error: {error}", err=True)
    sys.exit(error.exit_code)


def main() -> None:
    """The command line: user errors become messages and exit codes."""
    try:
        app()
    except AscendEnvError as error:
        _fail(error)


def run() -> NoReturn:
    """Console-script entry point: main(), then out of the interpreter without tearing it down.

    Freeing what a doctor loads (pytest, pydantic, rich, the suite) took ~70 ms, a sixth of a
    one-host doctor meant as a health check, and the teardown would wait for a probe thread
    still stuck on a host past its timeout. By then every file written is closed (writes are
    atomic renames) and no exit handler of ours is pending; stdout and stderr are flushed here.
    """
    try:
        main()
        code: object = 0
    except SystemExit as done:
        code = done.code
    if code is None:
        code = 0
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a reader gone (| head), a closed file
            stream.flush()
    os._exit(code)


# -- image --------------------------------------------------------------------------------

image_app = typer.Typer(no_args_is_help=True, help="Validated container images.")
app.add_typer(image_app, name="image")


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
        "--gid", help="gid of the image's HwHiAiUser (default: this host's, else 1000).")
    ] = None,
    offline: Annotated[bool, typer.Option(
        "--offline", help="pip uses only the repository's wheels (no index).")] = False,
    context: Annotated[Path | None, typer.Option(
        "--context", help="Write the build context here and keep it.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Build an image from a spec, validate it inside, tag it only if it passed."""
    from ascend_env.cli.render import render_image
    from ascend_env.image.build import BuildRequest, build_image
    from ascend_env.image.builders import detect
    from ascend_env.spec.catalogue import load_catalogue, load_overlay
    from ascend_env.spec.model import load_spec

    merged = load_catalogue()
    if catalogue is not None:
        merged = merged.merged(load_overlay(catalogue))
    loaded = load_spec(profile=profile, path=spec, arch=arch.value if arch else None)
    chosen = detect(builder.value)
    request = BuildRequest(spec=loaded, repo=repo, catalogue=merged,
                           framework=framework.value if framework else None, base=base,
                           tag=tag, gid=gid, offline=offline, context=context,
                           on_line=_build_line(as_json))
    result = build_image(chosen, request)
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
        "--devices", help="With --on-device: NPU numbers (0,1) or all.")] = "0",
    runtime: Annotated[RuntimeOption, typer.Option(
        "--runtime", help="With --on-device: how the container gets its NPUs.")
    ] = RuntimeOption.docker,
    builder: Annotated[BuilderOption, typer.Option("--builder", help="Container tool.")
                       ] = BuilderOption.auto,
    as_json: JsonFlag = False,
) -> None:
    """Re-run the image-scope validation on any image (the spec stored in ours, or given)."""
    from ascend_env.cli.render import render_image
    from ascend_env.image.build import validate_image
    from ascend_env.image.builders import detect

    loaded = None
    if profile is not None or spec is not None:
        from ascend_env.spec.model import load_spec

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
        "--devices", help="NPU (davinci) numbers, e.g. 0,1 or 0-3, or all.")] = "all",
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
    from ascend_env.cli.render import render_run_args
    from ascend_env.image.runargs import RunArgsRequest, run_args

    loaded = None
    if profile is not None or spec is not None:
        from ascend_env.spec.model import load_spec

        loaded = load_spec(profile=profile, path=spec)
    result = run_args(RunArgsRequest(devices=devices, runtime=runtime.value,
                                     selinux=selinux.value, spec=loaded, shm_size=shm_size))
    render_run_args(result, as_json=as_json, image=image)
