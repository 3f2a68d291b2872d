"""Container builders behind one interface: buildah, podman and docker.

Each builder builds a context into an image id (no tag: only a validated image gets one),
runs commands in a throw-away container of an image, and commits an image with extra files
and labels under a tag. buildah's storage driver is the operator's or the best one that
works here (ascend_env/image/storage.py); BUILDAH_ISOLATION comes from the environment
(chroot where runc is not available, as on CI machines).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from ascend_env.core import children
from ascend_env.core.errors import AscendEnvError, UsageError
from ascend_env.image.storage import Storage, choose_storage

BuilderName = Literal["buildah", "podman", "docker"]
BuilderChoice = Literal["auto", "buildah", "podman", "docker"]
AUTO_ORDER: tuple[BuilderName, ...] = ("docker", "podman", "buildah")
STEP = re.compile(r"^\[(\d+)/(\d+)\] STEP (\d+)/(\d+): (.*)$|^STEP (\d+)/(\d+): (.*)$")
CACHE = re.compile(r"^--> Using cache ([0-9a-f]+)|^ ---> Using cache$|CACHED")
DONE = re.compile(r"^--> [0-9a-f]{6,}$")
FROM_AS = re.compile(r"^FROM\s+\S+(?:\s+AS\s+(\S+))?", re.IGNORECASE)
FRAME = "@@ascend-env-run@@"
FRAMED = re.compile(rf"\n{FRAME} (\d+) (rc|out|err)\n")


class BuilderError(AscendEnvError):
    """A builder failed: the build itself, or running/committing an image."""

    exit_code = 1


class BuilderMissing(UsageError):
    """No usable builder (exit 2: could not run)."""


@dataclass
class Step:
    """One instruction of the build as the builder reported it."""

    stage: str
    instruction: str
    cached: bool = False


@dataclass
class BuildOutcome:
    """What one build produced."""

    image_id: str
    seconds: float
    steps: list[Step] = field(default_factory=list)
    log: str = ""

    def cached(self, stage: str | None = None) -> list[Step]:
        return [s for s in self.steps if s.cached and (stage is None or s.stage == stage)]


@dataclass
class Completed:
    """A command run inside an image."""

    rc: int
    out: str
    err: str


def parse_steps(log: str) -> list[Step]:
    """Steps and their cache use from buildah/podman output (`STEP n/m:`, `Using cache`).

    The builder checks its cache before it runs a step, so a step's `Using cache` line
    comes right after its `STEP` line. The exception is a step that needs another stage
    (`COPY --from=cann`): that stage is built inside the step's window (its STEP lines, their
    cache lines, the output of its RUNs), and the waiting step's own cache line comes after
    all of it. So a cache line that directly follows a STEP line is that step's; any other
    goes to the innermost open step that has neither a cache line nor output of its own
    (a step that printed output ran, so it was not a cache hit). A step closes when the
    next step of its own stage starts, or at its `--> <id>` line (buildah prints those only
    without --iidfile, which our builds pass). Both simpler rules were wrong on real logs:
    the innermost open step, or the innermost one without a cache line, takes the COPY's
    cache line when the nested stage's last step ran (a torch_npu-only rebuild: the
    frameworks RUN), and the COPY then reads as rebuilt.
    """
    steps: list[Step] = []
    stages: dict[str, str] = {}
    open_steps: list[tuple[str, Step]] = []  # (stage number, step), innermost last
    ran: set[int] = set()  # id() of steps that printed output of their own
    latest: Step | None = None  # the step whose STEP line was the last one seen
    just_stepped = False  # the previous line was `latest`'s STEP line
    for raw in log.splitlines():
        line = raw.strip()
        if not line:
            continue
        match = STEP.match(line)
        if match:
            stage_no, total = match.group(1) or "1", match.group(2) or "1"
            instruction = match.group(5) or match.group(8) or ""
            # A stage runs its steps in order: its previous step is done.
            open_steps = [(no, s) for no, s in open_steps if no != stage_no]
            named = FROM_AS.match(instruction)
            if named:
                # The last stage is the image; the others are named by their `AS`.
                unnamed = "final" if stage_no == total else f"stage {stage_no}"
                stages[stage_no] = named.group(1) or unnamed
                latest, just_stepped = None, False
                continue  # FROM is never a cache hit: not counted as a step
            step = Step(stage=stages.get(stage_no, f"stage {stage_no}"),
                        instruction=instruction)
            steps.append(step)
            open_steps.append((stage_no, step))
            latest, just_stepped = step, True
            continue
        if CACHE.search(line):
            if just_stepped and latest is not None and not latest.cached:
                latest.cached = True
            else:
                waiting = [s for _, s in open_steps if not s.cached and id(s) not in ran]
                if waiting:
                    waiting[-1].cached = True
        elif DONE.match(line):
            if open_steps:
                open_steps.pop()
        elif latest is not None:
            ran.add(id(latest))
        just_stepped = False
    return steps


def in_one_shell(commands: list[list[str]]) -> list[str]:
    """One `sh -c` running COMMANDS side by side and printing each one's status and output framed.

    Starting a container process costs more than any of the probes it runs: one start, not
    one per command; and the commands are independent, so none waits for another.
    `split_framed` takes the output apart again.
    """
    lines = ['d=/tmp/ascend-env-run.$$ && mkdir -p "$d" || exit 125']  # no mktemp needed
    for number, command in enumerate(commands):
        lines.append(f'{{ {shlex.join(command)} >"$d/{number}.out" 2>"$d/{number}.err"; '
                     f'echo $? >"$d/{number}.rc"; }} &')
    numbers = " ".join(str(n) for n in range(len(commands)))
    lines.append("wait")
    lines.append(f'for n in {numbers}; do for part in rc out err; do '
                 f'printf "\\n{FRAME} %s %s\\n" "$n" "$part"; cat "$d/$n.$part"; done; done; '
                 'rm -rf "$d"')
    return ["sh", "-c", "\n".join(lines)]


def split_framed(count: int, rc: int, out: str, err: str) -> list[Completed]:
    """Each command's result from `in_one_shell`'s output (the shell's own, where it failed)."""
    pieces = FRAMED.split(out)
    found = {(int(pieces[i]), pieces[i + 1]): pieces[i + 2] for i in range(1, len(pieces), 3)}
    results = []
    for number in range(count):
        status = found.get((number, "rc"), "").strip()
        if not status.isdigit():
            results.append(Completed(rc or 125, out, err))
            continue
        results.append(Completed(int(status), found.get((number, "out"), ""),
                                 found.get((number, "err"), "")))
    return results


class Builder(Protocol):
    """What image build and validate need from a container tool."""

    name: BuilderName
    storage: Storage | None  # None: the tool's daemon keeps its own storage

    def build(self, context: Path, build_args: dict[str, str],
              on_line: Callable[[str], None]) -> BuildOutcome: ...

    def run(self, image: str, commands: list[list[str]]) -> list[Completed]: ...

    def commit(self, image: str, files: dict[str, bytes], labels: dict[str, str],
               tag: str) -> str: ...

    def labels(self, image: str) -> dict[str, str]: ...

    def exists(self, image: str) -> bool: ...


def _run(argv: list[str], *, timeout: float = 600, env: dict[str, str] | None = None
         ) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              check=False, env=env)
    except FileNotFoundError as exc:
        raise BuilderMissing(f"{argv[0]} is not installed") from exc
    except subprocess.TimeoutExpired as exc:
        raise BuilderError(f"`{' '.join(argv[:3])}` did not finish in {timeout:.0f} s") from exc


def _checked(argv: list[str], what: str) -> str:
    done = _run(argv)
    if done.returncode != 0:
        raise BuilderError(f"{what} failed (`{' '.join(argv[:4])} ...`, exit "
                           f"{done.returncode}): {(done.stderr or done.stdout).strip()[-1500:]}")
    return done.stdout.strip()


def _stream(argv: list[str], on_line: Callable[[str], None], env: dict[str, str] | None = None
            ) -> tuple[int, str]:
    """Run a build, handing each output line on (progress) and keeping the whole log."""
    lines: list[str] = []
    try:
        # Tethered: the build (and what it runs) ends with ascend-env, even killed.
        process = children.spawn(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 env=env)
    except FileNotFoundError as exc:
        raise BuilderMissing(f"{argv[0]} is not installed") from exc
    try:
        assert process.stdout is not None
        for raw in process.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            lines.append(line)
            on_line(line)
    except BaseException:
        children.stop(process)
        raise
    finally:
        code = children.wait(process)
        if process.stdout is not None:
            process.stdout.close()
    children.raise_if_interrupted()
    return code, "\n".join(lines)


def _failed_build(name: str, log: str) -> BuilderError:
    tail = "\n".join(log.splitlines()[-40:])
    return BuilderError(f"{name} could not build the image; the end of its output:\n{tail}")


def _label_args(flag: str, labels: dict[str, str]) -> list[str]:
    args: list[str] = []
    for key, value in sorted(labels.items()):
        args += [flag, f"{key}={value}"]
    return args


@contextmanager
def _staged(files: dict[str, bytes]) -> Iterator[Path]:
    """A temporary folder holding the files to add, by their absolute paths inside."""
    with tempfile.TemporaryDirectory(prefix="ascend-env-commit-") as tmp:
        root = Path(tmp)
        for path, data in files.items():
            target = root / path.lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            target.chmod(0o644)
        yield root


class Buildah:
    """buildah: daemonless, rootful or rootless; overlay or vfs storage, chroot isolation."""

    name: BuilderName = "buildah"

    def __init__(self, storage: Storage | None = None) -> None:
        self.storage: Storage | None = storage or choose_storage()
        self.base = ["buildah", *self.storage.args()]

    def build(self, context: Path, build_args: dict[str, str],
              on_line: Callable[[str], None]) -> BuildOutcome:
        with tempfile.TemporaryDirectory(prefix="ascend-env-iid-") as tmp:
            iid = Path(tmp) / "iid"
            argv = [*self.base, "bud", "--layers", "--force-rm", "--format", "docker",
                    "--iidfile", str(iid),
                    "-f", str(context / "Containerfile")]
            for key, value in sorted(build_args.items()):
                argv += ["--build-arg", f"{key}={value}"]
            started = time.monotonic()
            code, log = _stream([*argv, str(context)], on_line)
            if code != 0 or not iid.exists():
                raise _failed_build(self.name, log)
            image = iid.read_text().strip().removeprefix("sha256:")
        return BuildOutcome(image_id=image, seconds=time.monotonic() - started,
                            steps=parse_steps(log), log=log)

    @contextmanager
    def _container(self, image: str) -> Iterator[str]:
        container = _checked([*self.base, "from", "--pull-never", "--quiet", image],
                             f"buildah from {image}")
        try:
            yield container.splitlines()[-1]
        finally:
            _run([*self.base, "rm", container.splitlines()[-1]])

    def run(self, image: str, commands: list[list[str]]) -> list[Completed]:
        with self._container(image) as container:
            done = _run([*self.base, "run", container, "--", *in_one_shell(commands)])
        return split_framed(len(commands), done.returncode, done.stdout, done.stderr)

    def commit(self, image: str, files: dict[str, bytes], labels: dict[str, str],
               tag: str) -> str:
        with self._container(image) as container:
            with _staged(files) as root:
                _checked([*self.base, "copy", "--chown", "0:0", container, f"{root}/.", "/"],
                         "buildah copy")
            _checked([*self.base, "config", *_label_args("--label", labels), container],
                     "buildah config")
            return _checked([*self.base, "commit", "--quiet", "--format", "docker", container,
                             tag], "buildah commit").splitlines()[-1]

    def labels(self, image: str) -> dict[str, str]:
        text = _checked([*self.base, "inspect", "--type", "image", image], "buildah inspect")
        document = json.loads(text)
        config = (document.get("Docker") or {}).get("config") or \
            (document.get("OCIv1") or {}).get("config") or {}
        return dict(config.get("Labels") or {})

    def exists(self, image: str) -> bool:
        return _run([*self.base, "inspect", "--type", "image", image]).returncode == 0


class DockerLike:
    """docker (BuildKit, for RUN --mount) and podman share their command line."""

    def __init__(self, name: BuilderName) -> None:
        self.name = name
        self.tool = [name]
        self.storage: Storage | None = None

    def build(self, context: Path, build_args: dict[str, str],
              on_line: Callable[[str], None]) -> BuildOutcome:
        env = dict(os.environ)
        with tempfile.TemporaryDirectory(prefix="ascend-env-iid-") as tmp:
            iid = Path(tmp) / "iid"
            argv = [*self.tool, "build", "--iidfile", str(iid), "-f",
                    str(context / "Containerfile")]
            if self.name == "docker":
                env["DOCKER_BUILDKIT"] = "1"
                argv += ["--progress", "plain"]
            else:  # HEALTHCHECK survives only in the docker image format
                argv += ["--format", "docker", "--layers"]
            for key, value in sorted(build_args.items()):
                argv += ["--build-arg", f"{key}={value}"]
            started = time.monotonic()
            code, log = _stream([*argv, str(context)], on_line, env=env)
            if code != 0 or not iid.exists():
                raise _failed_build(self.name, log)
            image = iid.read_text().strip().removeprefix("sha256:")
        return BuildOutcome(image_id=image, seconds=time.monotonic() - started,
                            steps=parse_steps(log), log=log)

    def run(self, image: str, commands: list[list[str]]) -> list[Completed]:
        results = []
        for command in commands:
            # No network, no devices, and the entry point bypassed: what the image's ENV
            # gives, not what the entry point's sourcing would add.
            done = _run([*self.tool, "run", "--rm", "--network", "none", "--entrypoint",
                         command[0], image, *command[1:]])
            results.append(Completed(done.returncode, done.stdout, done.stderr))
        return results

    def commit(self, image: str, files: dict[str, bytes], labels: dict[str, str],
               tag: str) -> str:
        container = _checked([*self.tool, "create", image], f"{self.name} create")
        try:
            with _staged(files) as root:
                _checked([*self.tool, "cp", f"{root}/.", f"{container}:/"], f"{self.name} cp")
            changes = []
            for key, value in sorted(labels.items()):
                changes += ["--change", f"LABEL {key}={json.dumps(value)}"]
            return _checked([*self.tool, "commit", *changes, container, tag],
                            f"{self.name} commit").removeprefix("sha256:")
        finally:
            _run([*self.tool, "rm", "-f", container])

    def labels(self, image: str) -> dict[str, str]:
        text = _checked([*self.tool, "image", "inspect", "--format", "{{json .Config.Labels}}",
                         image], f"{self.name} image inspect")
        found = json.loads(text or "null")
        return dict(found or {})

    def exists(self, image: str) -> bool:
        return _run([*self.tool, "image", "inspect", image]).returncode == 0


def _usable(name: BuilderName) -> str | None:
    """None when the tool works here, else why not."""
    if shutil.which(name) is None:
        return f"{name} is not installed"
    probe = {"docker": ["docker", "version", "--format", "{{.Server.Version}}"],
             "podman": ["podman", "info", "--format", "{{.Host.OCIRuntime.Name}}"],
             "buildah": ["buildah", "--version"]}[name]
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{name}: {exc}"
    if done.returncode != 0:
        return f"{name} does not answer: {(done.stderr or done.stdout).strip()[-200:]}"
    return None


def make_builder(name: BuilderName) -> Builder:
    return Buildah() if name == "buildah" else DockerLike(name)


def detect(choice: BuilderChoice = "auto") -> Builder:
    """The named builder, or the first one that works here (docker, podman, buildah)."""
    if choice != "auto":
        why = _usable(choice)
        if why is not None:
            raise BuilderMissing(f"--builder {choice}: {why}")
        return make_builder(choice)
    reasons = []
    for name in AUTO_ORDER:
        why = _usable(name)
        if why is None:
            return make_builder(name)
        reasons.append(why)
    raise BuilderMissing("no container builder works here: " + "; ".join(reasons)
                         + " (install buildah: apt-get install -y buildah)")
