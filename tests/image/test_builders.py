"""Running several commands in one container process: each keeps its status and output,
and none waits for another."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from ascend_env.image.builders import Completed, in_one_shell, split_framed


def test_commands_in_one_shell_keep_their_status_and_output() -> None:
    commands = [["sh", "-c", "printf out1; echo err1 >&2; exit 3"],
                ["printf", "%s\n", '{"a": "it\'s"}'],
                ["sh", "-c", "exit 0"]]
    done = subprocess.run(in_one_shell(commands), capture_output=True, text=True, check=False)
    assert split_framed(len(commands), done.returncode, done.stdout, done.stderr) == [
        Completed(3, "out1", "err1\n"), Completed(0, '{"a": "it\'s"}\n', ""),
        Completed(0, "", "")]


def test_a_shell_that_failed_gives_its_own_status_to_every_command() -> None:
    assert split_framed(2, 127, "", "sh: not found\n") == [
        Completed(127, "", "sh: not found\n"), Completed(127, "", "sh: not found\n")]


def test_the_commands_run_side_by_side() -> None:
    # The first command waits (boundedly) for a file only the second one writes: run one
    # after the other, the first would give up and fail.
    commands = [["sh", "-c", 'i=0; while [ ! -e "$0" ]; do i=$((i+1)); [ $i -gt 3000 ] && exit 9;'
                 ' sleep 0.01; done; echo seen', "{mark}"],
                ["sh", "-c", 'echo > "$0"', "{mark}"]]
    with tempfile.TemporaryDirectory() as tmp:
        mark = str(Path(tmp) / "mark")
        commands = [[part.replace("{mark}", mark) for part in c] for c in commands]
        done = subprocess.run(in_one_shell(commands), capture_output=True, text=True,
                              check=False)
    assert split_framed(2, done.returncode, done.stdout, done.stderr) == [
        Completed(0, "seen\n", ""), Completed(0, "", "")]
