"""The errors a user can cause; the CLI turns each into a message and an exit code."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

# DESIGN.md exit codes: 1 = the thing checked is not right, 2 = could not run.
EXIT_NOT_RIGHT = 1
EXIT_CANNOT_RUN = 2


class Problem(BaseModel):
    """One thing wrong (or doubtful) in a spec, located by its key path."""

    path: str = Field(description="dotted key path, e.g. frameworks.torch.torch_npu")
    message: str
    value: Any = None
    severity: Literal["error", "warning"] = "error"
    row: str | None = Field(None, description="the matrix row or rule the value breaks")
    alternatives: list[str] = Field(default_factory=list, description="values that would fit")

    def render(self) -> str:
        """One line (two with alternatives) for a terminal."""
        where = self.path or "(file)"
        shown = f" {self.value!r}:" if self.value is not None and self.value != "" else ""
        text = f"{where}:{shown} {self.message}"
        if self.row:
            text += f" [{self.row}]"
        if self.alternatives:
            text += f"\n    compatible: {', '.join(self.alternatives)}"
        return text


class AscendEnvError(Exception):
    """Base of the errors that end a command with a message instead of a traceback."""

    exit_code = EXIT_CANNOT_RUN


class UsageError(AscendEnvError):
    """Bad usage or an input that cannot be read: exit 2."""


class SpecError(AscendEnvError):
    """A spec with one or more errors: exit 1, every problem listed."""

    exit_code = EXIT_NOT_RIGHT

    def __init__(self, origin: str, problems: list[Problem]) -> None:
        self.origin = origin
        self.problems = problems
        errors = [p for p in problems if p.severity == "error"]
        super().__init__(f"{origin}: {len(errors)} problem(s)\n" +
                         "\n".join(f"  {p.render()}" for p in problems))
