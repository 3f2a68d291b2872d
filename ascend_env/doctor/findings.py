"""What a check says when it does not pass: observed, expected, why it matters, the fix.

Checks in checks/ use these helpers; the doctor's pytest plugin turns them into report rows.
Two spellings, same result:

    assert ok, failure(message=..., observed=..., expected=..., why=..., fix=..., manual=...)
    fail(message=..., ...)            # or warn(...) for something that works but is doubtful

The doctor runs pytest with plain asserts (no rewriting), so `assert x, failure(...)` raises
an AssertionError whose argument is the Finding itself.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, NoReturn


@dataclass(frozen=True)
class Finding:
    """One check's verdict details; `fix` is a fix id of playbooks/fix.yml, or None."""

    message: str
    observed: str | None = None
    expected: str | None = None
    why: str | None = None
    fix: str | None = None
    manual: str | None = None
    # Fleet-wide checks name the hosts and devices a finding is about ("sim2 device 3").
    involved: tuple[str, ...] = ()

    def __str__(self) -> str:
        return self.message


class CheckFailure(AssertionError):
    """A check found the host not right."""

    def __init__(self, finding: Finding) -> None:
        super().__init__(finding)
        self.finding = finding


class CheckWarning(Exception):
    """A check found something that works but deserves attention."""

    def __init__(self, finding: Finding) -> None:
        super().__init__(finding)
        self.finding = finding


def failure(*, message: str, observed: str | None = None, expected: str | None = None,
            why: str | None = None, fix: str | None = None, manual: str | None = None,
            involved: tuple[str, ...] = ()) -> Finding:
    """The details of a failed `assert` (see the module docstring)."""
    finding = Finding(message=message, observed=observed, expected=expected, why=why, fix=fix,
                      manual=manual, involved=involved)
    # Also remembered: under assertion rewriting (pytest inside pytest) the AssertionError
    # carries text, not the Finding; the doctor's plugin reads it from here then.
    _failed.set(finding)
    return finding


def fail(*, message: str, observed: str | None = None, expected: str | None = None,
         why: str | None = None, fix: str | None = None, manual: str | None = None) -> NoReturn:
    """End the check as failed."""
    raise CheckFailure(failure(message=message, observed=observed, expected=expected, why=why,
                               fix=fix, manual=manual))


def warn(*, message: str, observed: str | None = None, expected: str | None = None,
         why: str | None = None, fix: str | None = None, manual: str | None = None) -> NoReturn:
    """End the check with a warning (exit code stays 0)."""
    raise CheckWarning(failure(message=message, observed=observed, expected=expected, why=why,
                               fix=fix, manual=manual))


# What a passing check saw, for the JSON report; reset by the doctor's plugin per check.
_observed: ContextVar[tuple[str | None, str | None] | None] = ContextVar("observed",
                                                                          default=None)


def observe(observed: str | None, expected: str | None = None) -> None:
    """Record what a check saw (and wanted) so that a pass carries evidence too."""
    _observed.set((observed, expected))


_failed: ContextVar[Finding | None] = ContextVar("failed", default=None)


def fail_involving(involved: tuple[str, ...], **details: str) -> NoReturn:
    """A fleet-wide check's failure, naming the hosts and devices it is about."""
    raise CheckFailure(failure(involved=involved, **details))


def take_failure() -> Finding | None:
    """The Finding of the last `failure(...)` call, cleared."""
    value = _failed.get()
    _failed.set(None)
    return value


def take_observed() -> tuple[str | None, str | None]:
    """The last `observe` call's values, cleared."""
    value = _observed.get()
    _observed.set(None)
    return value or (None, None)


# Free-form evidence of a check (the smoke workloads' JSON), for the report's `evidence` field.
_evidence: ContextVar[dict[str, Any] | None] = ContextVar("evidence", default=None)


def attach_evidence(document: dict[str, Any]) -> None:
    """Put a document (e.g. smoke evidence) into this check's report entry, pass or fail."""
    _evidence.set(document)


def take_evidence() -> dict[str, Any] | None:
    """The last attached evidence, cleared."""
    value = _evidence.get()
    _evidence.set(None)
    return value
