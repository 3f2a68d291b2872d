"""Shell safety of what ascend-env prints to paste (printed commands).

For each printed command, a POSIX shell's split of the text (shlex.split, after the
backslash-newline continuations a shell removes) is exactly the argv meant, hostile values
included: nothing in a value can end the command or start another.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest

from ascend_env.core.errors import UsageError
from ascend_env.core.resources import shipped_dir
from ascend_env.doctor.suite import DoctorContext, DoctorPlugin, Target, run_suite
from ascend_env.facts.assemble import facts_from_capture
from ascend_env.facts.capture import Capture
from ascend_env.facts.model import Facts
from ascend_env.image.runargs import (
    HostView,
    RunArgsRequest,
    check_image_reference,
    check_shm_size,
    run_args,
)
from ascend_env.spec.envspec import load_spec
from tests.cli_invoke import invoke
from tests.facts.captures import GOLDEN_HOSTS
from tests.hostile.badinput import MARK, runs_something

HOSTILE = ["-1 ; reboot", "$(reboot)", "`reboot`", "16g\nreboot", "16g && reboot", "16g|sh",
           "'16g'", "16 g", "-16g", "0", "0g", "16x", "", "\uff11\uff16g", "9" * 40]


def shell_split(printed: str) -> list[str]:
    """How sh splits a pasted text: `\\` + newline joins lines, then words."""
    return shlex.split(printed.replace("\\\n", ""))


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_shm_sizes_are_refused(value: str) -> None:
    with pytest.raises(UsageError, match="--shm-size"):
        check_shm_size(value)
    done = invoke("image", "run-args", "--device", "0", "--shm-size", value)
    assert done.code == 2, done
    assert "reboot" not in done.out  # nothing printed to paste
    assert "Traceback" not in done.out + done.err


@pytest.mark.parametrize("value", ["16g", "512m", "1073741824", "64K", "2gb", "1b"])
def test_sizes_docker_takes_are_kept(value: str) -> None:
    assert check_shm_size(value) == value


@pytest.mark.parametrize("image", ["x; reboot", "-v/:/host", "--privileged", "a b", "$(id)",
                                   "img\nreboot", "", "9" * 300, "img:", "img:-t", "img@x"])
def test_hostile_image_references_are_refused(image: str) -> None:
    with pytest.raises(UsageError, match="--image"):
        check_image_reference(image)
    done = invoke("image", "run-args", "--device", "0", "--image", image)
    assert done.code == 2, done
    assert "Traceback" not in done.out + done.err


@pytest.mark.parametrize("image", ["ascend-env/910b:8.5.0", "ubuntu:22.04",
                                   "localhost:5000/ns/img:v1", "img@sha256:" + "a" * 64])
def test_image_references_docker_takes_are_kept(image: str) -> None:
    assert check_image_reference(image) == image


def _hostile_spec(tmp_path: Path, install_path: str) -> object:
    """The 910b profile with an install path a shell would split, built past validation
    (values reach run-args from a spec another check may one day let through)."""
    spec = load_spec(profile="910b")
    return spec.model_copy(update={"install": spec.install.model_copy(
        update={"path": install_path})})


@pytest.mark.parametrize("install_path", ["/opt/Ascend dir", "/opt/$(reboot)", "/opt/a;reboot",
                                          "/opt/it's", "/opt/`id`"])
@pytest.mark.parametrize("runtime", ["docker", "podman", "ascend-docker-runtime"])
def test_run_lines_split_back_into_their_argv(tmp_path: Path, install_path: str,
                                              runtime: str) -> None:
    (tmp_path / "dev").mkdir()
    spec = _hostile_spec(tmp_path, install_path)
    result = run_args(RunArgsRequest(devices="0,1", runtime=runtime,  # type: ignore[arg-type]
                                     selinux="on", spec=spec, shm_size="16g"),  # type: ignore[arg-type]
                      HostView(root=tmp_path))
    assert any(install_path in a for a in result.args)  # the hostile value is in there
    assert shell_split(result.command_line("ascend-env/910b:8.5.0")) == \
        result.command_argv("ascend-env/910b:8.5.0")
    assert shell_split(" \\\n".join(result.paste_lines())) == result.args
    for line in result.paste_lines():  # each pasted line alone is one option and its value
        assert len(shell_split(line)) in (1, 2)


def test_printed_text_of_the_cli_splits_into_the_json_args() -> None:
    as_json = invoke("image", "run-args", "--device", "0-1", "--shm-size", "8g", "--json")
    assert as_json.code == 0, as_json
    args = json.loads(as_json.out)["args"]
    text = invoke("image", "run-args", "--device", "0-1", "--shm-size", "8g")
    assert shell_split(text.out) == args
    line = invoke("image", "run-args", "--device", "0-1", "--shm-size", "8g",
                  "--image", "ascend-env/910b:8.5.0")
    assert shell_split(line.out) == ["docker", "run", *args, "ascend-env/910b:8.5.0"]


# -- the doctor's "fix by hand" hints -------------------------------------------------------

HOSTILE_DIR = f"/opt/As cend;{MARK} $({MARK})'`{MARK}`"


def _hostile_facts(make: Callable[[], Capture]) -> Facts:
    """A golden host's facts with every host-reported value that reaches a hint made
    hostile: install paths, the framework interpreter, the driver's user and group."""
    facts = facts_from_capture(make())
    if facts.driver is not None:
        facts.driver.install_path = HOSTILE_DIR
    if facts.cann is not None:
        facts.cann.install_path = HOSTILE_DIR
        facts.cann.home = f"{HOSTILE_DIR}/cann"
        facts.cann.set_env = f"{HOSTILE_DIR}/set_env.sh"
    if facts.frameworks.python is not None:
        facts.frameworks.python.executable = f"{HOSTILE_DIR}/bin/python"
    facts.users.driver_user = f"hw;{MARK}"
    facts.users.driver_group = f"hw`{MARK}`"
    return facts


def test_fix_by_hand_hints_quote_what_the_host_reported() -> None:
    """Every hint of the real suite over the golden hosts, host values made hostile: none
    runs the hostile value, and the hints that are whole commands split back with the
    hostile value as one word."""
    hints: list[tuple[str, str]] = []
    for name, make in sorted(GOLDEN_HOSTS.items()):
        plugin = DoctorPlugin(DoctorContext(targets=[Target(name=name,
                                                            facts=_hostile_facts(make))],
                                            run_users=("alice",)))
        run_suite(shipped_dir("checks"), plugin)
        hints += [(row.id, row.fix.command) for row in plugin.results[name]
                  if row.fix is not None and row.fix.command]
    hostile = [(check, hint) for check, hint in hints if MARK in hint]
    assert len({check for check, _ in hostile}) >= 6, hostile  # the test reaches the hints
    unsafe = [(check, hint) for check, hint in hostile if runs_something(hint)]
    assert not unsafe, unsafe
    whole = {"python.cann-deps", "env.driver-libraries", "env.set-env", "selinux.labels",
             "permissions.run-users"}
    for check, hint in hostile:
        if check in whole:
            words = shlex.split(hint, comments=True)
            # env.set-env's word is itself a line for login shells: split it once more.
            inner = [x for w in words if w.startswith(". ") for x in shlex.split(w)]
            assert any(HOSTILE_DIR in w or "hw`" in w for w in words + inner), (check, words)
