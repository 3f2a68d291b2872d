"""The harness's own tests use the harness fixtures (tests/conftest.py may wire them too)."""

from tests.sim.fixtures import *  # noqa: F403
