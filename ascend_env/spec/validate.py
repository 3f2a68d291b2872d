"""`spec validate`: every problem in a spec file, shape and pairings, in one result."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from ascend_env.core.errors import Problem, SpecError
from ascend_env.spec.compat import check_spec
from ascend_env.spec.envspec import build_spec, read_document

VALIDATION_SCHEMA = "ascend-env/validation/v1"


class ValidationResult(BaseModel):
    """The outcome of validating one spec file."""

    schema_: str = Field(VALIDATION_SCHEMA, alias="schema")
    file: str
    spec: str | None = None
    digest: str | None = None
    valid: bool
    problems: list[Problem]

    model_config = {"populate_by_name": True}


def validate_file(path: Path, *, arch: str | None = None) -> ValidationResult:
    """Validate a spec file; unreadable files raise UsageError (exit 2)."""
    try:
        spec = build_spec(read_document(path), str(path), arch=arch)
    except SpecError as error:
        return ValidationResult(file=str(path), valid=False, problems=error.problems)
    problems = check_spec(spec)
    valid = not any(problem.severity == "error" for problem in problems)
    return ValidationResult(file=str(path), spec=spec.name, digest=spec.digest(), valid=valid,
                            problems=problems)
