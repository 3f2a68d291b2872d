"""The check suite, run in-process: pytest over checks/ with the doctor's plugin.

One test is one check (docstring `id: title`, a category marker, a level marker, a scope
marker where it is not one host's), run once per target through the `target` parameter or,
marked `scope("fleet")`, once for every target at once; the plugin selects by level and
`--only`, and turns each test report into a CheckResult (observed, expected, why, the fix)
from what the report carries: its outcome, the exception it ended with and the
user_properties the check recorded (findings.py). Checks run through pytest's own runtest
protocol, so marks and fixtures behave as under `pytest checks/`, which runs the same suite on
this machine with a terminal.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

import pytest
from pluggy import HookimplMarker

from ascend_env.core.errors import UsageError
from ascend_env.core.resources import shipped_dir
from ascend_env.doctor.findings import (
    EVIDENCE,
    FINDING,
    OBSERVED,
    CheckFailure,
    CheckWarning,
    Finding,
    recorded,
    recording_into,
)
from ascend_env.doctor.report import CheckResult, FixRef, Status
from ascend_env.facts.model import Facts
from ascend_env.spec.matrix import Matrix, load_matrix

if TYPE_CHECKING:
    import pytest

    from ascend_env.facts.model import Facts
    from ascend_env.spec.envspec import EnvSpec

# pytest's own marker (pytest.hookimpl), taken from pluggy so pytest loads only with the suite.
hookimpl = HookimplMarker("pytest")

PLUGIN_NAME = "ascend_env_doctor"
# A check's scope (its `scope` marker, checks/pytest.ini): one host's (the default, once per
# target), the fleet's (the `fleet` fixture instead of `target`: once per doctor run, naming
# the hosts and devices it is about) or an image's (once per image, under `image build`).
Scope = Literal["host", "fleet", "image"]
# Where a fleet-wide check's result goes.
FLEET = "\0fleet"
# The report attribute that carries the exception a phase ended with (the object, not text).
RAISED = "doctor_raised"


@dataclass
class Target:
    """One host as the checks see it."""

    name: str
    facts: Facts
    host: Any = None  # testinfra Host for live targets; None when read from a capture
    source: str = "live"

    def __repr__(self) -> str:  # shown in pytest ids and messages
        return self.name


@dataclass
class DoctorContext:
    """Everything the check suite reads besides the facts."""

    targets: list[Target]
    spec: EnvSpec | None = None
    level: int = 1
    only: tuple[str, ...] = ()
    run_users: tuple[str, ...] = ()
    # host name -> the address the inventory or transport reaches it at (rank tables' server
    # ids); empty for saved captures.
    addresses: dict[str, str] = field(default_factory=dict)
    ranktable: Path | None = None  # `doctor --ranktable F`: checked against the fleet
    # The host order a spec's network plan numbers (run.plan_order: the whole inventory, a
    # --limit notwithstanding); empty: the targets' order.
    plan_hosts: list[str] = field(default_factory=list)

    @cached_property
    def matrix(self) -> Matrix:
        return load_matrix()


@dataclass(frozen=True)
class CheckInfo:
    """A check of the suite: id and title from its docstring, category and level markers."""

    id: str
    title: str
    category: str
    level: int
    scope: Scope = "host"


def check_info(item: pytest.Item) -> CheckInfo:
    """Read a check's identity; a check without one is a bug in checks/, said plainly."""
    function = getattr(item, "function", None)
    doc = (getattr(function, "__doc__", None) or "").strip().splitlines()
    head = doc[0] if doc else ""
    check_id, sep, title = head.partition(":")
    category = item.get_closest_marker("category")
    level = item.get_closest_marker("level")
    if not sep or " " in check_id.strip() or category is None:
        raise UsageError(f"{item.nodeid}: a check needs a docstring 'id: title' and a "
                         "category marker")
    marked = item.get_closest_marker("scope")
    name = str(marked.args[0]) if marked else "host"
    scopes: tuple[Scope, ...] = get_args(Scope)
    if name not in scopes:
        raise UsageError(f"{item.nodeid}: scope {name!r} is not one of {', '.join(scopes)}")
    return CheckInfo(id=check_id.strip(), title=title.strip().rstrip("."),
                     category=str(category.args[0]), level=int(level.args[0]) if level else 1,
                     scope=scopes[scopes.index(name)])


def selected(info: CheckInfo, only: tuple[str, ...]) -> bool:
    """`--only driver` picks a category, `--only driver.version` one check, `cann.*` a prefix."""
    if not only:
        return True
    for pattern in only:
        stem = pattern.rstrip("*").rstrip(".")
        if pattern in (info.id, info.category) or info.id.startswith(stem + "."):
            return True
    return False


class DoctorPlugin:
    """pytest plugin: parametrises checks by target, selects, and turns reports into results."""

    def __init__(self, context: DoctorContext) -> None:
        self.context = context
        self.checks: list[CheckInfo] = []
        self.results: dict[str, list[CheckResult]] = {t.name: [] for t in context.targets}
        self.fleet_results: list[CheckResult] = []
        self.collect_errors: list[str] = []
        self._selected: dict[str, tuple[CheckInfo, str]] = {}  # node id: check, target name
        self._setup_s: dict[str, float] = {}

    def _wanted(self, info: CheckInfo) -> bool:
        # Image-scope checks (checks/test_image.py) run only when `image build|validate`
        # hands an image context (ascend_env/image/inspection.py); a host never lists them.
        image_only = info.scope == "image" and getattr(self.context, "scope", None) is None
        return info.level <= self.context.level and selected(info, self.context.only) \
            and not image_only

    def pytest_configure(self, config: pytest.Config) -> None:
        # --tb belongs to the terminal reporter, which the doctor leaves out. A row is made
        # from the Finding a check raised, never from a report's traceback text, so Python's
        # own format does: it spares pytest parsing each failing check's source for frames.
        config.option.tbstyle = "native"

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        # Read here so that a check without an identity, or one that reads a single host
        # against its scope, is a collection error of its module, which both the doctor and
        # `pytest checks/` name.
        info = check_info(metafunc.definition)
        reads_a_host = "target" in metafunc.fixturenames
        if (info.scope == "fleet") == reads_a_host:
            raise UsageError(
                f"{metafunc.definition.nodeid}: a fleet-scope check takes `fleet`, not one "
                "host's fixtures" if reads_a_host else
                f"{metafunc.definition.nodeid}: a check that reads no host's fixtures "
                "(`target`, `facts`...) is marked @pytest.mark.scope(\"fleet\")")
        if reads_a_host:
            targets = self.context.targets
            # Session scope: a host's checks run together and the fixtures of checks/conftest.py
            # are made once per host (a skip too), not once per check and host.
            metafunc.parametrize("target", targets, ids=[t.name for t in targets],
                                 scope="session")

    def pytest_collection_modifyitems(self, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        keep: list[pytest.Item] = []
        drop: list[pytest.Item] = []
        seen: dict[str, str] = {}
        listed: dict[CheckInfo, None] = {}  # in collection order, once each
        for item in items:
            info = check_info(item)
            previous = seen.setdefault(info.id, item.nodeid.split("[")[0])
            if previous != item.nodeid.split("[")[0]:
                raise UsageError(f"check id {info.id} is used twice: {previous} and "
                                 f"{item.nodeid}")
            if not self._wanted(info):
                drop.append(item)
                continue
            keep.append(item)
            listed.setdefault(info)
            callspec = getattr(item, "callspec", None)
            target = callspec.params.get("target") if callspec is not None else None
            if info.scope == "fleet":
                self._selected[item.nodeid] = (info, FLEET)
            elif isinstance(target, Target):
                self._selected[item.nodeid] = (info, target.name)
        self.checks = list(listed)
        if drop:
            config.hook.pytest_deselected(items=drop)
        items[:] = keep

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:  # a broken check module: say which and why, there is no terminal
            self.collect_errors.append(f"{report.nodeid}: {report.longreprtext.strip()[-2000:]}")

    @hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None
                                ) -> Generator[None, object, object]:
        # What the check observes, attaches or finds goes into its own item's record.
        with recording_into(item.user_properties):
            return (yield)

    @hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]
                                  ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report: pytest.TestReport = yield
        # A report carries the text of what a phase raised; a row needs the object (the
        # Finding, a skip's message), so the report carries that too.
        setattr(report, RAISED, call.excinfo.value if call.excinfo is not None else None)
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        raised: BaseException | None = getattr(report, RAISED, None)
        check = self._selected.get(report.nodeid)
        if check is None:
            return
        if report.when == "setup":
            self._setup_s[report.nodeid] = report.duration
            if report.passed:
                return  # the call decides
        elif report.when != "call":
            # A fixture's teardown failing is not the verdict of the check it follows (a
            # session fixture tears down after the last check of its host, whichever it is).
            return
        duration = self._setup_s.pop(report.nodeid, 0.0)
        if report.when == "call":
            duration += report.duration
        info, target = check
        result = result_of(info, report, raised, round(duration, 4))
        if target == FLEET:
            self.fleet_results.append(result)
        else:
            self.results[target].append(result)


def result_of(info: CheckInfo, report: pytest.TestReport, raised: BaseException | None,
              duration_s: float) -> CheckResult:
    """The row of a check from the report of the phase that decided it and what it raised."""

    base = {"id": info.id, "title": info.title, "category": info.category,
            "level": info.level, "duration_s": duration_s,
            "evidence": recorded(report.user_properties, EVIDENCE)}
    xfail_reason = getattr(report, "wasxfail", None)
    if report.skipped:
        if xfail_reason is not None:  # an xfail mark (or pytest.xfail) and it failed
            return CheckResult(status="skip",
                               message=_xfail("expected to fail (xfail)", xfail_reason), **base)
        if isinstance(raised, pytest.skip.Exception):
            return CheckResult(status="skip", message=str(raised.msg), **base)
        return CheckResult(status="skip", message=_skip_reason(report), **base)
    if report.passed:
        observed, expected = recorded(report.user_properties, OBSERVED) or (None, None)
        message = _xfail("passed, though marked xfail", xfail_reason) \
            if xfail_reason is not None else ""
        return CheckResult(status="pass", observed=observed, expected=expected,
                           message=message, **base)
    if raised is None:  # failed without an exception: a strict xfail mark that passed
        return CheckResult(status="fail", message=report.longreprtext.strip(), **base)
    return _failed(raised, report.when, base, recorded(report.user_properties, FINDING))


def _xfail(what: str, reason: str) -> str:
    return f"{what}: {reason}" if reason else what


def _skip_reason(report: pytest.TestReport) -> str:
    """A skip's reason from its report: (path, line, "Skipped: reason")."""
    if isinstance(report.longrepr, tuple):
        return report.longrepr[2].removeprefix("Skipped: ")
    return report.longreprtext.strip()


def _failed(error: BaseException, when: str, base: dict[str, Any],
            recorded_finding: Finding | None) -> CheckResult:
    """A failed phase: the Finding the check raised (fail, warn), else an error in it."""
    finding: Finding | None = None
    status: Status = "fail"
    if isinstance(error, CheckWarning):
        finding, status = error.finding, "warn"
    elif isinstance(error, CheckFailure):
        finding = error.finding
    elif isinstance(error, AssertionError) and error.args and \
            isinstance(error.args[0], Finding):
        finding = error.args[0]
    elif isinstance(error, AssertionError) and recorded_finding is not None:
        finding = recorded_finding
    elif isinstance(error, AssertionError):
        return CheckResult(status="fail", message=str(error) or "assertion failed", **base)
    else:
        where = "setting up" if when == "setup" else "running"
        return CheckResult(status="error", message=f"error {where} the check: "
                           f"{type(error).__name__}: {error}", **base)
    fix = FixRef(id=finding.fix, command=finding.manual) \
        if finding.fix or finding.manual else None
    return CheckResult(status=status, message=finding.message, observed=finding.observed,
                       expected=finding.expected, why=finding.why, fix=fix,
                       involved=list(finding.involved), **base)


@contextlib.contextmanager
def _quiet_pytest_env() -> Iterator[None]:
    """The suite runs with its own plugins only, whatever the caller's environment says."""
    # The doctor runs as root on operators' hosts: no plugin installed beside it, nor options
    # from the environment, takes part in a check's verdict.
    saved = {k: os.environ.get(k) for k in ("PYTEST_DISABLE_PLUGIN_AUTOLOAD",
                                            "PYTEST_ADDOPTS", "PYTEST_PLUGINS")}
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    os.environ.pop("PYTEST_ADDOPTS", None)
    os.environ.pop("PYTEST_PLUGINS", None)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


# pytest's built-in plugins that cannot change a check's outcome and that a doctor run has no
# use for: it builds its own report. Everything else (capture, skipping, logging, warnings,
# the fixtures of tmp_path, monkeypatch...) is on, as under `pytest checks/`.
REPORTING_PLUGINS = ("terminal", "junitxml", "cacheprovider", "pastebin", "doctest",
                     "stepwise")


def pytest_args(checks: Path, *extra: str) -> list[str]:
    """How the suite is run: its own ini and root, plain asserts (a Finding stays an object)."""
    disabled = [arg for name in REPORTING_PLUGINS for arg in ("-p", f"no:{name}")]
    return [str(checks), "-c", str(checks / "pytest.ini"), "--rootdir", str(checks),
            "--import-mode=importlib", "--assert=plain", *disabled, *extra]


def run_suite(checks: Path, plugin: DoctorPlugin, *extra: str) -> int:
    """pytest over a check suite with the doctor's plugin; pytest's exit code."""

    # Output capture stays on, at the file descriptors as under `pytest checks/`, so what a
    # check or the commands it starts print never reaches the doctor's output (a --json
    # document among it); a check speaks through its Finding and evidence, and its captured
    # output is dropped with the reports. What the caller wrote before goes out first.
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    with _quiet_pytest_env():
        return int(pytest.main(pytest_args(checks, *extra), plugins=[plugin]))


def run_checks(context: DoctorContext, *, collect_only: bool = False) -> DoctorPlugin:
    """Run (or only collect) the suite for every target of the context."""

    plugin = DoctorPlugin(context)
    checks = shipped_dir("checks")
    code = run_suite(checks, plugin, *(("--collect-only",) if collect_only else ()))
    if plugin.collect_errors:
        raise UsageError("the check suite has errors:\n" + "\n".join(plugin.collect_errors))
    if code == pytest.ExitCode.NO_TESTS_COLLECTED and context.only:
        raise UsageError(f"--only {' '.join(context.only)}: no check matches; "
                         "see `ascend-env doctor --list`")
    if code in (pytest.ExitCode.INTERNAL_ERROR, pytest.ExitCode.USAGE_ERROR,
                pytest.ExitCode.INTERRUPTED):
        raise UsageError(f"the check suite in {checks} could not run (pytest exit {code})")
    return plugin


def list_checks(level: int = 3, only: tuple[str, ...] = ()) -> list[CheckInfo]:
    """The suite's checks without running anything."""

    placeholder = Target(name="-", facts=Facts())
    plugin = run_checks(DoctorContext(targets=[placeholder], level=level, only=only),
                        collect_only=True)
    return plugin.checks
