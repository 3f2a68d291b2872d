"""Running several commands in one container process: each keeps its status and output."""

from __future__ import annotations

import subprocess

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
