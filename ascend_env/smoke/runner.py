"""Run a smoke workload on a target, read its evidence, judge it.

The transport is a small seam, `Target`: put a workload script on the target, run an argv
there with a time limit. `LocalTarget` runs this machine's Python with subprocess;
`HostTarget` does the same through a testinfra host (`ssh://`, `ansible://`,
`docker://`, `local://`), which is how the doctor ships the same scripts.
"""

from __future__ import annotations

import base64
import json
import shlex
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import ValidationError

from ascend_env.core import children
from ascend_env.core.errors import EXIT_NOT_RIGHT, AscendEnvError, UsageError
from ascend_env.remote.harness import COMPANIONS, parse_device
from ascend_env.smoke.evidence import SCHEMAS, parse_evidence
from ascend_env.smoke.verdict import Thresholds, Verdict, chip_from_name, judge, thresholds_for
from ascend_env.spec.envspec import load_spec
from ascend_env.spec.matrix import load_chips
from ascend_env.targets.collect import resolve_hosts, transport_reason

Framework = Literal["torch", "mindspore", "hccl"]
SCRIPTS: dict[Framework, str] = {"torch": "torch_workload.py",
                                 "mindspore": "mindspore_workload.py",
                                 "hccl": "hccl_workload.py"}
DEFAULT_DEVICE: dict[Framework, str] = {"torch": "npu:0", "mindspore": "npu:0", "hccl": "all"}
PARITY_FRAMEWORKS: tuple[Framework, ...] = ("torch", "mindspore")
GRACE_S = 30.0  # the workload's own watchdog fires first; this only catches a wedged process


class SmokeError(AscendEnvError):
    """The workload ran away (killed at the limit without evidence): exit 1."""

    exit_code = EXIT_NOT_RIGHT


@dataclass(frozen=True)
class Completed:
    """How one command on the target ended."""

    rc: int
    stdout: str
    stderr: str
    timed_out: bool = False


class Target(Protocol):
    """Where workloads run: copy a script there, run a command there."""

    name: str

    def install(self, script: Path) -> str:
        """Make the script available on the target; its path there."""
        ...

    def run(self, argv: list[str], timeout_s: float) -> Completed:
        """Run argv on the target, killed after timeout_s."""
        ...


class LocalTarget:
    """This machine: scripts run in place from the installed package."""

    name = "local"

    def install(self, script: Path) -> str:
        """The packaged file itself."""
        return str(script)

    def run(self, argv: list[str], timeout_s: float) -> Completed:
        """A tethered subprocess (it ends with ascend-env, even killed), output captured."""
        try:
            process = children.spawn(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except OSError as exc:
            raise UsageError(f"cannot run {argv[0]}: {exc.strerror or exc}") from exc
        expired = threading.Event()

        def expire() -> None:
            expired.set()
            children.stop(process)

        timer = threading.Timer(timeout_s, expire)
        timer.daemon = True
        timer.start()
        try:
            out, err = process.communicate()
        except BaseException:
            children.stop(process)
            raise
        finally:
            timer.cancel()
            code = children.wait(process)
        children.raise_if_interrupted()
        if expired.is_set():
            return Completed(-9, _text(out), _text(err), timed_out=True)
        return Completed(code, _text(out), _text(err))


class HostTarget:
    """A testinfra host: the script is written to a temporary directory over its transport."""

    def __init__(self, spec: str, host: Any = None) -> None:
        """`spec` is a testinfra URL (`ssh://node1`); `host` an already connected Host."""
        if host is None:  # as the doctor reads --host: checked, ssh:// by default

            host = resolve_hosts(target=spec)[0][1]
        self.name = spec
        self._host = host
        self._folder: str | None = None

    def _shell(self, command: str) -> Completed:
        try:
            out = self._host.run(command)
        except Exception as exc:  # testinfra raises backend-specific errors

            raise UsageError(f"cannot reach {self.name}: {transport_reason(exc)}") from exc
        return Completed(int(out.rc), str(out.stdout), str(out.stderr))

    def install(self, script: Path) -> str:
        """mktemp -d on the host, then the script and its companions through base64 (no scp)."""
        if self._folder is None:
            made = self._shell("mktemp -d /tmp/ascend-env-smoke.XXXXXX")
            if made.rc != 0:
                raise UsageError(f"cannot create a directory on {self.name}: {made.stderr}")
            self._folder = made.stdout.strip()
        # The workload imports the harness and the other modules that sit beside it.
        for part in (*(script.with_name(name) for name in COMPANIONS), script):
            path = f"{self._folder}/{part.name}"
            payload = base64.b64encode(part.read_bytes()).decode("ascii")
            written = self._shell(f"printf %s {payload} | base64 -d > {shlex.quote(path)}")
            if written.rc != 0:
                raise UsageError(f"cannot write {path} on {self.name}: {written.stderr}")
        return path

    def run(self, argv: list[str], timeout_s: float) -> Completed:
        """coreutils timeout bounds the command on the host itself."""
        limit = f"timeout -k 10 {int(timeout_s) + 1}"
        done = self._shell(f"{limit} {shlex.join(argv)}")
        return Completed(done.rc, done.stdout, done.stderr, timed_out=done.rc in (124, 137))


@dataclass(frozen=True)
class SmokeRequest:
    """One smoke run, fully resolved."""

    framework: Framework
    device: str
    steps: int
    timeout_s: float
    python: str
    chip: str | None = None
    peak_tflops: float | None = None
    min_tflops_fraction: float | None = None
    min_busbw_gbps: float | None = None
    parity: bool = False  # also the per-layer parity model against float64
    extra: tuple[str, ...] = field(default=())  # further workload options, passed verbatim


def workload_path(framework: Framework) -> Path:
    """The workload script shipped inside the package (ascend_env/remote/)."""
    return Path(__file__).resolve().parents[1] / "remote" / SCRIPTS[framework]


def workload_argv(request: SmokeRequest, script: str, thresholds: Thresholds) -> list[str]:
    """The command line of the workload on the target."""
    argv = [request.python, script, "--device", request.device, "--steps", str(request.steps),
            "--timeout", f"{request.timeout_s:g}"]
    if request.chip:
        argv += ["--chip", request.chip]
    if request.framework == "hccl":
        if thresholds.busbw_floor_gbps is not None:
            argv += ["--busbw-floor", f"{thresholds.busbw_floor_gbps:g}"]
    elif "fp16" in thresholds.peak_tflops:
        argv += ["--peak-tflops", f"{thresholds.peak_tflops['fp16']:g}"]
    if request.parity:
        argv.append("--parity")
    return argv + list(request.extra)


def last_evidence(stdout: str) -> dict[str, Any] | None:
    """The last line of stdout that is a smoke evidence document."""
    for raw in reversed(stdout.splitlines()):
        line = raw.strip()
        if not line.startswith("{"):
            continue
        try:
            document = json.loads(line)
        except ValueError:
            continue
        if isinstance(document, dict) and document.get("schema") in SCHEMAS:
            return document
    return None


def run_smoke(request: SmokeRequest, target: Target | None = None) -> Verdict:
    """Run the workload, validate its evidence, judge it."""
    target = target or LocalTarget()
    thresholds = _thresholds(request, request.chip)
    script = target.install(workload_path(request.framework))
    argv = workload_argv(request, script, thresholds)
    done = target.run(argv, request.timeout_s + GRACE_S)
    document = last_evidence(done.stdout)
    if document is None:
        tail = (done.stderr or done.stdout).strip()[-1500:]
        if done.timed_out:
            raise SmokeError(f"the {request.framework} workload on {target.name} passed its "
                             f"{request.timeout_s:g} s limit and was killed without evidence"
                             f"\n{tail}")
        raise UsageError(f"the {request.framework} workload could not run on {target.name} "
                         f"with {request.python} (exit {done.rc}):\n{tail}")
    try:
        evidence = parse_evidence(document)
    except ValidationError as exc:
        raise UsageError(f"the {request.framework} workload's evidence does not fit "
                         f"{document.get('schema')}: {exc}") from exc
    if request.chip is None:
        names = [run.device_name for run in getattr(evidence, "runs", [])]
        detected = next((c for c in map(chip_from_name, names) if c), None)
        if detected:
            thresholds = _thresholds(request, detected)
    return judge(evidence, thresholds, document)


def _thresholds(request: SmokeRequest, chip: str | None) -> Thresholds:
    return thresholds_for(chip, min_tflops_fraction=request.min_tflops_fraction,
                          min_busbw_gbps=request.min_busbw_gbps,
                          peak_tflops=request.peak_tflops)


def request_from_options(*, framework: Framework, device: str | None, steps: int | None,
                         timeout_s: float | None, python: str | None, chip: str | None,
                         peak_tflops: float | None, host: str | None, profile: str | None,
                         spec: Path | None, parity: bool = False) -> SmokeRequest:
    """The CLI's options, with defaults from the spec's `smoke` section and hardware."""
    min_fraction = min_busbw = None
    if profile is not None or spec is not None:
        loaded = load_spec(profile=profile, path=spec)
        chip = chip or loaded.hardware.chip
        steps = steps or loaded.smoke.steps
        timeout_s = timeout_s or float(loaded.smoke.timeout_s)
        min_fraction = loaded.smoke.min_tflops_fraction
        min_busbw = loaded.smoke.min_busbw_gbps
    if chip is not None and load_chips().get(chip) is None:
        raise UsageError(f"unknown chip {chip!r}; known: "
                         f"{', '.join(load_chips().chips)}")
    device = device or DEFAULT_DEVICE[framework]
    try:
        _, index = parse_device(device)
    except ValueError as exc:
        raise UsageError(f"--device: {exc}") from exc
    if framework == "hccl" and index is not None:
        raise UsageError(f"--device {device}: an all-reduce spans devices; use all, cuda or "
                         "cpu")
    if parity and framework not in PARITY_FRAMEWORKS:
        raise UsageError(f"--parity: the parity model runs with --framework "
                         f"{' or '.join(PARITY_FRAMEWORKS)} (docs/smoke.md, Parity)")
    return SmokeRequest(framework=framework, device=device,
                        steps=steps or 50, timeout_s=timeout_s or 600.0,
                        python=python or (sys.executable if host is None else "python3"),
                        chip=chip, peak_tflops=peak_tflops, min_tflops_fraction=min_fraction,
                        min_busbw_gbps=min_busbw, parity=parity)


def target_for(host: str | None) -> Target:
    """LocalTarget, or a testinfra host for --host."""
    return LocalTarget() if host is None else HostTarget(host)


def _text(value: str | bytes | None) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value or ""


def run_fleet(request: SmokeRequest, inventory: Path, limit: str | None = None
              ) -> dict[str, Verdict | AscendEnvError]:
    """The same workload on every host of an inventory, in parallel; errors kept per host."""


    hosts = resolve_hosts(inventory=inventory, limit=limit)

    def one(named: tuple[str, Any]) -> Verdict | AscendEnvError:
        name, host = named
        try:
            return run_smoke(request, HostTarget(name, host=host))
        except AscendEnvError as error:
            return error

    with ThreadPoolExecutor(max_workers=max(1, min(8, len(hosts)))) as pool:
        results = list(pool.map(one, hosts))
    return {name: result for (name, _), result in zip(hosts, results, strict=True)}
