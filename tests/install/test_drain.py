"""`--drain-cmd` / `--undrain-cmd` templates (ascend_env/install/drain.py): split as a shell
splits them, the host one argument, run here with a timeout; real processes, no mocks."""

from __future__ import annotations

import pytest

from ascend_env.core.errors import UsageError
from ascend_env.install.drain import parse_template, run_for
from tests.cli_invoke import invoke


def test_a_template_names_the_host_and_splits_as_a_shell_would() -> None:
    command = parse_template("--drain-cmd", "kubectl drain '{host}' --reason 'NPU upgrade'")
    assert command is not None
    assert command.argv("node1; rm -rf /") == ["kubectl", "drain", "node1; rm -rf /",
                                               "--reason", "NPU upgrade"]
    assert parse_template("--drain-cmd", None) is None
    for bad in ("kubectl drain node1", "kubectl drain '{host}", ""):
        with pytest.raises(UsageError, match="--drain-cmd"):
            parse_template("--drain-cmd", bad)
    with pytest.raises(UsageError, match="positive"):
        parse_template("--drain-cmd", "echo {host}", 0)


def test_success_failure_and_a_missing_program_are_told_apart() -> None:
    ok = parse_template("--drain-cmd", "sh -c 'test \"$0\" = node1' {host}")
    assert ok is not None and run_for(ok, "node1") is None
    failed = run_for(ok, "node2")
    assert failed is not None and "failed (exit 1)" in failed and "node2" in failed
    said = parse_template("--undrain-cmd", "sh -c 'echo refused by scheduler; exit 3' {host}")
    assert said is not None
    assert run_for(said, "node1") == ("--undrain-cmd for node1 failed (exit 3): sh -c 'echo "
                                      "refused by scheduler; exit 3' node1: refused by "
                                      "scheduler")
    missing = parse_template("--drain-cmd", "no-such-drain-tool {host}")
    assert missing is not None
    assert run_for(missing, "node1") == ("--drain-cmd for node1: no-such-drain-tool was not "
                                         "found")


def test_a_drain_that_outlasts_its_timeout_is_stopped_and_says_so() -> None:
    slow = parse_template("--drain-cmd", "sh -c 'echo evicting; exec sleep 30' {host}", 0.5)
    assert slow is not None
    why = run_for(slow, "node1")
    assert why is not None and "did not finish in 0.5 s" in why and "evicting" in why


def test_the_cli_refuses_a_timeout_that_is_not_a_positive_number() -> None:
    done = invoke("install", "--host", "node1", "--drain-cmd", "kubectl drain {host}",
                  "--drain-timeout", "0")
    assert done.code == 2 and "--drain-timeout" in done.err
