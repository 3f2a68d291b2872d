"""explain on hostile input: arbitrary bytes and lines, odd paths and targets never end in a
traceback or a hang; the exit code says what happened."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ascend_env.explain.match import default_matcher
from tests.cli_invoke import invoke

SIGNATURE_BITS = st.sampled_from([
    "EZ9999: Inner Error!", "error code is 507033", "retCode=0x7020014", "ret is -8005",
    "cannot open shared object file", "Traceback (most recent call last):", "[INFO] ok",
    "ERR00100 PTA call acl api failed", "EI0006", "\x00", "\r", "\u2028", "x" * 10000])
LINES = st.lists(st.one_of(st.text(max_size=200), SIGNATURE_BITS), max_size=30)


@settings(max_examples=60, deadline=None)
@given(LINES)
def test_any_text_scans_without_error(lines: list[str]) -> None:
    scan = default_matcher().scan([("t", "\n".join(lines))])
    assert all(h.count >= 1 and h.line_number >= 1 for h in scan.hits)
    assert all(u.line.strip() for u in scan.unknown)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=4096))
def test_any_file_is_exit_0_1_or_2_without_traceback(tmp_path: Path, data: bytes) -> None:
    log = tmp_path / "x.log"
    log.write_bytes(data)
    done = invoke("explain", str(log), "--json")
    assert done.code in (0, 1, 2)
    assert "Traceback" not in done.err


def test_odd_paths_and_targets_are_exit_2(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_text("dcmi module initialize failed. ret is -8005\n")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for args in (["explain", str(fifo)], ["explain", "/dev/null/x"],
                 ["explain", str(log), "--inventory", str(tmp_path / "none.ini")],
                 ["explain", str(log), "--host", "a", "--inventory", str(log)]):
        done = invoke(*args)
        assert done.code == 2, (args, done)
        assert "Traceback" not in done.err
