"""The doctor's default view: a category a line, problems expanded, skips folded by cause."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest
from rich.console import Console

from ascend_env.cli.doctor_glance import glance_rows, render_glance
from ascend_env.doctor.report import CheckResult, FixRef, Report, SpecRef


def _check(check_id: str, status: str, message: str = "", **extra: object) -> CheckResult:
    return CheckResult.model_validate({"id": check_id, "title": f"{check_id} holds",
                                       "category": check_id.split(".", 1)[0], "status": status,
                                       "message": message, **extra})


def _report() -> Report:
    checks = [_check(f"driver.c{i}", "pass") for i in range(7)]
    checks += [_check(f"cann.c{i}", "skip", "no driver") for i in range(3)]
    checks += [_check("env.set-env", "fail", "set_env.sh is not sourced",
                      observed="no CANN variables", expected="ASCEND_TOOLKIT_HOME set",
                      why="jobs cannot find CANN", fix=FixRef(id="ld-library-path",
                                                             command="echo . set_env.sh"))]
    checks += [_check("env.other", "skip", "no driver")]
    checks += [_check("devices.free", "warn", "NPU 3 is used by python3",
                      observed="pid 4 on NPU 3", why="a second job fails to start")]
    checks += [_check("devices.count", "pass"), _check("devices.nodes", "skip", "no spec")]
    checks += [_check("selinux.labels", "skip", "no driver")]
    return Report(host="sim1", spec=SpecRef(name="910b", digest="ab" * 32), duration_s=0.5,
                  checks=checks).summarize()


def _text(report: Report) -> list[str]:
    buffer = io.StringIO()
    render_glance(report, Console(file=buffer, width=100, no_color=True, highlight=False))
    return buffer.getvalue().splitlines()


def test_a_category_a_line_problems_expanded_skips_folded() -> None:
    lines = _text(_report())
    assert lines[0] == "sim1  spec 910b (abababababab)"
    assert lines[1:] == [
        "✓ driver   7 checks",
        # devices comes before cann and env: the order an operator fixes things in
        "! devices.free: NPU 3 is used by python3",
        "    observed: pid 4 on NPU 3",
        "✓ devices  1 other check, 1 skipped: no spec",
        "- cann, env, selinux  skipped: no driver",
        "✗ env.set-env: set_env.sh is not sourced",
        "    observed: no CANN variables",
        "    expected: ASCEND_TOOLKIT_HOME set",
        "    fix: ascend-env doctor --fix --only env.set-env",
        "    or by hand: echo . set_env.sh",
        "sim1: 8 passed, 1 warning, 1 failed, 6 skipped in 0.50s",
    ]


def test_categories_skipped_for_other_causes_keep_their_own_lines() -> None:
    report = Report(host="h", checks=[
        _check("cann.a", "skip", "no driver"), _check("cann.b", "skip", "no spec"),
        _check("env.a", "skip", "no driver"), _check("python.a", "skip", "no spec"),
        _check("permissions.a", "skip", "no spec"), _check("permissions.b", "skip", "no driver"),
    ]).summarize()
    assert [(r.status, r.label, r.text) for r in glance_rows(report)] == [
        ("skip", "cann, permissions", "skipped: no driver; no spec"),
        ("skip", "env", "skipped: no driver"),
        ("skip", "python", "skipped: no spec"),
    ]


def test_an_unreachable_host_says_why() -> None:
    lines = _text(Report(host="sim9", reachable=False, error="ssh: connect refused"))
    assert lines == ["sim9", "✗ not checked: ssh: connect refused",
                     "sim9: not checked: ssh: connect refused"]


def _doctor(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "100"}
    return subprocess.run([sys.executable, "-m", "ascend_env", "doctor", *args],
                          capture_output=True, text=True, check=False, env=env, timeout=300)


def test_this_machine_without_an_npu_fits_in_16_lines_and_verbose_shows_every_check() -> None:
    document = json.loads(_doctor("--json").stdout)
    by_id = {check["id"]: check for check in document["checks"]}
    if by_id["driver.installed"]["status"] == "pass":
        pytest.skip("this machine has an NPU driver; the 16-line promise is for one without")
    shown = _doctor()
    lines = shown.stdout.splitlines()
    assert len(lines) <= 16, shown.stdout
    assert shown.returncode == (1 if any(c["status"] in ("fail", "error")
                                         for c in by_id.values()) else 0)
    for check in by_id.values():
        if check["status"] in ("fail", "error", "warn"):
            assert any(line.endswith(f" {check['id']}: {check['message']}") for line in lines)
    s = document["summary"]
    assert f": {s['pass']} passed" in lines[-1] and f"{s['skip']} skipped in" in lines[-1]
    # --verbose and the JSON keep every check: the view folds, the report does not.
    verbose = _doctor("--verbose").stdout
    listed = json.loads(subprocess.run(
        [sys.executable, "-m", "ascend_env", "doctor", "--list", "--json"], capture_output=True,
        text=True, check=True).stdout)
    level_one = {c["id"] for c in listed["checks"] if c["level"] == 1}
    assert set(by_id) == level_one
    assert all(f" {check_id}: " in verbose for check_id in by_id)
    assert len(verbose.splitlines()) > len(by_id)
