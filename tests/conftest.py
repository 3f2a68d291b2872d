"""Fixtures shared by the whole suite: the simulated Ascend hosts (tests/sim)."""

from tests.sim.fixtures import *  # noqa: F403
