"""Report model and renderers: terminal, JSON, JUnit XML, Prometheus textfile."""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from rich.console import Console

from ascend_env.doctor.report import (
    CheckResult,
    FixRef,
    FleetReport,
    Report,
    SpecRef,
    render_fleet,
    render_json,
    render_junit,
    render_prometheus,
    render_terminal,
    summary_line,
    write_atomic,
)


def _report(host: str = "sim1", *, broken: bool = True) -> Report:
    checks = [
        CheckResult(id="driver.installed", title="the NPU driver is installed",
                    category="driver", status="pass", observed="driver 25.5.0"),
        CheckResult(id="devices.free", title="no foreign process holds a device",
                    category="devices", status="warn", message="NPU 3 is used by python3",
                    observed="pid 436712 python3 on NPU 3"),
        CheckResult(id="cann.installed", title="CANN is installed", category="cann",
                    status="skip", message="the driver is not installed"),
    ]
    if broken:
        checks.append(CheckResult(
            id="env.driver-libraries", title="driver libraries resolve", category="env",
            status="fail", message="libascend_hal.so is not on the library path",
            observed="not in ldconfig -p", expected="libascend_hal.so resolvable",
            why="torch_npu fails with ImportError: libascend_hal.so",
            fix=FixRef(id="ld-library-path", command="echo /usr/local/Ascend/driver/lib64 "
                       "> /etc/ld.so.conf.d/ascend.conf && ldconfig")))
    return Report(host=host, spec=SpecRef(name="910b", digest="ab" * 32), started="t0",
                  duration_s=0.5, checks=checks).summarize()


def _text(render: object, *args: object) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, width=200, no_color=True, highlight=False)
    render(*args, console)  # type: ignore[operator]
    return buffer.getvalue()


def test_summary_counts_and_exit_codes() -> None:
    report = _report()
    assert report.summary == {"pass": 1, "warn": 1, "fail": 1, "skip": 1, "error": 0}
    assert report.exit_code() == 1
    assert _report(broken=False).exit_code() == 0  # warnings allowed
    unreachable = Report(host="sim9", reachable=False, error="ssh: connect refused")
    assert unreachable.exit_code() == 2
    assert summary_line(report) == "sim1: 1 passed, 1 warning, 1 failed, 1 skipped in 0.50s"
    assert summary_line(unreachable) == "sim9: not checked: ssh: connect refused"


def test_terminal_groups_by_category_with_marks_and_fix() -> None:
    out = _text(render_terminal, _report())
    lines = out.splitlines()
    # Categories appear in fixing order: driver before devices before cann before env.
    order = [line.strip() for line in lines if line.strip() in ("driver", "devices", "cann",
                                                                "env")]
    assert order == ["driver", "devices", "cann", "env"]
    assert "[✓] driver.installed: the NPU driver is installed (driver 25.5.0)" in out
    assert "[!] devices.free: NPU 3 is used by python3" in out
    assert "[✗] env.driver-libraries: libascend_hal.so is not on the library path" in out
    assert "[-] cann.installed: the driver is not installed" in out
    assert "fix: ascend-env doctor --fix --only env.driver-libraries" in out
    assert "or by hand: echo /usr/local/Ascend/driver/lib64" in out
    assert lines[-1].startswith("sim1: 1 passed")


def test_json_has_schema_and_design_fields() -> None:
    doc = json.loads(render_json(_report()))
    assert doc["schema"] == "ascend-env/report/v1"
    assert set(doc) >= {"schema", "host", "spec", "level", "started", "duration_s", "summary",
                        "checks"}
    check = doc["checks"][3]
    assert set(check) >= {"id", "title", "category", "status", "observed", "expected",
                          "message", "fix", "evidence"}
    assert check["fix"] == {"id": "ld-library-path", "command": check["fix"]["command"],
                            "applied": None}
    assert Report.model_validate(doc) == _report()


def test_fleet_table_marks_unreachable_and_broken_hosts() -> None:
    fleet = FleetReport(hosts=[_report("sim1", broken=False), _report("sim2"),
                               Report(host="sim3", reachable=False, error="timed out")],
                        duration_s=1.0).summarize()
    assert fleet.summary == {"hosts": 3, "ok": 1, "failed": 1, "unreachable": 1,
                             "fleet_failed": 0}
    assert fleet.exit_code() == 2
    out = _text(render_fleet, fleet)
    rows = {line.split()[0]: line for line in out.splitlines() if line.startswith("sim")
            and "[" not in line and ":" not in line.split()[0]}
    assert rows["sim1"].split()[-1] == "ok"
    assert "✗ 1" in rows["sim2"] and rows["sim2"].split()[-1] == "failed"
    assert rows["sim3"].split()[-1] == "unreachable"
    assert "sim2 env.driver-libraries: libascend_hal.so is not on the library path" in out
    assert "sim3: unreachable: timed out" in out
    assert "3 host(s): 1 ok, 1 failed, 1 unreachable" in out
    assert FleetReport(hosts=[_report(broken=False)]).exit_code() == 0


def test_fleet_writes_a_finding_shared_by_hosts_once() -> None:
    """Hosts installed alike fail alike: one block per distinct finding, with its hosts."""
    alike = [_report(f"node{i:02d}") for i in range(1, 11)]
    odd = _report("node11")
    odd.checks[-1] = odd.checks[-1].model_copy(update={"observed": "a broken link"})
    out = _text(render_fleet, FleetReport(hosts=[*alike, odd], duration_s=1.0).summarize())
    message = "env.driver-libraries: libascend_hal.so is not on the library path"
    assert [line for line in out.splitlines() if line.startswith(("[✗]", "[!]"))] == [
        f"[✗] node01, node02, node03, node04, node05, node06 and 4 more hosts {message}",
        f"[✗] node11 {message}",
        "[!] all 11 hosts devices.free: NPU 3 is used by python3",
    ]
    assert out.count("why: torch_npu fails") == 2
    assert "      observed: a broken link" in out and "      observed: not in ldconfig -p" in out
    assert "11 host(s): 0 ok, 11 failed, 0 unreachable" in out
    every = _text(render_fleet, FleetReport(hosts=[*alike[:3], Report(
        host="gone", reachable=False, error="timed out")], duration_s=1.0).summarize())
    assert f"[✗] all 3 hosts {message}" in every and "gone: unreachable: timed out" in every


def test_junit_counts_failures_skips_and_unreachable() -> None:
    xml = render_junit([_report(), Report(host="sim3", reachable=False, error="down")])
    root = ET.fromstring(xml)
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("errors"),
            root.get("skipped")) == ("5", "1", "1", "1")
    suite = root.find("testsuite[@name='sim1']")
    assert suite is not None
    failure = suite.find("testcase[@name='env.driver-libraries']/failure")
    assert failure is not None and failure.get("message", "").startswith("libascend_hal.so")
    assert "fix: ascend-env doctor --fix" in (failure.text or "")
    warn_out = suite.find("testcase[@name='devices.free']/system-out")
    assert warn_out is not None and (warn_out.text or "").startswith("WARNING")


def test_prometheus_textfile_format() -> None:
    text = render_prometheus([_report(), Report(host='we"ird\\host', reachable=False,
                                                error="x")], now=1700000000.5)
    assert text.endswith("\n")
    sample = re.compile(r'^[a-z_]+\{([a-z_]+="([^"\\]|\\.)*",?)*\} -?[0-9.e+]+$')
    for line in text.splitlines():
        assert line.startswith("# ") or sample.match(line), line
    assert 'ascend_env_doctor_up{host="sim1"} 1' in text
    assert 'ascend_env_doctor_up{host="we\\"ird\\\\host"} 0' in text
    assert ('ascend_env_check_status{host="sim1",check="env.driver-libraries",'
            'category="env",status="fail"} 1') in text
    assert 'ascend_env_doctor_checks{host="sim1",status="fail"} 1' in text
    assert text.count("# TYPE ascend_env_check_status gauge") == 1
    assert 'ascend_env_doctor_last_run_timestamp_seconds{host="sim1"} 1700000000.5' in text


def test_write_atomic_replaces_whole_file(tmp_path: Path) -> None:
    target = tmp_path / "ascend.prom"
    target.write_text("old\n")
    write_atomic(target, "new\n")
    assert target.read_text() == "new\n"
    assert [p.name for p in tmp_path.iterdir()] == ["ascend.prom"]
    assert target.stat().st_mode & 0o777 == 0o644
