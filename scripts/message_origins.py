"""Write ascend_env/data/signatures/origins/messages.tsv.gz: the messages the stack's own sources
raise or log as errors, each with the package whose code raises it (explain's origins.py).

A message is read as its template: the literal parts of the string a `raise XError(...)`,
`logger.error(...)` or `assert ..., msg` passes (Python, read with `ast`), or of the string
literals inside `TORCH_CHECK(...)`, `OP_LOGE(...)`, `throw ...(...)` and the other error macros
(C++), with every substituted value (`{x}`, `%s`, `<< x <<`) a gap. Parts shorter than four
characters are gaps too, and a template is kept only when one part is at least MIN_ANCHOR (24)
characters long and has a space in it (a sentence, not a name), since such parts alone are what
a line is screened by.

The sources are pinned: a git commit of a public repository, or a package file (from PyPI, or
PyTorch's own index) with its sha256. Nothing is fetched here; pass where they are:

    python scripts/message_origins.py --mirror /work/.mirror --archives /work/srcs \
        --archives /opt/wheels

`--mirror DIR` holds git repositories as `DIR/<owner>+<name>/repo` (each commit below is read
with `git archive`), `--archives DIR` (one or more) the packages by their file names (each is
verified against its sha256 before it is opened). The output is sorted and its gzip header
carries no time, so the same sources give the same bytes.
"""

from __future__ import annotations

import argparse
import ast
import gzip
import hashlib
import io
import re
import subprocess
import sys
import tarfile
import urllib.parse
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ascend_env.explain.origins import MIN_ANCHOR

OUT = Path(__file__).resolve().parent.parent / "ascend_env" / "data" / "signatures" / \
    "origins" / "messages.tsv.gz"
MIN_PART = 4
MAX_SOURCE_FILE = 4 << 20  # a generated table or a vendored blob is not a message source
SKIP_DIRS = {"test", "tests", "examples", "docs", "benchmarks", ".git", "third_party"}


@dataclass(frozen=True)
class Source:
    ident: str  # a short name, the table's first column
    package: str  # the package whose code raises the messages (as an answer names it)
    family: str  # the family (an area of areas.yaml) its messages belong to
    url: str  # the repository, or the PyPI file
    pin: str  # the git commit, or the file's sha256
    subdir: str = ""  # the part of the tree read
    # Paths under which another family's messages live: torch_npu's process group is HCCL's.
    families: tuple[tuple[str, str], ...] = ()


PYPI = "https://files.pythonhosted.org/packages/"
# The family of the base layer's sources (PyTorch's): their messages are not written, and a
# template whose screening parts are all theirs too is dropped, since whichever Ascend package
# repeats such a message (`'X' object has no attribute 'y'`, `Constraints violated`), the
# message says nothing of which one raised it.
COMMON = "-"


def _git(repo: str, tag: str, commit: str, package: str, family: str, *, subdir: str = "",
         families: tuple[tuple[str, str], ...] = ()) -> Source:
    return Source(ident=f"{repo.split('/')[1]}@{tag}", package=package, family=family,
                  url=f"https://github.com/{repo}", pin=commit, subdir=subdir,
                  families=families)


def _vllm_ascend(tag: str, commit: str) -> Source:
    return _git("vllm-project/vllm-ascend", tag, commit, "vLLM Ascend", "vllm_ascend")


def _torch_npu(branch: str, commit: str) -> Source:
    # Only torch_npu/: the mirror lacks some large test blobs. Its process group is HCCL's.
    return _git("Ascend/pytorch", branch, commit, "torch_npu", "torch_npu", subdir="torch_npu",
                families=(("csrc/distributed/", "hccl"),))


# The newest of each line first: a message kept once cites the first source that raises it.
SOURCES: tuple[Source, ...] = (
    *(_vllm_ascend(tag, commit) for tag, commit in (
        ("main", "182b75ea84ff13ece27b57391331ef8935410aea"),
        ("v0.23.0", "5cb98caaadeff42b5b62b996e34bb2aaa29d20fd"),
        ("v0.18.0", "e18643f8a4d5bd9990727654318ad069ea0b56e2"),
        ("v0.13.0", "6281c1207a7a499e9f23a42b3a1e7027469f2b10"),
        ("v0.11.0", "2f1aed98ccdb0fcbe1ff4fd0abab225bfd8d0367"),
        ("v0.10.1rc1", "7e16b4a7cdb15723c63c1c0efe58672a056eace8"),
        ("v0.9.1", "0740d10211fcdcaa00d29e8659d7de892f5ed4d8"),
        ("v0.7.3", "779eebb8021ede2a4434769ffd84e426c4d29fbb"))),
    *(Source(ident=f"vllm@{version}", package="vLLM", family="vllm_ascend",
             url=f"{PYPI}{path}/vllm-{version}.tar.gz", pin=digest, subdir=f"vllm-{version}/vllm")
      for version, path, digest in (
        ("0.34.0", "92/21/6e0b077dc4a0b28f5a8ce8bb352a38d7196650d681fd4faa87f8dc622eff",
         "fcad848b246a9d8652b47e6425af92334dc02492f9802720f54e27b823cf0113"),
        ("0.30.0", "3d/88/fc455e2e8cd81764a81027a7464f775a7d613e6c95ac00e23b47824bf10d",
         "5f8f4e890c042ffa1c3e103f81c35e2d96f60a0a175ac43a4adbae7006bef62b"),
        ("0.25.0", "eb/2e/5d1045b25c819000250c0701ea3f8164247cb14f21ca816871dca31f3afa",
         "7e04e2b37164de8c4012f27f75af6c4768039b32610865e9b6fb8c49c34a84aa"),
        ("0.20.0", "e7/80/9798ce5e16af5754183ef33a63dc27017e2b51c87f51cc741832ce47a2d5",
         "a6d50152936ee292455af3ffbe359f7a284ac43bf3b68caccf29f368e196cc72"),
        ("0.18.0", "39/a9/ed48c497572a41552cc71b5ede15291d882c546a01df27ed42944eb3b3ad",
         "9a1bee091db8dbb4664a2a09cd9c61912e9912a44af1ce12b8593a231d05971c"),
        ("0.16.0", "e6/fa/ab31c88afd21b69a46c3cc80d4017a2d5045a30cc4862dba6eae6eca7865",
         "1f684bb31fbef59d862e2fe666e23a41f1d39d93f86215ce1ce1db89a8f5665b"),
        ("0.14.0", "01/fd/abb7391e8cb5cb729ae770946b4f61b9e9b56bac8805e7baeaed651378d5",
         "ed86c6a9d22fbfd059648794493cad88444c71688f3ff6efcb26c5ca353f0e5d"),
        ("0.12.0", "3d/70/ce6104d49a8139d055fbe4db3ddbb4e670be2f5db2172e590623efb26537",
         "dc2863be80260f378f1e72f9b82b4009610e434d05fdd7067383b231b89c4f4a"),
        ("0.11.0", "82/5a/36d2351206f4d8d871b10780f874d03957985e08298d430cc837723e07af",
         "f435a64c24e9c4178d657a76f8edd8548ddc444012f7d06a9f79ac3a6392bfae"),
        ("0.10.1.1", "ae/a8/b53e7950c05bf8e6ef4438603a70c8992e7bc90fcad5a7a4f360c7d748a6",
         "3099824ee4bdaa14c4c4f7178a092101a0ec206d4c9371edf295849b2b730a39"),
        ("0.9.2", "35/89/2fbf95d398b5751b44c7256bd80e57c589142f1bfcc15f5dc76438b8853a",
         "6b0d855ea8ba18d76364c9b82ea94bfcaa9c9e724055438b5733e4716ed104e1"),
        ("0.8.5", "5c/37/7846c244e6637c15f6d5ed6d3f572eedd02ed8ab80aec8c3eb228f35b23c",
         "c7e04d1046304397b4580334038b558fe491af155fdea508224f140172cf9a82"),
        ("0.7.3", "f5/73/87825ee293f0e721eb8aadbd0cf9c3436d4e3b3458322878f1f6e7398a0d",
         "841cc30bd4ffbc037e8b8bf6dbacbedc60cc0b2abb60366873b185159a1204e6"))),
    *(_torch_npu(branch, commit) for branch, commit in (
          ("master", "9e73e708ab9350d203475609f36f8a43f6a0c2ab"),
          ("v2.8.0", "c4194988d3c830375abf08e01d5bec3fe6a86406"),
          ("v2.7.1", "adc41e6967f521d01cade4f47a2123def486115a"),
          ("v2.6.0", "6e194f85c0f10124e336c21e626acd0e828a6f93"),
          ("v2.5.1", "5d1912eb5495a8256755f80c7459210bb6c3dec4"),
          ("v2.1.0", "82f7ccc5b8f455fbeb8ab797cdc795d886dc0eab"))),
    Source(ident="mindspore@2.7.0", package="mindspore", family="mindspore",
           url=f"{PYPI}34/e5/7ccc46d2b3e9ac7e1d4ab70846f97d747c20f55aa2c40f46b3ca699dd5cd/"
               "mindspore-2.7.0-cp311-cp311-manylinux1_x86_64.whl",
           pin="0051ecfc36b682df2e113b3e43c442f856509f567945d077c5728cd8e45b1f53",
           subdir="mindspore"),
    # The base layer: its messages say nothing of which Ascend package raised them (COMMON).
    Source(ident="torch@2.13.0", package="PyTorch", family=COMMON,
           url="https://download.pytorch.org/whl/cpu/"
               "torch-2.13.0%2Bcpu-cp311-cp311-manylinux_2_28_x86_64.whl",
           pin="6746dbcbeb526eb61330b76b41ff1b4eb848951103a892eeb080dfa2b264667b",
           subdir="torch"),
    _git("hicann/ops-transformer", "master", "c29bc1069d3252c641e2aa059ec88f392d3f05ac",
         "CANN ops-transformer", "cann"),
    _git("hicann/ops-nn", "master", "e5c3fa9327ea95ba26d06227e746923580d10921",
         "CANN ops-nn", "cann"),
    _git("hicann/hccl", "master", "09300b70df9a031339f08e5f2ca06d7bf294d009", "HCCL", "hccl"),
    _git("hicann/driver", "master", "ef377e950a32b1641c108c59481e39e9643b7d63",
         "the NPU driver", "driver"),
    _git("triton-lang/triton-ascend", "main", "a84b1eb52b6215e2c171632f2df0892f1003cfc8",
         "triton-ascend", "compilers"),
)

# Where a substituted value stands in a format string: printf's conversions, `{}`/`{name}`.
FORMAT = re.compile(r"%[-+ #0]*\d*(?:\.\d+)?(?:hh|h|ll|l|z|j|t|L|q)?[diouxXeEfgGcspa]"
                    r"|\{[^{}]{0,40}\}|%%")
PY_LOG = {"error", "exception", "critical", "fatal", "warning", "warn", "warning_once",
          "error_once"}
CXX_CALL = re.compile(
    r"\b(?:TORCH_CHECK\w*|AT_ERROR|TORCH_NPU_\w*|OP_LOGE\w*|OP_CHECK\w*|\w*ERR_REPORT\w*"
    r"|\w*LOGE\w*|\w*LOG_ERROR\w*|GELOGE|HCCL_ERROR|CHK_PRT\w*|REPORT_\w*ERROR\w*"
    r"|throw\s+[\w:]+|\w*_ERROR_MSG\w*|AT_ASSERT\w*|NPU_CHECK\w*|ASSERT\w*|LOG\(ERROR\)"
    r"|\w*ERROR_LOG\w*|\w*RAISE\w*)\s*[(<{]")
CXX_STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
MAX_CALL = 3000  # characters of a macro's arguments read


Parts = list[str | None]  # literal parts; None is a gap


def _format_parts(text: str) -> Parts:
    parts: Parts = []
    at = 0
    for found in FORMAT.finditer(text):
        parts += [text[at:found.start()], None]
        at = found.end()
    return [*parts, text[at:]]


def _python_parts(node: ast.expr) -> Parts:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return _format_parts(node.value)
    if isinstance(node, ast.JoinedStr):
        return [v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else None
                for v in node.values]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _python_parts(node.left) + _python_parts(node.right)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return _python_parts(node.left)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr == "format":
        return _python_parts(node.func.value)
    return [None]


def _called(func: ast.expr) -> str:
    return func.id if isinstance(func, ast.Name) else \
        func.attr if isinstance(func, ast.Attribute) else ""


def python_messages(text: str) -> Iterator[tuple[int, Parts]]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args:
            name = _called(node.func)
            if name.endswith(("Error", "Exception")) or name in PY_LOG:
                yield node.lineno, _python_parts(node.args[0])
        elif isinstance(node, ast.Assert) and node.msg is not None:
            yield node.lineno, _python_parts(node.msg)


def _call_end(text: str, start: int) -> int:
    """The end of the macro call opened at `start`: its closing bracket, or the statement's
    end, skipping string literals."""
    depth, at, end = 0, start, min(len(text), start + MAX_CALL)
    while at < end:
        char = text[at]
        if char == '"':
            at += 1
            while at < end and text[at] != '"':
                at += 2 if text[at] == "\\" else 1
        elif char in "(<{":
            depth += 1
        elif char in ")}":
            depth -= 1
            if depth == 0:
                return at
        elif char == ";" and depth <= 1:
            return at
        at += 1
    return at


def cxx_messages(text: str) -> Iterator[tuple[int, Parts]]:
    for call in CXX_CALL.finditer(text):
        span = text[call.end() - 1:_call_end(text, call.end() - 1)]
        parts: Parts = []
        last: int | None = None
        for literal in CXX_STRING.finditer(span):
            if last is not None and span[last:literal.start()].strip():
                parts.append(None)  # `"a" << value << "b"`, or arguments between literals
            raw = literal.group(1)
            parts += _format_parts(raw.encode().decode("unicode_escape", errors="replace")
                                   if "\\" in raw else raw)
            last = literal.end()
        if parts:
            yield text.count("\n", 0, call.start()) + 1, parts


def template(parts: Parts) -> tuple[str, ...] | None:
    """The literal parts, whitespace collapsed, short ones dropped; None when no part is a
    sentence long enough to screen a line by."""
    literals: list[str] = []
    joined = False  # the last part is still open (no gap since)
    for part in parts:
        text = " ".join(part.split()) if part is not None else ""
        if len(text) < MIN_PART or "\t" in text:
            joined = False
            continue
        if joined:
            literals[-1] += text
        else:
            literals.append(text)
        joined = True
    if not any(len(p) >= MIN_ANCHOR and " " in p for p in literals):
        return None
    return tuple(literals)


def tree_files(source: Source, mirror: Path, archives: list[Path]) -> Iterator[tuple[str, str]]:
    """(path under the source's subdir, text) of every Python and C++ file of the source."""
    if source.url.startswith("https://github.com/"):
        repo = mirror / source.url.removeprefix("https://github.com/").replace("/", "+") / "repo"
        # Only the subdir: a mirror may lack the large blobs elsewhere (test data).
        blob = subprocess.run(["git", "-C", str(repo), "archive", "--format=tar", source.pin,
                               *([source.subdir] if source.subdir else [])],
                              check=True, capture_output=True).stdout
        with tarfile.open(fileobj=io.BytesIO(blob)) as archive:
            yield from _tar(archive, source.subdir)
        return
    name = urllib.parse.unquote(source.url.rsplit("/", 1)[1])
    path = next((d / name for d in archives if (d / name).is_file()), archives[0] / name)
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != source.pin:
        raise SystemExit(f"{path}: its sha256 is not {source.pin}")
    if path.name.endswith(".whl"):
        with zipfile.ZipFile(io.BytesIO(data)) as wheel:
            for info in wheel.infolist():
                inner = _wanted(info.filename, source.subdir, info.file_size)
                if inner is not None:
                    yield inner, wheel.read(info).decode("utf-8", errors="replace")
        return
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        yield from _tar(archive, source.subdir)


def _tar(archive: tarfile.TarFile, subdir: str) -> Iterator[tuple[str, str]]:
    for member in archive:
        name = _wanted(member.name, subdir, member.size) if member.isfile() else None
        handle = archive.extractfile(member) if name is not None else None
        if name is not None and handle is not None:
            yield name, handle.read().decode("utf-8", errors="replace")


def _wanted(name: str, subdir: str, size: int) -> str | None:
    if subdir and not name.startswith(subdir + "/"):
        return None
    inner = name[len(subdir) + 1:] if subdir else name
    if size > MAX_SOURCE_FILE or SKIP_DIRS & set(inner.split("/")[:-1]) or \
            not inner.endswith((".py", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp")):
        return None
    return inner


def _family(source: Source, path: str) -> str:
    return next((family for prefix, family in source.families if path.startswith(prefix)),
                source.family)


def anchors(literals: tuple[str, ...]) -> set[str]:
    """The parts a line is screened by (origins.Origins)."""
    return {part for part in literals if len(part) >= MIN_ANCHOR and " " in part}


def collect(sources: tuple[Source, ...], mirror: Path, archives: list[Path]
            ) -> dict[tuple[str, ...], dict[str, str]]:
    """Each template with, per family, where it is first raised; none of whose screening
    parts are all the base layer's own (COMMON) too, and none of the base layer's."""
    found: dict[tuple[str, ...], dict[str, str]] = {}
    common: set[str] = set()
    for source in sources:
        count = 0
        for path, text in tree_files(source, mirror, archives):
            reader = python_messages if path.endswith(".py") else cxx_messages
            for line, parts in reader(text):
                literals = template(parts)
                if literals is None:
                    continue
                if source.family == COMMON:
                    common |= anchors(literals)
                    continue
                where = found.setdefault(literals, {})
                family = _family(source, path)
                if family not in where:
                    where[family] = f"{source.ident}\t{path}:{line}"
                    count += 1
        print(f"{source.ident}: {count} new templates", file=sys.stderr)
    return {literals: where for literals, where in found.items()
            if not anchors(literals) <= common}


def write(out: Path, sources: list[Source],
          found: dict[tuple[str, ...], dict[str, str]]) -> None:
    lines = [
        "# ascend-env message origins, written by scripts/message_origins.py (do not edit):",
        "# the messages each package's own code raises or logs as errors, read by",
        "# ascend_env/explain/origins.py. Columns: family, source, path:line, then the",
        "# message's literal parts (a gap between two parts stands for a substituted value).",
    ]
    lines += [f"# source\t{s.ident}\t{s.package}\t{s.url}\t{s.pin}\t{s.subdir}"
              for s in sources]
    rows = sorted(f"{family}\t{where}\t" + "\t".join(literals)
                  for literals, by_family in found.items()
                  for family, where in by_family.items())
    out.parent.mkdir(parents=True, exist_ok=True)
    # gzip: the table is 6 MB of text (1 MB packed); mtime 0 so that the same sources give
    # the same bytes.
    out.write_bytes(gzip.compress(("\n".join(lines + rows) + "\n").encode(), mtime=0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", type=Path, required=True)
    parser.add_argument("--archives", type=Path, action="append", required=True,
                        help="a folder of the PyPI files (may be given more than once)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    found = collect(SOURCES, args.mirror, args.archives)
    write(args.out, list(SOURCES), found)
    print(f"{args.out}: {sum(map(len, found.values()))} messages", file=sys.stderr)


if __name__ == "__main__":
    main()
