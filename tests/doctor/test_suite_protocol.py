"""The doctor's lean run of the suite gives the results pytest's whole protocol gives.

The doctor runs each check through pytest's setup, call and teardown hooks only
(DoctorPlugin.pytest_runtest_protocol); `pytest checks/` keeps pytest's protocol and its
reports. Both must turn every outcome (pass, warn, fail, skip, error) into the same result.
"""

from __future__ import annotations

from typing import Any

import pytest

from ascend_env.core.resources import shipped_dir
from ascend_env.doctor.collect import ProbeOptions, capture_local
from ascend_env.doctor.suite import (
    DoctorContext,
    DoctorPlugin,
    Target,
    _quiet_pytest_env,
    pytest_args,
)
from ascend_env.facts.model import facts_from_capture
from tests.facts.test_facts import GOLDEN_HOSTS


def _results(targets: list[Target], *, lean: bool) -> dict[str, list[dict[str, Any]]]:
    plugin = DoctorPlugin(DoctorContext(targets=targets), lean=lean)
    with _quiet_pytest_env():
        code = pytest.main(pytest_args(shipped_dir("checks")), plugins=[plugin])
    assert code in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
    return {name: [r.model_dump(exclude={"duration_s"}) for r in results]
            for name, results in plugin.results.items()}


def test_lean_run_gives_the_results_of_pytests_protocol() -> None:
    captured = capture_local(ProbeOptions())
    assert captured.capture is not None, captured.error
    targets = [Target(name="here", facts=facts_from_capture(captured.capture))]
    targets += [Target(name=name, facts=facts_from_capture(make()))
                for name, make in sorted(GOLDEN_HOSTS.items())]
    # Facts that are not facts: checks and fixtures raise, as a bug in one would.
    targets.append(Target(name="broken", facts=None))  # type: ignore[arg-type]
    lean = _results(targets, lean=True)
    full = _results(targets, lean=False)
    assert lean == full
    statuses = {r["status"] for results in lean.values() for r in results}
    assert {"pass", "warn", "skip", "fail", "error"} <= statuses, statuses
    messages = [r["message"] for r in lean["broken"] if r["status"] == "error"]
    assert any(m.startswith("error setting up the check: AttributeError") for m in messages)
    assert any(m.startswith("error running the check: AttributeError") for m in messages)
    assert all(len(results) > 20 for results in lean.values())


def test_no_check_carries_a_skip_or_xfail_mark() -> None:
    """The doctor runs the suite without pytest's skipping plugin (suite.UNUSED_PLUGINS):
    a skip/skipif/xfail mark would be ignored there, so checks skip through pytest.skip()."""
    marked: list[str] = []

    class Marks:
        @staticmethod
        def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
            marked.extend(item.nodeid for item in items for name in ("skip", "skipif", "xfail")
                          if item.get_closest_marker(name) is not None)

    with _quiet_pytest_env():
        code = pytest.main([str(shipped_dir("checks")), "-p", "no:cacheprovider",
                            "--collect-only", "-q"], plugins=[Marks()])
    assert code == pytest.ExitCode.OK
    assert marked == []
