"""os-release(5) values as a POSIX shell reads them, linear in their length."""

from __future__ import annotations

import json
import random
import shlex
from pathlib import Path

import pytest

from ascend_env.facts.capture import save_captures
from ascend_env.facts.system import parse_os_release, shell_words
from tests.cli_invoke import invoke
from tests.facts.captures import host_910b


@pytest.mark.parametrize(("value", "words"), [
    ('"Debian GNU/Linux 12 (bookworm)"', ["Debian GNU/Linux 12 (bookworm)"]),
    ("debian", ["debian"]),
    ("'a b' c", ["a b", "c"]),
    ('"a\\"b"', ['a"b']),
    ("a\\ b", ["a b"]),
    ('a"b c"d', ["ab cd"]),
    ('""', [""]),
    ("  spaced   out ", ["spaced", "out"]),
    # os-release(5): inside double quotes `$`, `"`, `\\` and backtick are escaped; a
    # backslash before anything else stays (shlex keeps it before `$` too: POSIX does not).
    ('"x\\$y\\z"', ["x$y\\z"]),
    ('"open', None),
    ("'open", None),
    ("trailing\\", None),
])
def test_shell_words(value: str, words: list[str] | None) -> None:
    assert shell_words(value) == words


def test_shell_words_agree_with_shlex_where_posix_does() -> None:
    """Random values without `$` and backticks (where shlex departs from POSIX): the same
    words, or the same refusal of an open quote."""
    rng = random.Random(7)
    for _ in range(5000):
        value = "".join(rng.choice("ab '\"\\\t") for _ in range(rng.randint(0, 14)))
        try:
            expected: list[str] | None = shlex.split(value)
        except ValueError:
            expected = None
        assert shell_words(value) == expected, repr(value)


def test_a_20_mb_value_is_read_whole() -> None:
    """shlex took minutes here (quadratic in a token's length); benchmarks/parsers.py shows
    the time growing with the length, not its square."""
    huge = "x" * 20_000_000
    release = parse_os_release(f'PRETTY_NAME="{huge}"\nID=debian\nVERSION_ID="12"\n')
    assert release.pretty_name == huge
    assert (release.id, release.version_id) == ("debian", "12")


def test_doctor_from_a_capture_with_a_20_mb_os_release(tmp_path: Path) -> None:
    capture = host_910b()
    capture = capture.model_copy(update={"files": {
        **capture.files, "/etc/os-release": 'ID=ubuntu\nPRETTY_NAME="' + "y" * 20_000_000 + '"\n'}})
    path = save_captures(tmp_path / "capture.json", [capture])
    result = invoke("doctor", "--from", str(path), "--json")
    assert result.code in (0, 1), result.err
    report = json.loads(result.out)
    assert report["checks"], "the capture was judged"
