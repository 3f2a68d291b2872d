"""Python: CANN's own Python dependencies in the framework interpreter."""

from __future__ import annotations

import shlex

import pytest

from ascend_env.doctor.findings import failure, observe
from ascend_env.facts.frameworks import normalize_dist
from ascend_env.facts.model import CannFacts, Facts
from ascend_env.repository.wheelhouse import CANN_PYTHON_DEPS

pytestmark = [pytest.mark.category("python"), pytest.mark.level(1)]


def test_cann_deps(facts: Facts, cann: CannFacts) -> None:
    """python.cann-deps: CANN's Python dependencies are installed in the framework Python."""
    del cann
    env = facts.frameworks.python
    if env is None:
        pytest.skip(f"the framework Python could not be read: {facts.frameworks.error}"
                    if facts.frameworks.error else "the framework Python was not captured")
    have = {normalize_dist(name) for name in env.distributions}
    missing = [d for d in CANN_PYTHON_DEPS if normalize_dist(d) not in have]
    python = env.executable or "python3"
    assert not missing, failure(
        message=f"CANN's Python dependencies are missing from {python}: {', '.join(missing)}",
        observed=f"{len(CANN_PYTHON_DEPS) - len(missing)} of {len(CANN_PYTHON_DEPS)} installed "
                 f"in {python} (Python {env.version})",
        expected=", ".join(CANN_PYTHON_DEPS),
        why="operator compilation fails at the first op: 'EH9999 [Init][Env]init env failed!'",
        fix="python-deps",
        manual=shlex.join([python, "-m", "pip", "install", *missing]))
    observe(f"{len(CANN_PYTHON_DEPS)} dependencies in {python}")
