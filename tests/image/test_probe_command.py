"""What validation runs in an image: the probes' own source text, nothing encoded or copied."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from ascend_env.core.resources import remote_source
from ascend_env.image import build
from ascend_env.image.builders import Completed, in_one_shell
from ascend_env.remote import image_probe
from ascend_env.targets.collect import MAX_ARGUMENT
from tests.image.stack import spec_for


class Recording:
    """A builder that keeps what it was asked to run and answers as an image without python3."""

    name = "buildah"
    storage = None

    def __init__(self) -> None:
        self.commands: list[list[str]] = []

    def run(self, image: str, commands: list[list[str]]) -> list[Completed]:
        self.commands += commands
        return [Completed(127, "", "sh: 1: python3: not found\n") for _ in commands]


def test_validation_runs_the_probes_source_as_it_is() -> None:
    builder = Recording()
    with pytest.raises(build.ImageValidationError, match="needs python3"):
        build.examine(builder, "img", spec_for(), "img")  # type: ignore[arg-type]
    image_run, host_run = builder.commands
    source = Path(image_probe.__file__).read_text(encoding="utf-8")
    assert image_run[:3] == ["python3", "-c", source]
    assert image_run[3:] == ["--install-path", "/usr/local/Ascend",
                             "--python", "/opt/ascend-env/venv/bin/python"]
    # The host probe as the doctor ships it: its source, quoted for the shell line.
    assert host_run[:2] == ["sh", "-c"] and shlex.quote(remote_source("probe")) in host_run[2]
    # Both travel in the one `sh -c` argument, which Linux bounds.
    assert len(in_one_shell(builder.commands)[2].encode()) < MAX_ARGUMENT


def test_the_image_probe_source_runs_as_python3_c() -> None:
    # `python3 -c` runs the text as __main__: its argument parser answers.
    command = build.image_probe_command(["--help"])
    done = subprocess.run([sys.executable, *command[1:]], capture_output=True, text=True,
                          check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "--install-path" in done.stdout and "--python" in done.stdout
