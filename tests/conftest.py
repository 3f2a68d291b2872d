"""Fixtures shared by the whole suite: the simulated Ascend hosts (tests/sim)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import pytest

from tests.sim.fixtures import *  # noqa: F403


@pytest.fixture(autouse=True)
def _blocking_standard_streams() -> Iterator[None]:
    """Put stdin/stdout/stderr back in blocking mode after each test.

    A child that shares them (the container builds) can leave them non-blocking, and every
    later `ansible` started with inherited streams then refuses to run.
    """
    yield
    for fd in (0, 1, 2):
        with contextlib.suppress(OSError):
            os.set_blocking(fd, True)
