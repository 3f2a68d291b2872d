"""`ascend-env image build|validate`: render, build, validate inside the image, then tag.

An image gets its tag only after validation passed: the capture (probe.py and
image_probe.py, each run as its plain source by `python3 -c`, side by side inside one
throw-away container of the image, without devices) is
evaluated by the image-scope checks, and the report is stored in the image at
/etc/ascend-env/validation.json with its digest as a label. A failed validation leaves the
image untagged (reachable only by id, for inspection) and fails the command.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from ascend_env.core.errors import EXIT_CANNOT_RUN, EXIT_NOT_RIGHT, AscendEnvError
from ascend_env.core.outputs import staged_folder
from ascend_env.core.resources import remote_source
from ascend_env.doctor.report import Report, SpecRef
from ascend_env.doctor.run import now_iso
from ascend_env.doctor.suite import Target, run_checks
from ascend_env.facts.assemble import facts_from_capture
from ascend_env.facts.capture import CaptureError, parse_capture
from ascend_env.image.builders import Builder, BuildOutcome
from ascend_env.image.context import (
    DEFAULT_GID,
    FrameworkChoice,
    RenderOptions,
    default_base,
    default_tag,
    prepare_context,
    select_frameworks,
)
from ascend_env.image.inspection import ImageContext, ImageFacts, ImageScope, image_facts
from ascend_env.image.runargs import HostView
from ascend_env.spec.catalogue import Catalogue
from ascend_env.spec.envspec import EnvSpec
from ascend_env.spec.plan import resolve
from ascend_env.targets.collect import ProbeOptions, remote_command

IMAGE_SCHEMA = "ascend-env/image/v1"
STORE = "/etc/ascend-env"
# The image-scope subset of the suite: checks/test_image.py plus the spec's framework pins.
IMAGE_CHECKS = ("image", "frameworks.versions")
DEFAULT_INSTALL_PATH = "/usr/local/Ascend"


class ImageValidationError(AscendEnvError):
    """The image could not be examined at all (no python3 in it, the probe crashed)."""

    exit_code = EXIT_CANNOT_RUN


class CacheUse(BaseModel):
    """How much of a build came from the builder's layer cache, per stage."""

    steps: int
    cached: int
    by_stage: dict[str, list[int]] = Field(description="stage -> [steps, cached]")
    rebuilt: list[str] = Field(default_factory=list,
                               description="'stage: instruction' of every step not from cache")


class StorageUse(BaseModel):
    """buildah's storage driver for this build, where the choice came from, and why."""

    driver: str
    mount_program: str | None = None
    source: Literal["STORAGE_DRIVER", "storage.conf", "detected"]
    reason: str


def storage_use(builder: Builder) -> StorageUse | None:
    """What the JSON says about the builder's storage (None: docker's or podman's own)."""
    storage = builder.storage
    if storage is None:
        return None
    return StorageUse(driver=storage.driver, mount_program=storage.mount_program,
                      source=storage.source, reason=storage.reason)


def storage_warnings(builder: Builder) -> list[str]:
    """A note when detection fell back to vfs: every rebuild then copies whole layers."""
    storage = builder.storage
    if storage is None or storage.driver != "vfs" or storage.source != "detected":
        return []
    return [f"buildah uses vfs storage, which copies every layer in full, so a rebuild costs "
            f"nearly as much as a full build; {storage.reason}"]


class ImageResult(BaseModel):
    """What `image build` or `image validate` did."""

    schema_: str = Field(IMAGE_SCHEMA, alias="schema")
    action: Literal["build", "validate"]
    image: str = Field(description="the image examined: id or reference")
    image_id: str | None = None
    tag: str | None = Field(None, description="the validated tag; None when validation failed")
    validated: bool
    builder: str
    storage: StorageUse | None = Field(None, description="buildah's storage; None for docker "
                                       "and podman (their own)")
    spec: SpecRef | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    validation_digest: str | None = None
    build_seconds: float | None = None
    cache: CacheUse | None = None
    context: str | None = None
    warnings: list[str] = Field(default_factory=list)
    report: Report

    model_config = {"populate_by_name": True}

    def exit_code(self) -> int:
        if not self.report.reachable:
            return EXIT_CANNOT_RUN
        return 0 if self.validated else EXIT_NOT_RIGHT

    def to_json(self) -> dict[str, Any]:
        document = self.model_dump(mode="json", by_alias=True)
        document["report"] = self.report.to_json()
        return document


@dataclass
class BuildRequest:
    """What `image build` was asked to do."""

    spec: EnvSpec
    repo: Path
    catalogue: Catalogue | None = None
    framework: FrameworkChoice | None = None
    base: str | None = None
    tag: str | None = None
    gid: int | None = None
    offline: bool = False
    context: Path | None = None  # keep the rendered context here (else a temporary folder)
    on_line: Callable[[str], None] = field(default=lambda line: None)


def image_probe_command(args: list[str]) -> list[str]:
    """`python3 -c SOURCE ARGS`: image_probe.py's own text runs, readable in ps and audit logs.

    Nothing is copied into the image and nothing is encoded: what runs is the source file.
    """
    return ["python3", "-c", remote_source("image_probe"), *args]


def _json_output(what: str, rc: int, out: str, err: str) -> dict[str, Any]:
    if rc != 0:
        hint = " (the image needs python3)" if rc == 127 or "not found" in err else ""
        raise ImageValidationError(f"{what} failed in the image, exit {rc}{hint}: "
                                   f"{err.strip()[-800:]}")
    try:
        document = json.loads(out)
    except ValueError as exc:
        raise ImageValidationError(f"{what} printed no JSON: {out.strip()[-300:]!r}") from exc
    if not isinstance(document, dict):
        raise ImageValidationError(f"{what} printed {type(document).__name__}, not an object")
    return document


@dataclass
class Examined:
    """An image after validation: report, facts and what to store in it."""

    report: Report
    facts: ImageFacts
    spec: EnvSpec | None
    store: dict[str, bytes]
    digest: str


def _probe_image(builder: Builder, image: str, spec: EnvSpec | None
                 ) -> tuple[ImageFacts, EnvSpec | None, Any]:
    install_path = spec.install.path if spec else DEFAULT_INSTALL_PATH
    venv = spec.python.venv if spec else None
    python = f"{spec.python.venv.rstrip('/')}/bin/python" if spec and spec.framework_pins() \
        else "python3"
    image_args = ["--install-path", install_path, "--python", python]
    host_probe = ["sh", "-c", remote_command(ProbeOptions(install_path=install_path,
                                                          venv=venv))]
    image_run, host_run = builder.run(image, [image_probe_command(image_args), host_probe])
    document = _json_output("image_probe.py", image_run.rc, image_run.out, image_run.err)
    found = image_facts(document)
    if spec is None and found.stored_spec is not None:
        # An image built by ascend-env carries its spec: validate against it.
        return _probe_image(builder, image, EnvSpec.model_validate(found.stored_spec))
    capture = _json_output("probe.py", host_run.rc, host_run.out, host_run.err)
    return found, spec, capture


def examine(builder: Builder, image: str, spec: EnvSpec | None, name: str) -> Examined:
    """Capture inside the image, run the image-scope checks, build the report."""
    started = now_iso()
    found, spec, document = _probe_image(builder, image, spec)
    try:
        capture = parse_capture(document, where=f"probe in {name}")
    except CaptureError as exc:
        raise ImageValidationError(str(exc)) from exc
    facts = facts_from_capture(capture)
    target = Target(name=name, facts=facts, source="image")
    wanted = dict(spec.framework_pins()) if spec else {}
    context = ImageContext(targets=[target], spec=spec, level=1, only=IMAGE_CHECKS,
                           scope=ImageScope(image=name, facts=found, wanted_frameworks=wanted))
    plugin = run_checks(context)
    report = Report(host=name, source="image", level=1, started=started,
                    spec=SpecRef(name=spec.name, digest=spec.digest()) if spec else None,
                    captured_at=capture.captured_at or None,
                    checks=plugin.results[name]).summarize()
    validation = json.dumps(report.to_json(), indent=2, sort_keys=True).encode()
    digest = "sha256:" + hashlib.sha256(validation).hexdigest()
    store = {f"{STORE}/validation.json": validation,
             f"{STORE}/expect.json": json.dumps(_expectations(found, facts, spec, report),
                                                indent=2, sort_keys=True).encode()}
    if spec is not None:
        store[f"{STORE}/spec.json"] = json.dumps(spec.model_dump(mode="json"), indent=2,
                                                 sort_keys=True).encode()
    return Examined(report=report, facts=found, spec=spec, store=store, digest=digest)


def _expectations(found: ImageFacts, facts: Any, spec: EnvSpec | None,
                  report: Report) -> dict[str, Any]:
    """What the HEALTHCHECK (ascend_env/remote/healthcheck.py) compares a running container with."""
    paths = list(found.set_env.scripts)
    if facts.cann is not None:
        paths.append(facts.cann.home)
    for lib in facts.libraries.values():
        if lib.resolvable and lib.ld_library_path:
            paths.append(lib.ld_library_path[0])
    versions = {}
    if spec is not None:
        versions = {name: getattr(facts.frameworks, name) or version
                    for name, version in spec.framework_pins()}
    passed = report.summary.get("pass", 0)
    return {"schema": "ascend-env/image-expect/v1", "env": found.env,
            "paths": sorted(set(paths)), "distributions": versions,
            "python": found.frameworks.python if found.frameworks.available else None,
            "summary": f"{passed} image checks passed at validation"}


def validate_image(builder: Builder, image: str, spec: EnvSpec | None = None
                   ) -> ImageResult:
    """`image validate IMAGE`: the image-scope checks on any image, ours or not."""
    examined = examine(builder, image, spec, image)
    spec = examined.spec
    return ImageResult(action="validate", image=image, validated=not examined.report.failed,
                       builder=builder.name, storage=storage_use(builder),
                       labels=builder.labels(image),
                       spec=examined.report.spec, validation_digest=examined.digest,
                       report=examined.report)


def _cache_use(outcome: BuildOutcome) -> CacheUse:
    by_stage: dict[str, list[int]] = {}
    for step in outcome.steps:
        counts = by_stage.setdefault(step.stage, [0, 0])
        counts[0] += 1
        counts[1] += int(step.cached)
    rebuilt = [f"{s.stage}: {s.instruction[:100]}" for s in outcome.steps if not s.cached]
    return CacheUse(steps=len(outcome.steps), cached=len(outcome.cached()), by_stage=by_stage,
                    rebuilt=rebuilt)


def build_image(builder: Builder, request: BuildRequest) -> ImageResult:
    """Render, build, validate; tag only a validated image."""
    spec = select_frameworks(request.spec, request.framework)
    plan = resolve(spec, request.catalogue)
    base = request.base or default_base(spec)
    tag = request.tag or default_tag(spec)
    options = RenderOptions(base=base, gid=request.gid if request.gid is not None else
                            host_gid(spec.install.user), offline=request.offline, tag=tag)
    with tempfile.TemporaryDirectory(prefix="ascend-env-context-") as tmp:
        if request.context is not None:
            # Rendered beside the folder and renamed into it whole: a render that fails
            # (an installer missing from the repository) leaves no half context behind.
            with staged_folder(request.context, what="--context") as staging:
                staged = prepare_context(staging, spec, plan, request.repo, options)
            final = Path(os.path.realpath(request.context))
            context = replace(staged, path=final,
                              containerfile=final / staged.containerfile.name)
        else:
            context = prepare_context(Path(tmp), spec, plan, request.repo, options)
        outcome = builder.build(context.path, {"ASCEND_GID": str(options.gid)},
                                request.on_line)
    examined = examine(builder, outcome.image_id, spec, tag)
    validated = not examined.report.failed
    labels = dict(context.labels)
    image_id: str = outcome.image_id
    final_tag = None
    if validated:
        labels |= {"io.ascend-env.validated": "true",
                   "io.ascend-env.validation.digest": examined.digest,
                   "io.ascend-env.validation.summary": ", ".join(
                       f"{n} {s}" for s, n in examined.report.summary.items() if n),
                   "org.opencontainers.image.created":
                       datetime.now(timezone.utc).replace(microsecond=0).isoformat()}
        image_id = builder.commit(outcome.image_id, examined.store, labels, tag)
        final_tag = tag
    return ImageResult(action="build", image=final_tag or outcome.image_id, image_id=image_id,
                       tag=final_tag, validated=validated, builder=builder.name,
                       storage=storage_use(builder), spec=examined.report.spec, labels=labels,
                       validation_digest=examined.digest if validated else None,
                       build_seconds=round(outcome.seconds, 2), cache=_cache_use(outcome),
                       context=str(request.context) if request.context else None,
                       warnings=[*context.warnings, *storage_warnings(builder)],
                       report=examined.report)


def host_gid(group: str) -> int:
    """The host's gid of the driver group (the device nodes' group), else the default."""
    gid = HostView().group_gid(group)
    return gid if gid is not None else DEFAULT_GID
