"""Facts about an image (from image_probe.py) and the doctor context of image scope.

An image has no driver and no NPU, so the host checks of CANN skip there; the checks of
category `image` (checks/test_image.py) read these facts instead and run only in image scope,
that is when `ascend-env image build|validate` runs the suite with an ImageContext.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ascend_env.doctor.suite import DoctorContext

IMAGE_CAPTURE_SCHEMA = "ascend-env/image-capture/v1"
# Variables whose value is a list of directories: compared entry by entry.
PATH_LISTS = ("LD_LIBRARY_PATH", "PYTHONPATH", "PATH", "CMAKE_PREFIX_PATH")
# Sonames the host driver provides at run time (driver/lib64, lib64/common, lib64/driver;
# https://github.com/Ascend/mind-cluster/blob/master/docs/en/faultdiag/user_guide/03_collecting_logs.md):
# an image is right to lack them.
DRIVER_SONAMES = ("libascend_hal.so", "libdcmi.so", "libdrvdsmi_host.so", "libc_sec.so",
                  "libmmpa.so")


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore")


class SetEnvReference(_Model):
    scripts: list[str] = Field(default_factory=list)
    exported: dict[str, str] = Field(default_factory=dict)
    error: str | None = None


class WalkFacts(_Model):
    installers: list[str] = Field(default_factory=list)
    driver: list[str] = Field(default_factory=list)
    files: int = 0
    truncated: bool = False


class ImportResult(_Model):
    rc: int
    out: str = ""
    err: str = ""


class FrameworkLoad(_Model):
    python: str | None = None
    available: bool = False
    imports: dict[str, ImportResult] = Field(default_factory=dict)
    packages: dict[str, list[str] | None] = Field(default_factory=dict)
    missing_libraries: dict[str, list[str]] = Field(default_factory=dict)


class ImageFacts(_Model):
    """What image_probe.py found inside one image."""

    install_path: str = "/usr/local/Ascend"
    env: dict[str, str] = Field(default_factory=dict)
    set_env: SetEnvReference = Field(default_factory=SetEnvReference)
    realpaths: dict[str, str] = Field(default_factory=dict)
    walk: WalkFacts = Field(default_factory=WalkFacts)
    frameworks: FrameworkLoad = Field(default_factory=FrameworkLoad)
    stored_spec: dict[str, Any] | None = None

    def entries(self, value: str) -> list[str]:
        """Directories of a path list, links resolved as the image resolves them."""
        return [self.realpaths.get(part, posixpath.normpath(part))
                for part in value.split(":") if part.startswith("/")]

    def env_differences(self) -> list[str]:
        """Every way the image's ENV falls short of what set_env.sh exports."""
        problems = []
        for name, wanted in sorted(self.set_env.exported.items()):
            have = self.env.get(name)
            if name in PATH_LISTS:
                missing = [e for e in self.entries(wanted) if e not in self.entries(have or "")]
                if missing:
                    problems.append(f"{name} lacks {', '.join(missing)}")
            elif have is None and wanted != "":
                problems.append(f"{name} is not set (set_env.sh: {wanted})")
            elif have is not None and self._resolved(have) != self._resolved(wanted):
                problems.append(f"{name}={have} (set_env.sh: {wanted})")
        return problems

    def _resolved(self, value: str) -> str:
        return self.realpaths.get(value, value) if value.startswith("/") else value


@dataclass
class ImageScope:
    """What the image checks read besides the host facts."""

    image: str
    facts: ImageFacts
    wanted_frameworks: dict[str, str] = field(default_factory=dict)


@dataclass
class ImageContext(DoctorContext):
    """The doctor's context when the target is an image, not a host."""

    scope: ImageScope | None = None


def image_facts(document: dict[str, Any]) -> ImageFacts:
    """Parse image_probe.py's output."""
    return ImageFacts.model_validate(document)
