"""Nothing read from garbage is a pass: a capture whose every file and command output is
garbage (the texts of test_samples.GARBAGE) passes only the checks that judge what the probe
saw on disk (paths, links, modes), never one that judges a text it could not read."""

from __future__ import annotations

import pytest

from ascend_env.doctor.run import DoctorOptions, evaluate
from ascend_env.facts.capture import Capture
from ascend_env.spec.envspec import load_spec
from ascend_env.targets.collect import Captured
from tests.facts.captures import host_910b
from tests.facts.test_samples import GARBAGE

# Checks that read no text: each judges paths the probe stat()ed, which garbage leaves alone.
ON_DISK = {
    "cann.installed": "the toolkit's folder exists (its version is judged by cann.version)",
    "cann.linked": "the `latest` link resolves",
    "cann.set-env": "set_env.sh exists",
    "driver.installed": "the driver folder exists (driver.version judges its version)",
    "driver.complete": "the driver's tools are present",
    "firmware.installed": "the firmware's files exist (firmware.version judges the version)",
    "permissions.device-nodes": "owner, group and mode of /dev/davinci*",
}


def garbled(text: str) -> Capture:
    """The provisioned 910B host with every file and command output replaced by `text`."""
    capture = host_910b()
    return capture.model_copy(update={
        "files": dict.fromkeys(capture.files, text),
        "commands": {key: result.model_copy(update={"stdout": text})
                     for key, result in capture.commands.items()}})


@pytest.mark.parametrize("text", GARBAGE, ids=range(len(GARBAGE)))
def test_garbage_passes_no_check_that_reads_text(text: str) -> None:
    report = evaluate([Captured(name="garbled", capture=garbled(text))],
                      DoctorOptions(spec=load_spec(profile="910b")))[0]
    passed = {check.id for check in report.checks if check.status == "pass"}
    assert sorted(passed - set(ON_DISK)) == []
    # The text-reading checks say they could not judge, rather than vanish.
    assert any(check.status in ("warn", "fail") for check in report.checks)


def test_the_same_host_read_right_passes_text_checks() -> None:
    """The rule is not vacuous: the host's real outputs pass checks that read text."""
    report = evaluate([Captured(name="host", capture=host_910b())],
                      DoctorOptions(spec=load_spec(profile="910b")))[0]
    passed = {check.id for check in report.checks if check.status == "pass"}
    assert passed - set(ON_DISK)
