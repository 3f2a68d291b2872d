"""The bounded reader: regular files only, refused at once otherwise; sizes; YAML limits."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest
import yaml

from ascend_env.core.inputs import (
    MAX_YAML_DEPTH,
    InputError,
    YamlBoundError,
    YamlLimitError,
    compose_bounded,
    gunzip_bounded,
    load_yaml_bounded,
    read_bounded,
    read_text,
)

# The classic "billion laughs": 9 levels of 9 aliases, 9^9 strings once expanded.
BILLION_LAUGHS = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{name}: &{name} [{', '.join(['*' + chr(ord(name) - 1)] * 9)}]\n" for name in "bcdefghi")


def test_a_regular_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text("name: x\n")
    assert read_text(path, what="spec file") == "name: x\n"


def test_dev_zero_is_refused_without_reading() -> None:
    with pytest.raises(InputError, match="character device, not a regular file"):
        read_bounded("/dev/zero", what="spec file")


def test_a_fifo_without_a_writer_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    # Opened O_NONBLOCK and judged by fstat: a blocking open would wait here for a writer.
    with pytest.raises(InputError, match="FIFO"):
        read_bounded(fifo, what="capture")


def test_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="directory"):
        read_bounded(tmp_path, what="spec file")


def test_missing_and_empty_paths(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="No such file"):
        read_bounded(tmp_path / "absent", what="spec file")
    with pytest.raises(InputError, match="empty path"):
        read_bounded("", what="spec file")


def test_a_file_over_the_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_bytes(b" " * 1001)
    with pytest.raises(InputError, match="1001 bytes, more than the 1000"):
        read_bounded(path, what="spec file", limit=1000)
    assert len(read_bounded(path, what="spec file", limit=1001)) == 1001


def test_not_utf8_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"name: caf\xe9\n")
    with pytest.raises(InputError, match="not UTF-8"):
        read_text(path, what="spec file")


def test_gzip_is_decompressed_within_the_bound() -> None:
    packed = gzip.compress(b"x" * 10_000)  # some 40 bytes that expand 250-fold
    assert gunzip_bounded(packed, what="capture", limit=10_000) == b"x" * 10_000
    with pytest.raises(InputError, match="decompresses to more than the 9999"):
        gunzip_bounded(packed, what="capture", limit=9_999)
    with pytest.raises(InputError, match="not valid gzip"):
        gunzip_bounded(b"\x1f\x8b\x08garbage", what="capture", limit=100)


def test_the_billion_laughs_is_refused_before_it_is_expanded() -> None:
    with pytest.raises(YamlBoundError, match="alias bomb"):
        load_yaml_bounded(BILLION_LAUGHS)
    with pytest.raises(YamlBoundError, match="alias bomb"):
        compose_bounded(BILLION_LAUGHS)


def test_too_many_aliases_are_refused() -> None:
    text = "a: &a 1\nb: [" + ", ".join(["*a"] * 300) + "]\n"
    with pytest.raises(YamlBoundError, match="more than 256 aliases"):
        load_yaml_bounded(text)


def test_deep_nesting_is_refused_not_a_recursion_error() -> None:
    deep = "name: " + "[" * 5000 + "]" * 5000
    with pytest.raises(YamlBoundError, match=f"nested deeper than {MAX_YAML_DEPTH}"):
        load_yaml_bounded(deep)
    ok = "a: " + "[" * (MAX_YAML_DEPTH - 2) + "]" * (MAX_YAML_DEPTH - 2)
    assert load_yaml_bounded(ok) is not None


def test_a_recursive_alias_is_refused() -> None:
    with pytest.raises(YamlBoundError, match="contains it"):
        load_yaml_bounded("a: &a [*a]\n")


def test_duplicate_keys_are_errors_with_their_line() -> None:
    with pytest.raises(YamlLimitError, match="duplicate key 'name'") as caught:
        load_yaml_bounded("name: a\ndescription: b\nname: c\n")
    assert not isinstance(caught.value, YamlBoundError)  # a mistake in a document read
    assert caught.value.problem_mark is not None and caught.value.problem_mark.line == 2
    with pytest.raises(YamlLimitError, match="duplicate key 'x'"):
        load_yaml_bounded("outer:\n  x: 1\n  x: 2\n")
    with pytest.raises(YamlLimitError, match="duplicate key 'x'"):
        compose_bounded("all:\n  x: 1\n  x: !vault 2\n")


def test_merge_keys_may_be_overridden_and_safe_types_only() -> None:
    text = "base: &b {x: 1, y: 2}\nchild:\n  <<: *b\n  x: 3\n"
    assert load_yaml_bounded(text)["child"] == {"x": 3, "y": 2}
    with pytest.raises(yaml.YAMLError):
        load_yaml_bounded("a: !!python/object/apply:os.system [reboot]\n")


def test_compose_accepts_other_programs_tags() -> None:
    # Ansible's inventories carry `!vault` and `!unsafe`; composing leaves tags alone.
    assert compose_bounded("all:\n  vars:\n    secret: !vault |\n      $ANSIBLE_VAULT\n")
