"""EnvSpec: the environment a user asks for, as YAML, typed and checked.

Loading is: read -> YAML -> `extends:` profile merge -> pydantic (shape, unknown keys) ->
cross-validation against the matrix (compat.py). Every problem found on the way is collected
with its key path, so one run reports all of them.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from pathlib import Path
from typing import Any, Literal

import yaml
from packaging.version import InvalidVersion, Version
from pydantic import Field, ValidationError, field_validator, model_validator

from ascend_env.core.errors import Problem, SpecError, UsageError
from ascend_env.core.inputs import (
    InputError,
    YamlBoundError,
    load_yaml_bounded,
    read_text,
    yaml_problem,
)
from ascend_env.core.resources import data_names, data_text
from ascend_env.spec.matrix import Arch, ChipName, VendorVersion, load_chips
from ascend_env.spec.network_plan import PlanError, check_fit
from ascend_env.spec.network_spec import Hccl, KeyedValueError, Network
from ascend_env.spec.os_keys import spec_key, unknown_os
from ascend_env.spec.section import Section

CannPackage = Literal["toolkit", "ops", "kernels", "nnal", "nnae", "nnrt"]


_Section = Section


# Characters a path that reaches a host may hold. The paths travel to Ansible as variables and
# to the hosts as argv, but they also end up in files a shell reads (the profile.d script
# sources `<install.path>/set_env.sh`), so anything a shell would expand, split or
# redirect on is refused, as are control characters (a newline would start a new command).
_PATH_CHARS = re.compile(r"[A-Za-z0-9._/+@%=,:-]*")
MAX_HOST_PATH = 1024


def _host_path(value: str) -> str:
    """An absolute path that is safe to hand to a host: no shell metacharacters or control
    characters, no `..` that would lead somewhere else than it reads."""
    if not value.startswith("/"):
        raise ValueError("must be an absolute path (starting with /)")
    if len(value) > MAX_HOST_PATH:
        raise ValueError(f"is longer than {MAX_HOST_PATH} characters")
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise ValueError("holds a control character (a newline or tab, say); a path that "
                         "reaches a host may not")
    bad = sorted({c for c in value if not _PATH_CHARS.fullmatch(c)})
    if bad:
        raise ValueError(f"holds {' '.join(bad)}, which a shell would read as more than a "
                         "path; use letters, digits and . _ - / + @ % = , :")
    if ".." in value.split("/"):
        raise ValueError("holds a '..' component; name the real path")
    return value


def _host_paths(values: list[str]) -> list[str]:
    return [_host_path(value) for value in values]


def _pep440(value: str) -> str:
    try:
        Version(value)
    except InvalidVersion as exc:
        raise ValueError(f"{value!r} is not a Python package version") from exc
    return value


class Hardware(_Section):
    """The NPU hardware of the target hosts."""

    chip: ChipName = Field(description="chip family: a name of chips.yaml (910, 910b, 910_93 "
                           "for A3, 310p) or of a site's matrix overlay")
    devices: int | None = Field(None, ge=1, le=64, strict=True,
                                description="NPU devices per host; default from the chip")
    arch: Arch = Field("aarch64", description="CPU architecture of the hosts")


class OperatingSystem(_Section):
    """The hosts' operating system: with hardware.arch, one OS key of ascend_env/data/os/."""

    family: str = Field("ubuntu", description="distribution, e.g. openeuler, kylin, ubuntu")
    version: str = Field("22.04", description="its version, e.g. 22.03-sp4, v10-sp2, 22.04")


class Driver(_Section):
    """The NPU driver (HDK release)."""

    version: VendorVersion = Field(description="HDK release, e.g. 25.5.0 or 25.0.RC1")


class Firmware(_Section):
    """The NPU firmware; unset means the one shipped in the driver's HDK bundle."""

    version: VendorVersion | None = Field(None, description="firmware version, e.g. 7.7.0.1.231")


class Cann(_Section):
    """The CANN release and which of its packages to install."""

    version: VendorVersion = Field(description="CANN release, e.g. 8.5.0 or 8.0.RC3")
    packages: list[CannPackage] = Field(
        default_factory=lambda: list[CannPackage](["toolkit", "ops"]),
        description="`ops` is the chip's operator package (kernels before 8.5.0)")


class PythonSpec(_Section):
    """The Python that runs the frameworks."""

    version: str = Field("3.11", pattern=r"^3\.\d+$", description="minor version, e.g. 3.11")
    venv: str = Field("/opt/ascend-env/venv", description="virtual environment for frameworks")

    _check = field_validator("venv")(_host_path)


class Torch(_Section):
    """PyTorch and its Ascend extension."""

    version: str = Field(description="torch release, e.g. 2.9.0")
    torch_npu: str = Field(description="torch_npu release, e.g. 2.9.0 or 2.1.0.post17")

    _check = field_validator("version", "torch_npu")(_pep440)


class MindSpore(_Section):
    """MindSpore (the unified Ascend build)."""

    version: str = Field(description="MindSpore release, e.g. 2.7.2")

    _check = field_validator("version")(_pep440)


class Frameworks(_Section):
    """Deep-learning frameworks to install; either, both or none."""

    torch: Torch | None = None
    mindspore: MindSpore | None = None


class Install(_Section):
    """Where and as whom the vendor packages are installed."""

    path: str = Field("/usr/local/Ascend", description="install path (absolute)")
    # A POSIX portable user name (useradd's rule, which allows upper case): at most 32
    # characters, not starting with a dash or a digit, so that no command reads it as an option.
    user: str = Field("HwHiAiUser", pattern=r"^[A-Za-z_][A-Za-z0-9_.-]*$", max_length=32,
                      description="running user of driver and CANN")

    _check = field_validator("path")(_host_path)


class Threads(_Section):
    """CPU thread settings for AI CPU and framework threads."""

    # strict: YAML gives real integers; `true` (which pydantic would take for 1) is a mistake.
    aicpu_per_core: int = Field(2, ge=1, le=8, strict=True,
                                description="AI CPU threads per physical core")
    omp_num_threads: int | None = Field(None, ge=1, le=4096, strict=True,
                                        description="unset: derived from topology")


class SELinux(_Section):
    """SELinux labelling of the Ascend paths."""

    manage: bool = Field(True, description="label the install path when SELinux is enforcing")
    container_paths: list[str] = Field(default_factory=list,
                                       description="extra host paths bind-mounted into containers")

    _check = field_validator("container_paths")(_host_paths)


class Smoke(_Section):
    """Thresholds for the smoke workloads."""

    steps: int = Field(50, ge=5, le=100000, strict=True)
    timeout_s: int = Field(600, ge=10, le=86400, strict=True)
    min_tflops_fraction: float | None = Field(None, gt=0, le=1, allow_inf_nan=False,
                                              description="unset: the chip's default floor")
    min_busbw_gbps: float | None = Field(None, gt=0, allow_inf_nan=False)


class EnvSpec(_Section):
    """A whole Ascend environment: hardware, driver, CANN, frameworks and host settings."""

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    description: str = ""
    hardware: Hardware
    os: OperatingSystem = Field(default_factory=OperatingSystem)
    driver: Driver
    firmware: Firmware = Field(default_factory=Firmware)
    cann: Cann
    python: PythonSpec = Field(default_factory=PythonSpec)
    frameworks: Frameworks = Field(default_factory=Frameworks)
    install: Install = Field(default_factory=Install)
    threads: Threads = Field(default_factory=Threads)
    selinux: SELinux = Field(default_factory=SELinux)
    smoke: Smoke = Field(default_factory=Smoke)
    network: Network | None = None
    hccl: Hccl = Field(default_factory=Hccl)

    @model_validator(mode="after")
    def _os_known(self) -> EnvSpec:
        """os.family/os.version on hardware.arch is an OS key of the data (or a site's)."""
        problem = unknown_os(self.os.family, self.os.version, self.hardware.arch)
        if problem is not None:
            raise KeyedValueError(*problem)
        return self

    def os_key(self) -> str:
        """The spec's OS key, `<os.family>-<os.version>-<hardware.arch>`."""
        return spec_key(self.os.family, self.os.version, self.hardware.arch)

    @model_validator(mode="after")
    def _cluster_fits(self) -> EnvSpec:
        """The `network` plan covers every device of a host (the spec's count, else the
        chip's), and `hccl.exec_timeout` is in the chip's range."""
        chip = load_chips().get(self.hardware.chip)
        devices = self.hardware.devices or (chip.devices.default if chip else None)
        if self.network is not None and devices is not None:
            try:
                check_fit(self.network, devices)
            except PlanError as error:
                raise KeyedValueError(error.key, error.detail) from None
        timeout = self.hccl.exec_timeout
        if timeout is None or chip is None:
            return self
        low, high = chip.hccl.exec_timeout_range
        if not low <= timeout <= high:
            raise KeyedValueError("hccl.exec_timeout", f"out of range for chip "
                                  f"{self.hardware.chip}: {low}..{high} s", timeout)
        return self

    def digest(self) -> str:
        """A stable sha256 of the spec's content (what reports and image labels carry)."""
        canonical = json.dumps(self.model_dump(mode="json"), sort_keys=True,
                               separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()

    def framework_pins(self) -> list[tuple[str, str]]:
        """(distribution, version) of every framework the spec pins."""
        pins: list[tuple[str, str]] = []
        if self.frameworks.torch is not None:
            pins += [("torch", self.frameworks.torch.version),
                     ("torch_npu", self.frameworks.torch.torch_npu)]
        if self.frameworks.mindspore is not None:
            pins.append(("mindspore", self.frameworks.mindspore.version))
        return pins


def profile_names() -> list[str]:
    """Names of the shipped profiles."""
    return [name.removesuffix(".yaml") for name in data_names("profiles")
            if name.endswith(".yaml")]


def profile_document(name: str) -> dict[str, Any]:
    """The raw YAML mapping of a shipped profile."""
    if name not in profile_names():
        raise UsageError(
            f"unknown profile {name!r}; available profiles: {', '.join(profile_names())}")
    document = yaml.safe_load(data_text(f"profiles/{name}.yaml"))
    assert isinstance(document, dict), f"profile {name} is not a mapping"
    return document


def _merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Deep-merge mappings; lists and scalars in `override` replace those in `base`."""
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def read_document(path: Path) -> dict[str, Any]:
    """The YAML mapping in a spec file; unreadable files are usage errors (exit 2), YAML that
    breaks the loader's limits (aliases, nesting, duplicate keys) a SpecError (exit 1)."""
    text = read_text(path, what="spec file")
    try:
        document = load_yaml_bounded(text)
    except YamlBoundError as exc:
        raise InputError(f"cannot read spec file {path}: {yaml_problem(exc)}") from exc
    except yaml.YAMLError as exc:
        raise SpecError(str(path), [Problem(path="", message=f"not valid YAML at "
                                            f"{yaml_problem(exc)}")]) from exc
    if not isinstance(document, dict):
        kind = "empty" if document is None else type(document).__name__
        raise SpecError(str(path), [Problem(
            path="", message=f"a spec must be a YAML mapping of keys, this file is {kind}")])
    return document


def expand(document: dict[str, Any], origin: str) -> dict[str, Any]:
    """Apply `extends: <profile>`: the profile first, the document's keys over it."""
    parent = document.get("extends")
    if parent is None:
        return document
    if not isinstance(parent, str):
        raise SpecError(origin, [Problem(path="extends", value=parent,
                                         message="must be the name of a profile")])
    if parent not in profile_names():
        raise SpecError(origin, [Problem(
            path="extends", value=parent, message="unknown profile",
            alternatives=profile_names())])
    child = {key: value for key, value in document.items() if key != "extends"}
    return _merge(profile_document(parent), child)


def _problems_from(error: ValidationError) -> list[Problem]:
    problems = []
    for item in error.errors():
        path = ".".join(str(part) for part in item["loc"])
        value = item.get("input") if item["type"] != "missing" else None
        keyed = item.get("ctx", {}).get("error")
        if isinstance(keyed, KeyedValueError):
            # A model-wide check that knows its key: point there, not at the whole model.
            path = ".".join(part for part in (path, keyed.key) if part)
            value = keyed.value
        if item["type"] == "extra_forbidden":
            message = "unknown key (a typo? unknown keys are errors, not ignored)"
        elif item["type"] == "missing":
            message = "required key is missing"
        elif item["type"] == "value_error":  # our own validators' words, without pydantic's prefix
            message = str(item.get("ctx", {}).get("error", item["msg"]))
        else:
            message = item["msg"]
        expected = item.get("ctx", {}).get("expected")
        problems.append(Problem(path=path, value=value, message=message,
                                alternatives=[expected] if expected else []))
    return problems


def build_spec(document: dict[str, Any], origin: str, *, arch: str | None = None) -> EnvSpec:
    """Validate a mapping (after `extends`) into an EnvSpec; shape errors only, no matrix."""
    expanded = expand(document, origin)
    if arch is not None:
        expanded = _merge(expanded, {"hardware": {"arch": arch}})
    try:
        return EnvSpec.model_validate(expanded)
    except ValidationError as exc:
        raise SpecError(origin, _problems_from(exc)) from exc


def load_spec(*, profile: str | None = None, path: Path | None = None,
              arch: str | None = None) -> EnvSpec:
    """The spec named on the command line: a shipped profile or a file."""
    if (profile is None) == (path is None):
        raise UsageError("name exactly one of --profile NAME or --spec FILE")
    if profile is not None:
        return build_spec(profile_document(profile), f"profile {profile}", arch=arch)
    assert path is not None
    return build_spec(read_document(path), str(path), arch=arch)
