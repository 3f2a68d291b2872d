"""The check suite, run in-process: pytest over checks/ with the doctor's plugin.

One test is one check (docstring `id: title`, a category marker, a level marker), run once
per target through the `target` parameter; the plugin selects by level and `--only`, and
turns each outcome into a CheckResult (observed, expected, why, the fix). `pytest checks/`
runs the same suite on this machine with a terminal.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pluggy import HookimplMarker

from ascend_env.core.errors import UsageError
from ascend_env.core.resources import shipped_dir
from ascend_env.doctor.findings import (
    CheckFailure,
    CheckWarning,
    Finding,
    take_evidence,
    take_failure,
    take_observed,
)
from ascend_env.doctor.report import CheckResult, FixRef, Status
from ascend_env.spec.matrix import Matrix, load_matrix

if TYPE_CHECKING:
    import pytest

    from ascend_env.facts.model import Facts
    from ascend_env.spec.model import EnvSpec

# pytest's own marker (pytest.hookimpl), taken from pluggy so pytest loads only with the suite.
hookimpl = HookimplMarker("pytest")

PLUGIN_NAME = "ascend_env_doctor"


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
    return CheckInfo(id=check_id.strip(), title=title.strip().rstrip("."),
                     category=str(category.args[0]), level=int(level.args[0]) if level else 1)


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
    """pytest plugin: parametrises checks by target, selects, and collects outcomes."""

    def __init__(self, context: DoctorContext, *, lean: bool = False) -> None:
        self.context = context
        # The doctor's own run (no terminal, no JUnit): each check runs through pytest's
        # setup, call and teardown hooks, without the reports nobody reads (see
        # pytest_runtest_protocol). `pytest checks/` keeps pytest's whole protocol.
        self.lean = lean
        self.checks: list[CheckInfo] = []
        self.results: dict[str, list[CheckResult]] = {t.name: [] for t in context.targets}
        self._started: dict[str, float] = {}
        self._info: dict[pytest.Item, CheckInfo] = {}  # read once per item, at selection
        self._checks: dict[Any, CheckInfo] = {}  # by check function: the same for every host
        self.collect_errors: list[str] = []

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        # Without a terminal nobody reads pytest's tracebacks (a result is built from the
        # exception itself), yet the default "long" one parses the check's source and reprs
        # its arguments, whole Facts models included: ~5 ms per failing check. The option
        # exists only with the terminal plugin, so `pytest checks/` keeps its tracebacks.
        if not hasattr(session.config.option, "tbstyle"):
            session.config.option.tbstyle = "line"

    def _check_info(self, node: pytest.Item) -> CheckInfo:
        function = getattr(node, "function", None)
        info = self._checks.get(function)
        if info is None:
            info = self._checks[function] = check_info(node)
        return info

    def _wanted(self, info: CheckInfo) -> bool:
        # Image-scope checks (checks/test_image.py) run only when `image build|validate`
        # hands an image context (ascend_env/image/inspection.py); a host never lists them.
        image_only = info.category == "image" and getattr(self.context, "scope", None) is None
        return info.level <= self.context.level and selected(info, self.context.only) \
            and not image_only

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        if "target" in metafunc.fixturenames:
            targets = self.context.targets
            # A check this run leaves out (its level, --only) gets one item, deselected
            # below, not one per host.
            if not self._wanted(self._check_info(metafunc.definition)):
                targets = targets[:1]
            # Session scope: a host's checks run together and the fixtures of checks/conftest.py
            # are made once per host, not per check and host (~17% of the suite's work).
            metafunc.parametrize("target", targets, ids=[t.name for t in targets],
                                 scope="session")

    def pytest_collection_modifyitems(self, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        keep: list[pytest.Item] = []
        drop: list[pytest.Item] = []
        seen: dict[str, str] = {}
        listed: dict[CheckInfo, None] = {}  # in collection order, once each
        for item in items:
            info = self._info[item] = self._check_info(item)
            previous = seen.setdefault(info.id, item.nodeid.split("[")[0])
            if previous != item.nodeid.split("[")[0]:
                raise UsageError(f"check id {info.id} is used twice: {previous} and "
                                 f"{item.nodeid}")
            if self._wanted(info):
                keep.append(item)
                listed.setdefault(info)
            else:
                drop.append(item)
        self.checks = list(listed)
        if drop:
            config.hook.pytest_deselected(items=drop)
        items[:] = keep

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:  # a broken check module: say which and why, there is no terminal
            self.collect_errors.append(f"{report.nodeid}: {report.longreprtext.strip()[-2000:]}")

    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        take_observed()
        take_failure()
        take_evidence()
        self._started[item.nodeid] = time.monotonic()

    @hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None
                                ) -> bool | None:
        """The doctor's run: setup, call and teardown through pytest's own hooks (fixtures
        and their caching), each outcome straight into a CheckResult. pytest's protocol builds
        a CallInfo and a TestReport per phase and sends them through four more hooks for a
        terminal and a JUnit writer a doctor run does not load: ~40% of the suite's time,
        ~50 ms for 8 hosts. Ctrl-C and pytest.exit still end the session."""
        if not self.lean:
            return None
        import pytest  # noqa: PLC0415 - loaded already: this runs inside the session

        ihook = item.ihook
        error = _outcome(lambda: ihook.pytest_runtest_setup(item=item))
        if error is not None:
            self._keep(item, "setup", error)
        else:
            self._keep(item, "call", _outcome(lambda: ihook.pytest_runtest_call(item=item)))
        # A fixture's own teardown failing is not the check's verdict (as with the reports).
        with contextlib.suppress(Exception, pytest.skip.Exception, pytest.fail.Exception):
            ihook.pytest_runtest_teardown(item=item, nextitem=nextitem)
        return True

    @hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]
                                  ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report: pytest.TestReport = yield
        if call.when == "call" or (call.when == "setup" and not report.passed):
            self._keep(item, call.when, call.excinfo.value if call.excinfo else None)
        return report

    def _keep(self, item: pytest.Item, when: str, error: BaseException | None) -> None:
        target = item.callspec.params.get("target")  # type: ignore[attr-defined]
        if isinstance(target, Target):
            self.results[target.name].append(self._result(item, when, error))

    def _result(self, item: pytest.Item, when: str, error: BaseException | None
                ) -> CheckResult:
        import pytest  # noqa: PLC0415 - loaded already: this runs inside the session

        info = self._info.get(item) or check_info(item)
        duration = time.monotonic() - self._started.get(item.nodeid, time.monotonic())
        base = {"id": info.id, "title": info.title, "category": info.category,
                "level": info.level, "duration_s": round(duration, 4),
                "evidence": take_evidence()}
        if error is None:
            observed, expected = take_observed()
            return CheckResult(status="pass", observed=observed, expected=expected, **base)
        if isinstance(error, pytest.skip.Exception):
            return CheckResult(status="skip", message=str(error.msg), **base)
        finding: Finding | None = None
        status: Status = "fail"
        if isinstance(error, CheckWarning):
            finding, status = error.finding, "warn"
        elif isinstance(error, CheckFailure):
            finding = error.finding
        elif isinstance(error, AssertionError) and error.args and \
                isinstance(error.args[0], Finding):
            finding = error.args[0]
        elif isinstance(error, AssertionError) and (recorded := take_failure()) is not None:
            finding = recorded
        elif isinstance(error, AssertionError):
            return CheckResult(status="fail", message=str(error) or "assertion failed", **base)
        else:
            where = "setting up" if when == "setup" else "running"
            return CheckResult(status="error", message=f"error {where} the check: "
                               f"{type(error).__name__}: {error}", **base)
        fix = FixRef(id=finding.fix, command=finding.manual) \
            if finding.fix or finding.manual else None
        return CheckResult(status=status, message=finding.message, observed=finding.observed,
                           expected=finding.expected, why=finding.why, fix=fix, **base)


def _outcome(phase: Callable[[], object]) -> BaseException | None:
    """What a phase of a check raised, if anything: every outcome becomes a result, but
    Ctrl-C and pytest.exit still end the session."""
    import pytest  # noqa: PLC0415 - loaded already: this runs inside the session

    try:
        phase()
    except (KeyboardInterrupt, pytest.exit.Exception):
        raise
    except BaseException as error:
        return error
    return None


@contextlib.contextmanager
def _quiet_pytest_env() -> Iterator[None]:
    """The suite runs with its own plugins only, whatever the caller's environment says."""
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


# pytest's built-in plugins that a doctor run has no use for: reporting (the plugin builds
# the report), log and output capture (output goes where it would with -s; ~5% of the
# suite's work, hooked around every phase of every check and host), per-test fixtures no
# check takes, the end-of-run hunt for unraisable exceptions, whose gc.collect() alone cost
# ~50 ms per run, the warnings plugin, which records warnings around every check and host
# (~10% of a fleet's suite time) for a summary nobody prints, and skip/xfail marks, which
# no check carries (a check skips through pytest.skip(); test_suite_protocol.py keeps it so).
UNUSED_PLUGINS = ("cacheprovider", "terminal", "stepwise", "junitxml", "pastebin", "doctest",
                  "logging", "faulthandler", "unraisableexception", "threadexception",
                  "legacypath", "tmpdir", "monkeypatch", "recwarn", "setuponly", "setupplan",
                  "debugging", "python_path", "unittest", "warnings", "capture", "skipping")


def pytest_args(checks: Path, *extra: str) -> list[str]:
    """How the suite is run: its own ini, plain asserts (a Finding stays an object), silent."""
    disabled = [arg for name in UNUSED_PLUGINS for arg in ("-p", f"no:{name}")]
    return [str(checks), "-c", str(checks / "pytest.ini"), "--rootdir", str(checks),
            "--import-mode=importlib", "--assert=plain", *disabled, *extra]


def run_checks(context: DoctorContext, *, collect_only: bool = False) -> DoctorPlugin:
    """Run (or only collect) the suite for every target of the context."""
    import pytest  # noqa: PLC0415 - see prepare_suite

    plugin = DoctorPlugin(context, lean=True)
    checks = shipped_dir("checks")
    extra = ("--collect-only",) if collect_only else ()
    with _quiet_pytest_env():
        code = pytest.main(pytest_args(checks, *extra), plugins=[plugin])
    if plugin.collect_errors:
        raise UsageError("the check suite has errors:\n" + "\n".join(plugin.collect_errors))
    if code == pytest.ExitCode.NO_TESTS_COLLECTED and context.only:
        raise UsageError(f"--only {' '.join(context.only)}: no check matches; "
                         "see `ascend-env doctor --list`")
    if code in (pytest.ExitCode.INTERNAL_ERROR, pytest.ExitCode.USAGE_ERROR,
                pytest.ExitCode.INTERRUPTED):
        raise UsageError(f"the check suite in {checks} could not run (pytest exit {int(code)})")
    return plugin


def list_checks(level: int = 3, only: tuple[str, ...] = ()) -> list[CheckInfo]:
    """The suite's checks without running anything."""
    from ascend_env.facts.model import Facts  # noqa: PLC0415 - see prepare_suite

    placeholder = Target(name="-", facts=Facts())
    plugin = run_checks(DoctorContext(targets=[placeholder], level=level, only=only),
                        collect_only=True)
    return plugin.checks
