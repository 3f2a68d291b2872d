"""Reading the files a user names (specs, captures, catalogue overlays, inventories), bounded.

Every input is opened without blocking and checked with fstat before a byte is read: a FIFO
with no writer, /dev/zero or a directory is refused at once instead of hanging the command
or filling its memory. YAML is read by a loader that counts aliases, nesting and the size of
the document once aliases are expanded (a "billion laughs" file is a few hundred bytes that
expand to 10^9 nodes in whatever walks it next), and refuses duplicate keys, which PyYAML
otherwise resolves silently to the last one.
"""

from __future__ import annotations

import gzip
import io
import os
import stat
import zlib
from pathlib import Path
from typing import Any

import yaml

from ascend_env.core.errors import UsageError

# Larger than any real spec, overlay or inventory by far; a capture of a large fleet is
# bigger (each host's capture is some 100-300 KB of JSON), so captures get their own limit.
MAX_INPUT_BYTES = 8 * 1024 * 1024
MAX_CAPTURE_BYTES = 256 * 1024 * 1024
# YAML limits: a spec nests 3 levels, an inventory perhaps 10; aliases are rare in either.
MAX_YAML_DEPTH = 64
MAX_YAML_ALIASES = 256
MAX_YAML_NODES = 200_000  # after alias expansion
READ_CHUNK = 1024 * 1024


class InputError(UsageError):
    """An input file that cannot be read within the bounds (exit 2)."""


_KINDS = {stat.S_IFDIR: "a directory", stat.S_IFIFO: "a FIFO (named pipe)",
          stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
          stat.S_IFSOCK: "a socket"}


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words."""
    return _KINDS.get(stat.S_IFMT(mode), "not a regular file")


def read_bounded(path: Path | str, *, what: str, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of a regular file of at most `limit` bytes; anything else is an InputError.

    O_NONBLOCK makes opening a FIFO return at once (with or without a writer); the type is
    then read from the open descriptor, so a file swapped for a FIFO between a check and the
    open cannot slip through. The size is checked before reading and again while reading,
    since a file may grow under us.
    """
    name = os.fspath(path)
    if name == "":
        raise InputError(f"{what}: an empty path names no file")
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        raise InputError(f"cannot read {what} {name}: {exc.strerror or exc}") from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputError(f"cannot read {what} {name}: it is {file_kind(info.st_mode)}, "
                             "not a regular file")
        if info.st_size > limit:
            raise InputError(f"cannot read {what} {name}: {info.st_size} bytes, more than the "
                             f"{limit} this input may hold")
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, READ_CHUNK)
            if not chunk:
                break
            total += len(chunk)
            if total > limit:
                raise InputError(f"cannot read {what} {name}: more than the {limit} bytes "
                                 "this input may hold")
            chunks.append(chunk)
    except OSError as exc:
        raise InputError(f"cannot read {what} {name}: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)
    return b"".join(chunks)


def read_text(path: Path | str, *, what: str, limit: int = MAX_INPUT_BYTES) -> str:
    """A bounded regular file as UTF-8 text."""
    raw = read_bounded(path, what=what, limit=limit)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"cannot read {what} {os.fspath(path)}: not UTF-8 text "
                         f"(byte {exc.start})") from exc


def gunzip_bounded(raw: bytes, *, what: str, limit: int) -> bytes:
    """gzip data decompressed to at most `limit` bytes (a small .gz may expand a thousandfold)."""
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as stream:
            data = stream.read(limit + 1)
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"{what}: not valid gzip data ({exc})") from exc
    if len(data) > limit:
        raise InputError(f"{what}: decompresses to more than the {limit} bytes this input may "
                         "hold")
    return data


# -- YAML ------------------------------------------------------------------------------------

class YamlLimitError(yaml.YAMLError):
    """A YAML document that the loader refuses: beyond its limits, or a duplicate key."""

    def __init__(self, problem: str, mark: yaml.Mark | None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.problem_mark = mark


class YamlBoundError(YamlLimitError):
    """Too deep, too many aliases or too large expanded: not read at all (exit 2, as for an
    oversized file), where a duplicate key is a mistake in a document that was read."""


class BoundedComposer(yaml.SafeLoader):
    """PyYAML's safe loader with limits on nesting and aliases, and duplicate keys refused."""

    def __init__(self, stream: str | bytes) -> None:
        super().__init__(stream)
        self._depth = 0
        self._aliases = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_YAML_ALIASES:
                raise YamlBoundError(f"more than {MAX_YAML_ALIASES} aliases",
                                     self.peek_event().start_mark)  # type: ignore[no-untyped-call]
        self._depth += 1
        if self._depth > MAX_YAML_DEPTH:
            raise YamlBoundError(f"nested deeper than {MAX_YAML_DEPTH} levels",
                                 self.peek_event().start_mark)  # type: ignore[no-untyped-call]
        try:
            node: yaml.Node | None = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        return node

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # `<<:` merges are meant to be overridden by the keys beside them
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
                seen.add(key)
            except TypeError:
                continue  # an unhashable key: the base constructor reports it
            if duplicate:
                raise YamlLimitError(f"duplicate key {key!r} (the first value would be lost)",
                                     key_node.start_mark)
        mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return mapping


def _expanded_size(root: yaml.Node, *, duplicates: bool = False) -> int:
    """How many nodes the document has with every alias expanded, stopping at the limit;
    with `duplicates`, plain scalar keys repeated in one mapping are refused too (for YAML
    read only as nodes, whose constructor is another program's)."""
    sizes: dict[int, int] = {}
    active: set[int] = set()

    def size(node: yaml.Node) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in active:
            raise YamlBoundError("an alias refers to a node that contains it", node.start_mark)
        active.add(key)
        total = 1
        if isinstance(node, yaml.SequenceNode):
            for child in node.value:
                total += size(child)
                if total > MAX_YAML_NODES:
                    break
        elif isinstance(node, yaml.MappingNode):
            if duplicates:
                _no_duplicate_scalars(node)
            for key_node, value_node in node.value:
                total += size(key_node) + size(value_node)
                if total > MAX_YAML_NODES:
                    break
        active.discard(key)
        if total > MAX_YAML_NODES:
            raise YamlBoundError(f"more than {MAX_YAML_NODES} values once its aliases are "
                                 "expanded (an alias bomb?)", node.start_mark)
        sizes[key] = total
        return total

    return size(root)


def _no_duplicate_scalars(node: yaml.MappingNode) -> None:
    seen: set[tuple[str, str]] = set()
    for key_node, _ in node.value:
        if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
            key = (key_node.tag, key_node.value)
            if key in seen:
                raise YamlLimitError(f"duplicate key {key_node.value!r} (the first value would "
                                     "be lost)", key_node.start_mark)
            seen.add(key)


def compose_bounded(text: str) -> yaml.Node | None:
    """The YAML node tree of one document, within the limits; tags are not resolved, so this
    also checks YAML that another program (Ansible) will read with its own tags."""
    loader = BoundedComposer(text)
    try:
        node: yaml.Node | None = loader.get_single_node()
        if node is not None:
            _expanded_size(node, duplicates=True)
        return node
    finally:
        loader.dispose()


def load_yaml_bounded(text: str) -> Any:
    """One YAML document as Python values (safe types only), within the limits.

    Raises yaml.YAMLError (with `problem` and `problem_mark` where known) for bad YAML and
    for limits broken; the caller names the file.
    """
    loader = BoundedComposer(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _expanded_size(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def yaml_problem(exc: yaml.YAMLError) -> str:
    """A one-line description of a YAML error, with its line and column where known."""
    mark = getattr(exc, "problem_mark", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "unknown place"
    reason = getattr(exc, "problem", None) or str(exc)
    return f"{where}: {reason}"
