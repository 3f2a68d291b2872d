"""What a check says when it does not pass: observed, expected, why it matters, the fix.

Checks in checks/ use these helpers; the doctor's pytest plugin turns them into report rows.
Two spellings, same result:

    assert ok, failure(message=..., observed=..., expected=..., why=..., fix=..., manual=...)
    fail(message=..., ...)            # or warn(...) for something that works but is doubtful

The doctor runs pytest with plain asserts (no rewriting), so `assert x, failure(...)` raises
an AssertionError whose argument is the Finding itself.

What a check records besides (what it saw, its evidence, its last Finding) goes into pytest's
own record of the running test, `item.user_properties`, which every report of the test
carries (`report.user_properties`); the doctor's plugin reads the reports.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NoReturn

# Names of the properties a check records (pytest's user_properties: name, value).
OBSERVED = "ascend_env.observed"
EVIDENCE = "ascend_env.evidence"
FINDING = "ascend_env.finding"

# The user_properties of the check running now: bound by the doctor's plugin around each
# test's run protocol (one at a time; a list so that no `global` rebinding is needed).
_running: list[list[tuple[str, object]]] = []


@contextlib.contextmanager
def recording_into(properties: list[tuple[str, object]]) -> Iterator[None]:
    """While a test runs, what its check records goes into its `item.user_properties`."""
    _running.append(properties)
    try:
        yield
    finally:
        _running.pop()


def _record(name: str, value: object) -> None:
    if _running:
        _running[-1].append((name, value))


def recorded(properties: list[tuple[str, object]], name: str) -> Any:
    """The last value recorded under `name` in a report's user_properties, or None."""
    return next((value for key, value in reversed(properties) if key == name), None)


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
    # Also recorded: under assertion rewriting (pytest inside pytest) the AssertionError
    # carries text, not the Finding; the doctor's plugin reads it from the report then.
    _record(FINDING, finding)
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


def observe(observed: str | None, expected: str | None = None) -> None:
    """Record what a check saw (and wanted) so that a pass carries evidence too."""
    _record(OBSERVED, (observed, expected))


def fail_involving(involved: tuple[str, ...], **details: str) -> NoReturn:
    """A fleet-wide check's failure, naming the hosts and devices it is about."""
    raise CheckFailure(failure(involved=involved, **details))


def attach_evidence(document: dict[str, Any]) -> None:
    """Put a document (e.g. smoke evidence) into this check's report entry, pass or fail."""
    _record(EVIDENCE, document)
