"""The doctor runs the check suite through pytest's own runtest protocol.

Each check's report becomes one result row; marks (skipif, xfail) and fixtures behave as
under `pytest checks/`, and what a check prints stays out of the doctor's output.
"""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest

from ascend_env.core.resources import shipped_dir
from ascend_env.doctor.report import Status
from ascend_env.doctor.suite import (
    DoctorContext,
    DoctorPlugin,
    Target,
    _quiet_pytest_env,
    run_suite,
)
from ascend_env.facts.assemble import facts_from_capture
from ascend_env.facts.model import Facts
from ascend_env.targets.collect import ProbeOptions, capture_local
from tests.facts.captures import GOLDEN_HOSTS

# pytest's own verdict of a check (pytest_report_teststatus) and the doctor's row for it.
AS_PYTEST: dict[str, set[Status]] = {
    "passed": {"pass"}, "xpassed": {"pass"}, "skipped": {"skip"}, "xfailed": {"skip"},
    "failed": {"fail", "warn", "error"}, "error": {"fail", "warn", "error"}}

DEMO_CONFTEST = '''
import pytest
from ascend_env.doctor.suite import DoctorContext, DoctorPlugin, Target
from ascend_env.facts.model import Facts


def pytest_configure(config):
    if not any(isinstance(p, DoctorPlugin) for p in config.pluginmanager.get_plugins()):
        config.pluginmanager.register(DoctorPlugin(DoctorContext(targets=[
            Target(name="here", facts=Facts())])))


@pytest.fixture(scope="session")
def facts(target):
    return target.facts


@pytest.fixture
def broken_teardown(target):
    yield
    raise RuntimeError("teardown of a fixture failed")
'''

DEMO_CHECKS = '''
import logging
import os
import sys

import pytest

from ascend_env.doctor.findings import fail, observe, warn

pytestmark = [pytest.mark.category("demo"), pytest.mark.level(1)]


@pytest.mark.skipif(sys.version_info > (3,), reason="this host runs Python 3")
def test_skipif_true(facts):
    """demo.skipif-true: skipped by its mark."""
    fail(message="a skipped check ran")


@pytest.mark.skipif("sys.version_info < (3,)", reason="this host runs Python 2")
def test_skipif_false(facts):
    """demo.skipif-false: its mark's condition is false, so it runs."""
    observe("python 3", "python 3")


@pytest.mark.xfail(reason="known firmware bug", strict=False)
def test_xfail(facts):
    """demo.xfail: fails, as its mark expects."""
    fail(message="the firmware bug")


@pytest.mark.xfail(reason="fixed upstream", strict=False)
def test_xpass(facts):
    """demo.xpass: passes although marked xfail."""


@pytest.mark.xfail(reason="fixed upstream", strict=True)
def test_xpass_strict(facts):
    """demo.xpass-strict: passes although strictly marked xfail."""


@pytest.mark.xfail(raises=KeyError, reason="only a KeyError is expected")
def test_xfail_other_error(facts):
    """demo.xfail-other: raises what its mark does not expect."""
    raise ValueError("not the expected error")


@pytest.mark.xfail(run=False, reason="would hang the host")
def test_xfail_not_run(facts):
    """demo.xfail-not-run: not run at all."""
    fail(message="an xfail(run=False) check ran")


def test_warns(facts):
    """demo.warn: works but is doubtful."""
    warn(message="doubtful", observed="seen", expected="wanted", fix="demo-fix")


def test_fixtures(facts, tmp_path, monkeypatch, capsys, caplog):
    """demo.fixtures: pytest's own fixtures work in a check."""
    (tmp_path / "f").write_text("x")
    monkeypatch.setenv("DEMO_VAR", "1")
    print("to capsys")
    logging.getLogger("demo").warning("to caplog")
    assert capsys.readouterr().out == "to capsys\\n"
    assert os.environ["DEMO_VAR"] == "1" and (tmp_path / "f").read_text() == "x"
    assert "to caplog" in caplog.text


def test_prints(facts):
    """demo.prints: prints through Python and straight to the file descriptors."""
    print("NOISE from print")
    sys.stderr.write("NOISE on stderr\\n")
    os.write(1, b"NOISE on fd 1\\n")
    os.write(2, b"NOISE on fd 2\\n")


def test_teardown_fails(facts, broken_teardown):
    """demo.teardown: passes; a fixture's teardown fails after it."""
'''


def demo_suite(root: Path) -> Path:
    """A checks-like directory: the real suite's ini, a small conftest and the demo checks."""
    suite = root / "demo_checks"
    suite.mkdir()
    shutil.copy(shipped_dir("checks") / "pytest.ini", suite / "pytest.ini")
    (suite / "conftest.py").write_text(textwrap.dedent(DEMO_CONFTEST))
    (suite / "test_demo.py").write_text(textwrap.dedent(DEMO_CHECKS))
    return suite


class Verdicts:
    """Records pytest's own verdict of each test (what its terminal would print), in order."""

    def __init__(self) -> None:
        self.config: pytest.Config | None = None
        self.seen: list[tuple[str, str]] = []  # node id, category

    def pytest_configure(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        assert self.config is not None
        deciding = report.when == "call" or (report.when == "setup" and not report.passed)
        if deciding:
            category, _, _ = self.config.hook.pytest_report_teststatus(report=report,
                                                                       config=self.config)
            self.seen.append((report.nodeid, category))


def as_pytest_checks(suite: Path) -> list[str]:
    """`pytest checks/` as a user runs it: every built-in plugin, the terminal too."""
    return [str(suite), "-c", str(suite / "pytest.ini"), "--rootdir", str(suite),
            "--import-mode=importlib", "-p", "no:cacheprovider", "-q"]


def by_id(plugin: DoctorPlugin, host: str) -> dict[str, dict[str, Any]]:
    return {r.id: r.model_dump(exclude={"duration_s"}) for r in plugin.results[host]}


def test_marks_fixtures_and_outcomes_as_under_pytest(tmp_path: Path,
                                                     capfd: pytest.CaptureFixture[str]
                                                     ) -> None:
    suite = demo_suite(tmp_path)
    plugin = DoctorPlugin(DoctorContext(targets=[Target(name="h1", facts=Facts())]))
    code = run_suite(suite, plugin)
    assert code == pytest.ExitCode.TESTS_FAILED  # the strict xpass and the unexpected error
    out, err = capfd.readouterr()
    assert "NOISE" not in out + err  # captured in the suite, not the doctor's output
    rows = by_id(plugin, "h1")
    status = {check_id: row["status"] for check_id, row in rows.items()}
    assert status == {
        "demo.skipif-true": "skip", "demo.skipif-false": "pass", "demo.xfail": "skip",
        "demo.xpass": "pass", "demo.xpass-strict": "fail", "demo.xfail-other": "error",
        "demo.xfail-not-run": "skip", "demo.warn": "warn", "demo.fixtures": "pass",
        "demo.prints": "pass", "demo.teardown": "pass"}
    assert rows["demo.skipif-true"]["message"] == "this host runs Python 3"
    assert rows["demo.skipif-false"]["observed"] == "python 3"
    assert rows["demo.xfail"]["message"] == "expected to fail (xfail): known firmware bug"
    assert rows["demo.xpass"]["message"] == "passed, though marked xfail: fixed upstream"
    assert rows["demo.xpass-strict"]["message"] == "[XPASS(strict)] fixed upstream"
    assert rows["demo.xfail-other"]["message"] == \
        "error running the check: ValueError: not the expected error"
    assert rows["demo.xfail-not-run"]["message"] == \
        "expected to fail (xfail): [NOTRUN] would hang the host"
    assert rows["demo.warn"]["observed"] == "seen"
    assert rows["demo.warn"]["fix"] == {"id": "demo-fix", "command": None, "applied": None}

    # The same directory under plain pytest (its conftest brings a target): same verdicts.
    verdicts = Verdicts()
    with _quiet_pytest_env():
        plain = pytest.main(as_pytest_checks(suite), plugins=[verdicts])
    assert plain == code
    capfd.readouterr()
    seen = {nodeid.split("::")[1].split("[")[0]: category
            for nodeid, category in verdicts.seen}
    assert seen == {
        "test_skipif_true": "skipped", "test_skipif_false": "passed", "test_xfail": "xfailed",
        "test_xpass": "xpassed", "test_xpass_strict": "failed",
        "test_xfail_other_error": "failed", "test_xfail_not_run": "xfailed",
        "test_warns": "failed", "test_fixtures": "passed", "test_prints": "passed",
        "test_teardown_fails": "passed"}
    for (check_id, row_status), (_, category) in zip(status.items(), verdicts.seen,
                                                    strict=True):
        assert row_status in AS_PYTEST[category], (check_id, category)


def test_results_on_real_captures() -> None:
    """Every outcome of the real suite becomes a row, as pytest itself judges it."""
    captured = capture_local(ProbeOptions())
    assert captured.capture is not None, captured.error
    targets = [Target(name="here", facts=facts_from_capture(captured.capture))]
    targets += [Target(name=name, facts=facts_from_capture(make()))
                for name, make in sorted(GOLDEN_HOSTS.items())]
    # Facts that are not facts: checks and fixtures raise, as a bug in one would.
    targets.append(Target(name="broken", facts=None))  # type: ignore[arg-type]
    plugin = DoctorPlugin(DoctorContext(targets=targets))
    code = run_suite(shipped_dir("checks"), plugin)
    assert code in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
    # Fleet-wide checks (the `fleet` fixture) give one row for all targets.
    rows = [r for t in targets for r in plugin.results[t.name]] + plugin.fleet_results
    statuses = {r.status for r in rows}
    assert {"pass", "warn", "skip", "fail", "error"} <= statuses, statuses
    messages = [r.message for r in plugin.results["broken"] if r.status == "error"]
    assert any(m.startswith("error setting up the check: AttributeError") for m in messages)
    assert any(m.startswith("error running the check: AttributeError") for m in messages)
    assert all(len(plugin.results[t.name]) > 20 for t in targets)
    # The same targets under `pytest checks/` (the terminal's own verdicts): one row per
    # check and host, each agreeing with pytest's verdict of that test.
    verdicts = Verdicts()
    with _quiet_pytest_env():
        pytest.main(as_pytest_checks(shipped_dir("checks")),
                    plugins=[DoctorPlugin(DoctorContext(targets=targets)), verdicts])
    assert len(rows) == len(verdicts.seen)
    by_host: dict[str, list[str]] = {}
    for nodeid, category in verdicts.seen:
        host = nodeid.rsplit("[", 1)[1].rstrip("]") if "[" in nodeid else "(fleet)"
        by_host.setdefault(host, []).append(category)
    results = {**plugin.results, "(fleet)": plugin.fleet_results}
    for name in [t.name for t in targets] + ["(fleet)"]:
        pairs = zip(results[name], by_host[name], strict=True)
        assert all(row.status in AS_PYTEST[category] for row, category in pairs), name


FLEET_CONFTEST = DEMO_CONFTEST + '''

@pytest.fixture(scope="session")
def fleet(pytestconfig):
    plugin = next(p for p in pytestconfig.pluginmanager.get_plugins()
                  if isinstance(p, DoctorPlugin))
    return plugin.context.targets
'''

FLEET_CHECKS = '''
import pytest

from ascend_env.doctor.findings import attach_evidence, fail_involving, observe

pytestmark = [pytest.mark.category("demo"), pytest.mark.level(1)]


def test_observes(facts):
    """demo.observes: records what it saw and attaches evidence."""
    observe("seen here", "wanted here")
    attach_evidence({"host": "evidence"})


def test_says_nothing(facts):
    """demo.silent: passes without recording anything."""


@pytest.mark.scope("fleet")
def test_every_host(fleet):
    """demo.fleet: sees every target at once."""
    fail_involving(tuple(t.name for t in fleet), message="the hosts disagree",
                   observed=f"{len(fleet)} hosts")
'''


class Properties:
    """What each deciding report of a test carries in its user_properties."""

    def __init__(self) -> None:
        self.seen: dict[str, list[tuple[str, object]]] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call":
            self.seen[report.nodeid.split("::")[1]] = list(report.user_properties)


def suite_of(root: Path, checks: str, module: str = "test_scoped") -> Path:
    """A suite of these checks; each in-process run names its module apart (pytest imports a
    module name once per process)."""
    suite = root / "scoped_checks"
    suite.mkdir()
    shutil.copy(shipped_dir("checks") / "pytest.ini", suite / "pytest.ini")
    (suite / "conftest.py").write_text(textwrap.dedent(FLEET_CONFTEST))
    (suite / f"{module}.py").write_text(textwrap.dedent(checks))
    return suite


def test_a_fleet_scope_check_runs_once_and_results_travel_on_pytest_reports(
        tmp_path: Path) -> None:
    """The scope marker makes a fleet check; what checks record rides on their reports."""
    targets = [Target(name="h1", facts=Facts()), Target(name="h2", facts=Facts())]
    plugin = DoctorPlugin(DoctorContext(targets=targets))
    properties = Properties()
    with _quiet_pytest_env():
        code = pytest.main(["-c", str(shipped_dir("checks") / "pytest.ini"), "-q",
                            "-p", "no:cacheprovider", "--import-mode=importlib",
                            "--rootdir", str(tmp_path),
                            str(suite_of(tmp_path, FLEET_CHECKS))],
                           plugins=[plugin, properties])
    assert code == pytest.ExitCode.TESTS_FAILED
    assert [(r.id, r.status, r.involved, r.observed) for r in plugin.fleet_results] == [
        ("demo.fleet", "fail", ["h1", "h2"], "2 hosts")]
    for host in ("h1", "h2"):
        rows = by_id(plugin, host)
        assert set(rows) == {"demo.observes", "demo.silent"}
        assert (rows["demo.observes"]["observed"], rows["demo.observes"]["expected"]) == (
            "seen here", "wanted here")
        assert rows["demo.observes"]["evidence"] == {"host": "evidence"}
        # Nothing of the check before: each test records into its own item.
        assert (rows["demo.silent"]["observed"], rows["demo.silent"]["evidence"]) == (
            None, None)
    # pytest's own report of the test carries what the check recorded.
    assert ("ascend_env.observed", ("seen here", "wanted here")) in \
        properties.seen["test_observes[h1]"]
    assert properties.seen["test_says_nothing[h2]"] == []


@pytest.mark.parametrize(("checks", "says"), [
    (FLEET_CHECKS.replace('@pytest.mark.scope("fleet")\n', ""),
     "test_every_host: a check that reads no host's fixtures (`target`, `facts`...) is "
     'marked @pytest.mark.scope("fleet")'),
    (FLEET_CHECKS.replace("def test_every_host(fleet):", "def test_every_host(fleet, facts):"),
     "test_every_host: a fleet-scope check takes `fleet`, not one host's fixtures"),
    (FLEET_CHECKS.replace('scope("fleet")', 'scope("rack")'),
     "test_every_host: scope 'rack' is not one of host, fleet, image"),
], ids=["fleet-unmarked", "fleet-reads-a-host", "unknown-scope"])
def test_a_check_against_its_scope_is_a_suite_error(checks: str, says: str,
                                                    tmp_path: Path) -> None:
    plugin = DoctorPlugin(DoctorContext(targets=[Target(name="h1", facts=Facts())]))
    run_suite(suite_of(tmp_path, checks, f"test_scoped_{abs(hash(says))}"), plugin)
    assert any(says in error for error in plugin.collect_errors), plugin.collect_errors
