"""Every `ascend-env` command line shown in README.md and docs/*.md parses with the real CLI.

A line is parsed the way the console script parses it (typer's click command, every option
type, choice, range, required option and extra argument checked), with each command's body
replaced by a no-op, so nothing runs. Where the lines are looked for:

- fenced blocks tagged `sh`, `bash` or `shell`: every line is shell (`\\` continues a line,
  `#` starts a comment, `|`, `>`, `&&` and `;` end a command);
- fenced blocks tagged `console`: the lines that start with `$ `;
- inline code spans that start with `ascend-env `.

A command is any simple command whose program is named `ascend-env` (`.venv/bin/ascend-env`
too). A line of another block (`text`, `yaml`, untagged) that starts with `ascend-env` fails the
test: commands are shown in `sh` or `console` blocks, where this test sees them. README.md
shows every command of the CLI at least once.
"""

from __future__ import annotations

import functools
import importlib
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer.main

from ascend_env.cli.app import app

REPO = Path(__file__).resolve().parents[2]
DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
SHELL_BLOCKS = {"sh", "bash", "shell"}
PROGRAM = "ascend-env"
FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([\w+-]*)")
INLINE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
OPERATORS = set("|&;<>()")

# typer 0.28 builds its commands on a vendored click; older releases on click itself.
try:
    _errors = importlib.import_module("typer._click.exceptions")
except ImportError:  # pragma: no cover - typer before it vendored click
    _errors = importlib.import_module("click.exceptions")
USAGE_ERROR: type[Exception] = _errors.UsageError


@dataclass(frozen=True)
class Shown:
    """One command line as a document shows it."""

    document: str
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.document}:{self.line}: {self.text}"


def _no_op(*_args: Any, **_kwargs: Any) -> None:
    """Stands in for a command's body: the line was parsed, nothing runs."""


@functools.cache
def _parse_only_cli() -> Any:
    """The real root command, every command's callback replaced by a no-op."""
    root = typer.main.get_command(app)
    pending = [root]
    while pending:
        command = pending.pop()
        command.callback = _no_op
        pending.extend(getattr(command, "commands", {}).values())
    return root


def rejection(args: list[str]) -> str | None:
    """Why the CLI rejects `ascend-env ARGS`, or None when it parses them."""
    try:
        _parse_only_cli().main(args=args, prog_name=PROGRAM, standalone_mode=False)
    except USAGE_ERROR as error:
        return str(error) or type(error).__name__  # NoArgsIsHelpError has no message
    return None


def _words(command_line: str) -> list[str]:
    """Shell words of one logical line, operators as words of their own, comments dropped."""
    lexer = shlex.shlex(command_line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    return list(lexer)


def invocations(command_line: str) -> Iterator[list[str]]:
    """The argument lists given to `ascend-env` in one shell line, redirections left out."""
    commands: list[list[str]] = [[]]
    redirected = False
    for word in _words(command_line):
        if set(word) <= OPERATORS:
            if word[-1] in "<>":
                redirected = True  # the next word is the redirection's target
            else:
                commands.append([])
        elif redirected:
            redirected = False
        else:
            commands[-1].append(word)
    for words in commands:
        programs = [i for i, word in enumerate(words) if Path(word).name == PROGRAM]
        if programs:
            yield words[programs[0] + 1:]


def _logical_lines(lines: list[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """Lines with their `\\` continuations joined, numbered by their first line."""
    start, pending = 0, ""
    for number, line in lines:
        if not pending:
            start = number
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        yield start, pending + line
        pending = ""
    if pending:
        yield start, pending


def shown_commands(document: Path, name: str) -> tuple[list[Shown], list[Shown]]:
    """(command lines shown, lines that look like commands but sit where they are not seen)."""
    shown: list[Shown] = []
    hidden: list[Shown] = []
    fence: str | None = None
    language = ""
    block: list[tuple[int, str]] = []
    for number, line in enumerate(document.read_text(encoding="utf-8").splitlines(), 1):
        opening = FENCE.match(line)
        if fence is None:
            if opening:
                fence, language, block = opening.group(2), opening.group(3).lower(), []
                continue
            shown += [Shown(name, number, span) for span in INLINE.findall(line)
                      if span.startswith(PROGRAM + " ")]
            continue
        if opening and opening.group(2).startswith(fence) and not opening.group(3):
            if language in SHELL_BLOCKS:
                shown += [Shown(name, n, text) for n, text in _logical_lines(block)
                          if text.strip()]
            fence = None
            continue
        block.append((number, line))
        if language == "console" and line.startswith("$ "):
            shown.append(Shown(name, number, line[2:]))
        elif language not in {*SHELL_BLOCKS, "console"} and line.lstrip().startswith(PROGRAM):
            hidden.append(Shown(name, number, line.strip()))
    return shown, hidden


def _scan(document: Path) -> tuple[list[Shown], list[Shown]]:
    return shown_commands(document, document.relative_to(REPO).as_posix())


def _all_shown() -> list[Shown]:
    return [line for document in DOCUMENTS for line in _scan(document)[0]]


def _documented_invocations() -> list[tuple[Shown, list[str]]]:
    return [(line, args) for line in _all_shown() for args in invocations(line.text)]


def _cases() -> list[Any]:
    return [pytest.param(line, args, id=str(line)) for line, args in _documented_invocations()]


def test_the_documents_show_commands() -> None:
    """The extraction finds what is there: a test over no lines would prove nothing."""
    found = _documented_invocations()
    assert {document.name for document in DOCUMENTS} >= {"README.md", "doctor.md"}
    assert len(found) >= 50
    assert {args[0] for _, args in found if args} >= {
        "--version", "profiles", "spec", "matrix", "plan", "fetch", "install", "doctor",
        "collect", "smoke", "image"}


@pytest.mark.parametrize(("line", "args"), _cases())
def test_documented_command_parses(line: Shown, args: list[str]) -> None:
    why = rejection(args)
    assert why is None, f"{line}\n  rejected: {why}"


def _command_paths(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Every runnable command of the CLI as its words: ("doctor",), ("image", "build"), ..."""
    children = getattr(command, "commands", None)
    if children is None:
        yield path
        return
    for name, child in children.items():
        yield from _command_paths(child, (*path, name))


def test_the_readme_shows_every_command() -> None:
    readme = [args for line in _scan(REPO / "README.md")[0] for args in invocations(line.text)]
    missing = [" ".join(path) for path in _command_paths(typer.main.get_command(app))
               if not any(tuple(args[:len(path)]) == path for args in readme)]
    assert not missing, f"README.md shows no example of: {', '.join(missing)}"


def test_commands_are_shown_where_this_test_sees_them() -> None:
    hidden = [str(line) for document in DOCUMENTS for line in _scan(document)[1]]
    assert not hidden, "put these in a ```sh or ```console block:\n" + "\n".join(hidden)


# The checker itself.

@pytest.mark.parametrize("line", [
    "ascend-env doctor --only env permissions",          # --only takes one id per flag
    "ascend-env doctor --level 4",                       # out of range
    "ascend-env plan --arch arm",                        # not a choice
    "ascend-env fetch --profile 910b --repo",            # --repo takes a folder
    "ascend-env smoke --device cpu",                     # --framework is required
    "ascend-env profiles show",                          # NAME is required
    "ascend-env image",                                  # a group, no command
    "ascend-env ranktable --hosts 2",                    # no such command
    "ascend-env install --profile 910b --reboot",        # no such option
])
def test_the_checker_rejects_what_the_cli_rejects(line: str) -> None:
    (args,) = invocations(line)
    assert rejection(args) is not None


@pytest.mark.parametrize("line", [
    "ascend-env --version",
    "ascend-env doctor --only env --only permissions",
    "ascend-env image run-args --device 0-3 --runtime ascend-docker-runtime",
])
def test_the_checker_accepts_what_the_cli_accepts(line: str) -> None:
    (args,) = invocations(line)
    assert rejection(args) is None


def test_shell_lines_are_split_like_a_shell() -> None:
    line = ("python3 -m venv .venv && .venv/bin/ascend-env plan --profile 910b --json "
            "> plan.json   # a comment --only x")
    assert list(invocations(line)) == [["plan", "--profile", "910b", "--json"]]
    assert list(invocations("ascend-env doctor --limit 'rack3*' | tee out.txt")) == [
        ["doctor", "--limit", "rack3*"]]
    assert list(invocations("bash scripts/test.sh")) == []


def test_the_extraction_sees_blocks_continuations_and_spans(tmp_path: Path) -> None:
    document = tmp_path / "page.md"
    document.write_text(
        "Run `ascend-env plan --profile 910b` first, not `plan` alone.\n"
        "```sh\nascend-env doctor \\\n  --only env\n```\n"
        "```console\n$ ascend-env matrix\nmatrix output\n```\n"
        "```text\nascend-env smoke --framework torch\n```\n", encoding="utf-8")
    shown, hidden = shown_commands(document, "page.md")
    assert [(s.line, s.text) for s in shown] == [
        (1, "ascend-env plan --profile 910b"), (3, "ascend-env doctor    --only env"),
        (7, "ascend-env matrix")]
    assert [(h.line, h.text) for h in hidden] == [(11, "ascend-env smoke --framework torch")]
