"""One word for one thing across the commands (docs/cli.md), and the old spellings: still
working for one release, each use warned."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.main import get_command

from ascend_env.cli.app import app
from ascend_env.cli.renamed import RENAMED, modernize
from tests.cli_invoke import invoke


def _options(*words: str) -> set[str]:
    """Every option spelling of the command `words`."""
    command = get_command(app)
    for word in words:
        command = command.commands[word]  # type: ignore[attr-defined]
    return {name for param in command.params for name in getattr(param, "opts", [])
            + getattr(param, "secondary_opts", [])}


@pytest.mark.parametrize("words", [("doctor",), ("collect",), ("smoke",), ("install",),
                                   ("rollback",), ("explain",), ("perf",), ("ranktable",)])
def test_fleet_options_have_one_spelling_and_ansibles_short_forms(words: tuple[str, ...]
                                                                  ) -> None:
    options = _options(*words)
    assert {"--inventory", "-i", "--limit", "-l"} <= options
    assert "--host" in options or words == ("ranktable",)


@pytest.mark.parametrize(("words", "concept"), [
    (("fetch",), {"--repo"}), (("install",), {"--repo", "--check", "-C", "-e"}),
    (("rollback",), {"--repo", "--check", "-C", "-e"}),
    (("image", "build"), {"--repo"}), (("doctor",), {"--check", "-C"}),
    (("smoke",), {"--device"}), (("image", "run-args"), {"--device"}),
    (("image", "validate"), {"--device"}),
])
def test_one_word_per_concept(words: tuple[str, ...], concept: set[str]) -> None:
    options = _options(*words)
    assert concept <= options
    assert not {"--dest", "--dry-run", "--devices"} & options


@pytest.mark.parametrize(("argv", "expected"), [
    (["fetch", "--profile", "910b", "--dest", "r"], ["fetch", "--profile", "910b", "--repo", "r"]),
    (["fetch", "--dest=r"], ["fetch", "--repo=r"]),
    (["doctor", "--fix", "--dry-run"], ["doctor", "--fix", "--check"]),
    (["image", "run-args", "--devices", "0"], ["image", "run-args", "--device", "0"]),
])
def test_old_spellings_are_rewritten_with_a_warning(argv: list[str], expected: list[str]
                                                    ) -> None:
    new, warnings = modernize(argv)
    assert new == expected
    assert len(warnings) == 1 and "deprecated" in warnings[0]


@pytest.mark.parametrize("argv", [
    ["perf", "--", "python", "train.py", "--dest", "x"],  # the job's own arguments
    ["smoke", "--dest", "x"],                             # not a rename of this command
    ["install", "--dry-run"],
])
def test_what_is_not_an_old_spelling_is_left_alone(argv: list[str]) -> None:
    assert modernize(argv) == (argv, [])


def test_every_renamed_word_exists_in_its_command() -> None:
    for words, names in RENAMED.items():
        options = _options(*words)
        for old, new in names.items():
            assert new in options and old not in options, (words, old)


def test_an_old_spelling_still_works_end_to_end(tmp_path: Path) -> None:
    result = invoke("image", "run-args", "--profile", "910b", "--devices", "0", "--selinux",
                    "off")
    assert result.code == 0, result.err
    assert "--device" in result.err and "deprecated" in result.err
    assert "/dev/davinci0" in result.out


def test_install_refuses_a_container_target_by_name(tmp_path: Path) -> None:
    result = invoke("install", "--profile", "910b", "--repo", str(tmp_path),
                    "--host", "docker://ctr")
    assert result.code == 2
    assert "Ansible reaches hosts over ssh" in result.err and "Traceback" not in result.err


def test_doctor_fix_refuses_a_container_target_by_name() -> None:
    result = invoke("doctor", "--fix", "--host", "podman://ctr")
    assert result.code == 2
    assert "doctor --fix --host podman://ctr" in result.err
