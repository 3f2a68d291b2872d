"""The errors a user can cause; the CLI turns each into a message and an exit code."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

# DESIGN.md exit codes: 1 = the thing checked is not right, 2 = could not run.
EXIT_NOT_RIGHT = 1
EXIT_CANNOT_RUN = 2


# A dataclass, not a pydantic model: this module is imported at start-up by the CLI, and
# defining a model there would load pydantic's whole machinery for `--version`.
@dataclass
class Problem:
    """One thing wrong (or doubtful) in a spec, located by its key path."""

    path: str  # dotted key path, e.g. frameworks.torch.torch_npu
    message: str
    value: Any = None
    severity: Literal["error", "warning"] = "error"
    row: str | None = None  # the matrix row or rule the value breaks
    alternatives: list[str] = field(default_factory=list)  # values that would fit

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
