"""`image validate --on-device`: start the image with its NPUs and run the level-2 smoke inside.

For NPU hosts. The container gets exactly the arguments of `image run-args`, stays up with
`sleep`, and the doctor reaches it through testinfra's docker/podman transport, so the smoke
checks (checks/test_smoke.py) run as they do on a host. The image-scope report gets those
checks appended; any failure makes the image not validated on this host.

Not exercised by the test suite: no machine of the project has an NPU.
"""

from __future__ import annotations

import subprocess

from ascend_env.core.errors import AscendEnvError, UsageError
from ascend_env.doctor.report import Report
from ascend_env.doctor.run import DoctorOptions, doctor
from ascend_env.image.build import ImageResult
from ascend_env.image.builders import Builder
from ascend_env.image.runargs import RunArgsRequest, Runtime, run_args
from ascend_env.spec.envspec import EnvSpec

SMOKE_CHECKS = ("smoke",)
START_TIMEOUT_S = 120


def _start(tool: str, args: list[str], image: str) -> str:
    argv = [tool, "run", "-d", "--rm", *args, "--entrypoint", "sleep", image, "infinity"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=START_TIMEOUT_S,
                          check=False)
    if done.returncode != 0:
        raise AscendEnvError(f"could not start {image} with its NPUs: "
                             f"{done.stderr.strip()[-800:]}")
    return done.stdout.strip().splitlines()[-1]


def smoke_on_device(result: ImageResult, builder: Builder, image: str, *, devices: str,
                    runtime: Runtime, spec: EnvSpec | None) -> ImageResult:
    """Run the level-2 smoke checks in a container of the image with its devices."""
    if builder.name == "buildah":
        raise UsageError("--on-device needs docker or podman (buildah runs no device "
                         "containers); pass --builder docker or --builder podman")
    tool = builder.name
    if runtime == "podman" and tool != "podman":
        raise UsageError("--runtime podman goes with --builder podman")
    arguments = run_args(RunArgsRequest(devices=devices, runtime=runtime, spec=spec))
    container = _start(tool, arguments.args, image)
    try:
        options = DoctorOptions(spec=spec, target=f"{tool}://{container}", level=2,
                                only=SMOKE_CHECKS)
        document = doctor(options)
    finally:
        subprocess.run([tool, "rm", "-f", container], capture_output=True, check=False,
                       timeout=START_TIMEOUT_S)
    assert isinstance(document, Report)
    merged = result.report.model_copy(deep=True)
    merged.checks += document.checks
    merged.level = 2
    merged.summarize()
    return result.model_copy(update={"report": merged,
                                     "validated": result.validated and not merged.failed})
