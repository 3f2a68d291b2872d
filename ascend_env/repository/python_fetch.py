"""`fetch`'s Python half: the framework venv's wheels, downloaded for the right target and
recorded with their digests.

Split from fetch.py (the vendor files) so that each stays one subject: here, which wheels the
repository holds of the venv's closure, `pip download` for the spec's Python and the platform
tags of the real wheels (spec/wheels.py), and repo.json's `wheels` section
(repository/wheel_digests.py).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from ascend_env.repository import wheel_digests
from ascend_env.repository.wheelhouse import (
    WHEELS_DIR,
    DownloadError,
    Target,
    python_stack,
    requirements_for,
    scan,
)
from ascend_env.repository.wheelhouse import download as download_wheels
from ascend_env.spec.envspec import EnvSpec


class PythonWheels(BaseModel):
    """How much of the framework venv's dependency closure the repository holds."""

    requirements: list[str]
    wheels: list[str] = Field(description="the repository's wheels that make up the closure")
    missing: list[str] = Field(description="requirements no wheel in the repository satisfies")
    complete: bool
    message: str = Field("", description="pip's error, or the command that fills the gap")


def python_wheels(dest: Path, spec: EnvSpec, *, download: bool = False,
                  index_url: str | None = None, mirror: str | None = None
                  ) -> tuple[PythonWheels | None, bool]:
    """The repository's share of the framework venv's closure (with `download`, first filled
    with `pip download`), and whether every wheel was recorded cleanly. Every wheel of the
    repository not yet in repo.json is recorded there with its sha256: from now on install
    ships it only while it still has that digest. None without frameworks."""
    error = ""
    requirements = requirements_for(spec)
    if not requirements:
        return None, True
    target = Target.of(spec, mirror=mirror)
    if download:
        try:
            download_wheels(requirements, target, dest, index_url=index_url)
        except DownloadError as exc:
            error = str(exc)
    notes = wheel_digests.record(dest, [w.path for w in scan([dest / WHEELS_DIR])])
    try:
        stack = python_stack(spec, dest, mirror=mirror)
    except wheel_digests.WheelDigestError as exc:
        notes.append(str(exc))
        stack = python_stack(spec, dest, mirror=mirror, verify=False)
    if stack is None:
        return None, True
    message = "\n".join([*([error] if error else []), *notes]) or (
        "" if stack.offline else stack.hint)
    return PythonWheels(requirements=stack.requirements,
                        wheels=[str(w.relative_to(dest)) for w in stack.wheels],
                        missing=[str(m) for m in stack.missing],
                        complete=stack.offline and not notes, message=message), not notes
