"""Render an image's build context from a resolved spec: Containerfile, installers, wheels.

The context is a folder a builder can use as is:
`Containerfile`, `installers/` (the CANN .run files, hard-linked from the verified
repository when possible), `wheels/` (pip's own wheel and the framework wheels) and `files/`
(entry point, health check, profile script). The templates live in the top-level
`containers/` folder (resources.shipped_dir).
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import jinja2

from ascend_env import __version__
from ascend_env.core.errors import UsageError
from ascend_env.core.resources import shipped_dir
from ascend_env.image.env import ATB_CXX_ABI, image_env
from ascend_env.remote import healthcheck
from ascend_env.repository.installers import RepoError, verify_repo
from ascend_env.repository.repo_folder import sha256_of
from ascend_env.repository.wheelhouse import CANN_PYTHON_DEPS, python_stack
from ascend_env.spec.cann_layout import cann_layout
from ascend_env.spec.envspec import EnvSpec
from ascend_env.spec.matrix import load_matrix
from ascend_env.spec.plan import Plan

FrameworkChoice = Literal["torch", "mindspore", "none"]
CANN_COMPONENTS = ("nnae", "nnrt", "toolkit", "ops", "nnal")
FRAMEWORK_COMPONENTS = ("torch", "torch_npu", "mindspore")
# Base images per spec OS family where the registry name is not the family itself.
BASE_NAMES = {"openeuler": "openeuler/openeuler"}
# Where the `pip` stage unpacks pip's wheel; the final stage mounts it from there.
PIP_DIR = "/opt/ascend-env-pip"
# HwHiAiUser's ids in the legacy official images (https://github.com/Ascend/ascend-docker-image).
DEFAULT_GID = 1000
DEFAULT_UID = 1000


class RenderError(UsageError):
    """The build context cannot be made (a file missing from the repository, ...)."""


@dataclass(frozen=True)
class ContextFile:
    """One installer or wheel of the context, with the digest the Containerfile checks."""

    component: str
    file: str
    sha256: str
    source: Path


@dataclass(frozen=True)
class PipLayer:
    """One framework RUN of the final stage: what pip installs there and the wheels it checks."""

    requirements: list[str]
    wheels: list[ContextFile]


def pip_layers(plan: Plan, pins: list[tuple[str, str]], wheels: list[ContextFile]
               ) -> list[PipLayer]:
    """The dependencies first, then one layer per framework in the order the pins name them.

    A layer's cache key is its line, digests included, so a change of one pin (torch_npu's)
    reruns its own layer and the ones after it, not the install of everything below.
    """
    layers = [PipLayer(list(CANN_PYTHON_DEPS),
                       [w for w in wheels if w.component not in FRAMEWORK_COMPONENTS])]
    for name, version in pins:
        layers.append(PipLayer([f"{name}=={_pinned(plan, name, version)}"],
                               [w for w in wheels if w.component == name]))
    return layers


@dataclass
class RenderOptions:
    """Everything besides the spec that shapes the Containerfile."""

    base: str
    gid: int = DEFAULT_GID
    offline: bool = False  # pip gets --no-index: every wheel from the repository
    tag: str = ""


@dataclass
class BuildContext:
    """A rendered context, ready for a builder."""

    path: Path
    containerfile: Path
    labels: dict[str, str]
    installers: list[ContextFile]
    wheels: list[ContextFile]
    warnings: list[str] = field(default_factory=list)


def select_frameworks(spec: EnvSpec, framework: FrameworkChoice | None) -> EnvSpec:
    """The spec with only the chosen framework (None keeps what the spec names)."""
    if framework is None:
        return spec
    frameworks = spec.frameworks
    if framework == "torch" and frameworks.torch is None:
        raise UsageError(f"--framework torch: spec {spec.name} names no torch "
                         "(frameworks.torch)")
    if framework == "mindspore" and frameworks.mindspore is None:
        raise UsageError(f"--framework mindspore: spec {spec.name} names no MindSpore "
                         "(frameworks.mindspore)")
    chosen = frameworks.model_copy(update={
        "torch": frameworks.torch if framework == "torch" else None,
        "mindspore": frameworks.mindspore if framework == "mindspore" else None})
    return spec.model_copy(update={"frameworks": chosen})


def default_base(spec: EnvSpec) -> str:
    """The distribution image of the spec's OS (`ubuntu:22.04`, `openeuler/openeuler:22.03`)."""
    name = BASE_NAMES.get(spec.os.family, spec.os.family)
    return f"{name}:{spec.os.version}"


def _tag_part(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-.")[:128] or "x"


def default_tag(spec: EnvSpec) -> str:
    """`ascend-env/<spec>:<cann>-<chip>-<frameworks>`."""
    pins = dict(spec.framework_pins())
    flavour = [f"torch_npu{pins['torch_npu']}"] if "torch_npu" in pins else []
    flavour += [f"ms{pins['mindspore']}"] if "mindspore" in pins else []
    tag = "-".join([spec.cann.version.raw, spec.hardware.chip, *(flavour or ["base"])])
    repository = re.sub(r"[^a-z0-9._-]+", "-", spec.name.lower()).strip("-.") or "image"
    return f"ascend-env/{repository}:{_tag_part(tag)}"


def labels_for(spec: EnvSpec, base: str, tag: str) -> dict[str, str]:
    """The labels known before validation (the validation digest is added on success)."""
    row = load_matrix().cann_row(spec.cann.version)
    minimum = row.minimum_hdk() if row else None
    pins = spec.framework_pins()
    frameworks = ",".join(f"{name}=={version}" for name, version in pins) or "none"
    return {
        "org.opencontainers.image.title": f"ascend-env {spec.name}",
        "org.opencontainers.image.description":
            f"CANN {spec.cann.version.raw} ({', '.join(spec.cann.packages)}) for "
            f"{spec.hardware.chip} {spec.hardware.arch}, frameworks: {frameworks}; the NPU "
            "driver comes from the host at run time",
        "org.opencontainers.image.version": tag.rpartition(":")[2] if ":" in tag else tag,
        "org.opencontainers.image.base.name": base,
        "io.ascend-env.version": __version__,
        "io.ascend-env.spec.name": spec.name,
        "io.ascend-env.spec.digest": f"sha256:{spec.digest()}",
        "io.ascend-env.chip": spec.hardware.chip,
        "io.ascend-env.arch": spec.hardware.arch,
        "io.ascend-env.cann": spec.cann.version.raw,
        "io.ascend-env.cann.packages": ",".join(spec.cann.packages),
        "io.ascend-env.driver.min": minimum.raw if minimum else "unknown",
        "io.ascend-env.driver.spec": spec.driver.version.raw,
        "io.ascend-env.frameworks": frameworks,
        "io.ascend-env.python": spec.python.version,
    }


def _dq(value: object) -> str:
    """A value inside double quotes of an ENV or LABEL line."""
    text = str(value)
    if "\n" in text:
        raise RenderError(f"a label or environment value holds a line break: {text!r}")
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(shipped_dir("containers"))),
                             undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                             autoescape=False)
    env.filters["dq"] = _dq
    env.filters["sha256"] = lambda text: hashlib.sha256(str(text).encode()).hexdigest()
    return env


def _driver_version(spec: EnvSpec, plan: Plan) -> str:
    driver = next((i for i in plan.items if i.component == "driver"), None)
    return (driver.file_version if driver and driver.file_version
            else load_matrix().hdk().file_version(spec.driver.version))


def render_containerfile(spec: EnvSpec, plan: Plan, *, installers: list[ContextFile],
                         wheels: list[ContextFile], pip_wheel: str | None,
                         options: RenderOptions, files: list[ContextFile] | None = None) -> str:
    """The Containerfile text (pure: no file is read besides the template)."""
    layout = cann_layout(spec)
    pins = spec.framework_pins()
    if pins and pip_wheel is None:
        raise RenderError("the pip stage needs pip's wheel (pip-*.whl) in the "
                          "repository or in /usr/share/python-wheels")
    return _environment().get_template("Containerfile.j2").render(
        tool_version=__version__, spec_name=spec.name, spec_digest=spec.digest(),
        base=options.base, user=spec.install.user, install_path=layout.install_path,
        driver_version=_driver_version(spec, plan), installers=installers,
        set_env=layout.set_env, nnal="nnal" in spec.cann.packages,
        frameworks=bool(pins), wheels=wheels, offline=options.offline,
        venv=spec.python.venv.rstrip("/"), pip_wheel=pip_wheel, pip_dir=PIP_DIR,
        pip_layers=pip_layers(plan, pins, wheels) if pins else [],
        files=files or [], gid=options.gid, uid=DEFAULT_UID,
        image_env=image_env(spec, frameworks=bool(pins)).variables,
        cann_version=spec.cann.version.raw,
        new_layout=layout.new, labels=sorted(labels_for(spec, options.base,
                                                        options.tag).items()))


def render_scripts(spec: EnvSpec) -> dict[str, str]:
    """The entry point and the profile script, for the spec's install path and era."""
    layout = cann_layout(spec)
    scripts = [layout.set_env]
    if "nnal" in spec.cann.packages:
        scripts.append(layout.nnal_set_env)
    env = _environment()
    return {name: env.get_template(f"{name}.j2").render(scripts=scripts, cxx_abi=ATB_CXX_ABI)
            for name in ("entrypoint.sh", "profile.sh")}


def _pinned(plan: Plan, name: str, version: str) -> str:
    item = next((i for i in plan.items if i.component == name), None)
    return item.version if item else version


def _place(source: Path, dest: Path) -> None:
    """Hard-link a repository file into the context (copy across file systems)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, dest)
    except OSError:
        shutil.copy2(source, dest)


def _fetch_line(repo: Path, *extra: str) -> str:
    """The fetch command a message tells the operator to run, quoted to paste."""
    return shlex.join(["ascend-env", "fetch", *extra, "--repo", str(repo)])


def find_pip_wheel(repo: Path) -> Path | None:
    """pip's wheel: the repository's, else the one the system Python ships for venvs."""
    candidates = sorted(repo.glob("pip-*.whl"))
    if not candidates:
        candidates = sorted(Path("/usr/share/python-wheels").glob("pip-*.whl"))
    if not candidates:
        import ensurepip  # noqa: PLC0415  (only when nothing else has one)

        bundled = Path(ensurepip.__file__).parent / "_bundled"
        candidates = sorted(bundled.glob("pip-*.whl"))
    return candidates[-1] if candidates else None


def prepare_context(dest: Path, spec: EnvSpec, plan: Plan, repo: Path,
                    options: RenderOptions) -> BuildContext:
    """Write the whole build context into `dest` (created; must be empty or absent)."""
    if dest.exists() and any(dest.iterdir()):
        raise RenderError(f"the context folder {dest} is not empty")
    if not repo.is_dir():
        raise RenderError(f"no repository at {repo}: run `{_fetch_line(repo)}` "
                          "with the same spec first (or name it with --repo)")
    for sub in ("installers", "wheels", "files"):
        (dest / sub).mkdir(parents=True, exist_ok=True)
    installers = []
    # Each .run is checked against the digest fetch recorded when it unpacked the verified
    # archive (as install does), not hashed as found: a file altered in the repository after
    # fetch is refused here, and the Containerfile checks that same digest inside the build.
    try:
        verified = verify_repo(plan, repo, {"cann"})
    except RepoError as error:
        problems = str(error).split(":\n", 1)[-1]
        raise RenderError(f"the CANN installers are not in the repository {repo} as fetch "
                          f"left them; run `{_fetch_line(repo)}` with the same spec:\n"
                          f"{problems}") from error
    for item in plan.items:
        if item.component not in CANN_COMPONENTS:
            continue
        installer = verified[item.component]
        source = installer.path
        installers.append(ContextFile(item.component, source.name, installer.sha256, source))
        _place(source, dest / "installers" / source.name)
    wheels: list[ContextFile] = []
    warnings: list[str] = []
    pins = spec.framework_pins()
    pip_wheel = None
    if pins:
        # Every wheel of the venv's closure the repository holds (repository/wheelhouse.py),
        # each checked again by its digest inside the build; offline, a gap is an error now
        # rather than pip's failure half-way through the build.
        stack = python_stack(spec, repo)
        assert stack is not None
        if stack.missing:
            listed = "\n  ".join(str(m) for m in stack.missing)
            if options.offline:
                raise RenderError("--offline: the repository lacks wheels the frameworks "
                                  f"need:\n  {listed}\nfill it with "
                                  f"`{_fetch_line(repo, '--python-wheels')}`")
            warnings.append("pip resolves these from its index during the build (not in the "
                            f"repository):\n  {listed}")
        for found in stack.wheels:
            component = next((i.component for i in plan.items
                              if i.component in FRAMEWORK_COMPONENTS and i.file == found.name),
                             "wheel")
            wheels.append(ContextFile(component, found.name, sha256_of(found), found))
            _place(found, dest / "wheels" / found.name)
        pip = find_pip_wheel(repo)
        if pip is not None:
            _place(pip, dest / "wheels" / pip.name)
            pip_wheel = pip.name
    for name, script in render_scripts(spec).items():
        (dest / "files" / name).write_text(script, encoding="utf-8")
    shutil.copy2(Path(healthcheck.__file__), dest / "files" / "healthcheck.py")
    files = [ContextFile("file", path.name, sha256_of(path), path)
             for path in sorted((dest / "files").iterdir())]
    text = render_containerfile(spec, plan, installers=installers, wheels=wheels,
                                pip_wheel=pip_wheel, options=options, files=files)
    containerfile = dest / "Containerfile"
    containerfile.write_text(text, encoding="utf-8")
    return BuildContext(path=dest, containerfile=containerfile,
                        labels=labels_for(spec, options.base, options.tag),
                        installers=installers, wheels=wheels, warnings=warnings)
