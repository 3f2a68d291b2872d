"""Origins (ascend_env/explain/origins.py): the package whose own code raises a record's
message places a record whose words name no layer, on real records of the train corpus; the
shipped table is pinned and well formed; scripts/message_origins.py reads real git trees and
digest-verified packages."""

from __future__ import annotations

import hashlib
import importlib.util
import io
import re
import subprocess
import sys
import tarfile
from pathlib import Path
from types import ModuleType

import pytest

from ascend_env.explain.areas import area_of, load_areas
from ascend_env.explain.match import Matcher, default_matcher
from ascend_env.explain.origins import (
    MIN_ANCHOR,
    ORIGIN,
    Origins,
    Source,
    Template,
    load_origins,
    origin_of,
    place,
    read_table,
)
from ascend_env.explain.structure import read_shape
from tests.cli_invoke import invoke
from tests.explain.corpus_score import TRAIN, load

SCRIPT = Path(__file__).parents[2] / "scripts" / "message_origins.py"


def _script() -> ModuleType:
    loaded = importlib.util.spec_from_file_location("message_origins", SCRIPT)
    assert loaded is not None and loaded.loader is not None
    module = importlib.util.module_from_spec(loaded)
    sys.modules[loaded.name] = module  # its dataclasses look their module up
    loaded.loader.exec_module(module)
    return module


def _train(thread: str, says: str) -> str:
    return str(next(item["text"] for item in load(TRAIN)
                    if item["thread"] == thread and says in item["text"]))


def test_the_table_is_pinned_and_every_template_can_be_screened_and_placed() -> None:
    origins = load_origins()
    families = {area.family for area in load_areas()}
    for source in origins.sources.values():
        pin = r"[0-9a-f]{40}" if source.url.startswith("https://github.com/") else r"[0-9a-f]{64}"
        assert re.fullmatch(pin, source.pin), source
    assert origins.templates
    for template in origins.templates:
        assert template.family in families, template
        assert template.source in origins.sources, template
        assert any(len(p) >= MIN_ANCHOR and " " in p for p in template.parts), template


@pytest.mark.parametrize(("thread", "says", "package", "link"), [
    # A check of vLLM Ascend's own kernel binding.
    ("https://github.com/vllm-project/vllm-ascend/issues/16586", "hidden in should be smaller",
     "vLLM Ascend", "https://github.com/vllm-project/vllm-ascend/blob/"),
    # vLLM's engine client, raised in the releases of 2025 (read from its PyPI package).
    ("https://github.com/vllm-project/vllm-ascend/pull/7098", "Timed out waiting for engines",
     "vLLM", "https://files.pythonhosted.org/packages/"),
])
def test_a_message_whose_words_name_no_layer_is_placed_by_the_package_that_raises_it(
        thread: str, says: str, package: str, link: str) -> None:
    text = _train(thread, says)
    shape = read_shape(text.splitlines())
    assert area_of(load_areas(), shape) is None  # its words name no layer
    scan = default_matcher().scan([("log", text)])
    (chain,) = scan.chains
    lead = chain.lead.signature
    assert lead.id == f"{ORIGIN}vllm_ascend" and lead.role == "family"
    assert f"one {package} raises" in lead.meaning and link in lead.source
    # Like an area, an origin concludes no cause: the line stays listed as not known.
    assert not chain.cause_found and lead.causes[0].id is None
    assert [u.line for u in scan.unknown] == [text.strip()]


def test_the_terminal_names_the_package_and_exits_1(tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    log.write_text(_train("https://github.com/vllm-project/vllm-ascend/issues/16586",
                          "hidden in") + "\n", encoding="utf-8")
    done = invoke("explain", str(log))
    assert done.code == 1, done.err
    assert f"{ORIGIN}vllm_ascend" in done.out
    assert "(family match: the package that raises the message, no cause)" in done.out
    assert "csrc/torch_binding.cpp#L" in done.out


def test_torch_npus_process_group_messages_are_hccls() -> None:
    text = _train("https://github.com/verl-project/verl/pull/6212", "Tensors must be contiguous")
    placed = place(load_areas(), read_shape(text.splitlines()), load_origins())
    assert placed is not None and placed[0].family == "hccl"
    assert "/torch_npu/csrc/distributed/" in placed[0].source


def test_the_layer_the_words_name_comes_before_the_package_that_reports_it() -> None:
    # torch_npu raises `ACL stream synchronize failed, error code:507035`; the runtime failed.
    text = _train("https://github.com/vllm-project/vllm-ascend/issues/2763",
                  "ACL stream synchronize failed")
    shape, areas, origins = read_shape(text.splitlines()), load_areas(), load_origins()
    found = origin_of(origins, areas, shape)
    assert found is not None and found[0].family == "torch_npu"
    placed = place(areas, shape, origins)
    assert placed is not None and placed[0].family == "runtime"


def test_a_message_the_base_layer_raises_too_has_no_origin() -> None:
    # `'X' object has no attribute 'y'` is PyTorch's (and Python's) as much as MindSpore's.
    text = _train("https://github.com/vllm-project/vllm-ascend/pull/13935", "object has no")
    assert origin_of(load_origins(), load_areas(), read_shape(text.splitlines())) is None


def _origins(*templates: Template) -> Origins:
    source = Source("pkg", "https://github.com/o/pkg", "0" * 40, "")
    return Origins({"s": source}, templates)


def test_the_best_template_wins_and_two_families_equally_good_give_none() -> None:
    line = "RuntimeError: the cache engine could not allocate 12 blocks on rank 3"
    short = Template("vllm_ascend", "s", "a.py:1", ("the cache engine could not allocate",))
    longer = Template("torch_npu", "s", "b.cpp:2", ("the cache engine could not allocate",
                                                     "blocks on rank"))
    assert _origins(short, longer).of(line) == longer
    twin = Template("hccl", "s", "c.cpp:3", longer.parts)
    assert _origins(short, longer, twin).of(line) is None
    assert _origins(short).of("the cache engine is fine") is None
    assert Source("p", "https://github.com/o/p", "a" * 40, "src").link("x.py:7") == \
        f"https://github.com/o/p/blob/{'a' * 40}/src/x.py#L7"


def test_the_origin_comes_before_the_launchers_prefix() -> None:
    # The prefix says only which process printed the line (vLLM's engine here).
    line = "(EngineCore_DP0 pid=1) RuntimeError: the cache engine could not allocate 3 blocks"
    shape, areas = read_shape([line]), load_areas()
    named = area_of(areas, shape)
    assert named is not None and named[0].family == "vllm_ascend"
    origins = _origins(Template("torch_npu", "s", "a.cpp:1",
                                ("the cache engine could not allocate",)))
    placed = place(areas, shape, origins)
    assert placed is not None and placed[0].family == "torch_npu"
    assert place(areas, shape, None) == (named[0].signature(named[2]), named[1])


def test_without_origins_the_matcher_places_by_words_alone() -> None:
    text = _train("https://github.com/vllm-project/vllm-ascend/issues/16586", "hidden in")
    assert Matcher(origins=False).scan([("log", text)]).chains == []


PY_SOURCE = '''
import logging
logger = logging.getLogger(__name__)
def check(n, m):
    if n > m:
        raise ValueError(f"the number of blocks {n} is larger than the pool of {m} blocks")
    logger.error("the pool could not be reserved on device %d, giving up", n)
    assert n, "a pool of no blocks cannot serve any request"
    raise KeyError(n)
'''
CXX_SOURCE = '''
void Check(int64_t dim) {
    TORCH_CHECK(dim > 0, "the dimension of the query tensor must be positive, got ", dim,
                PTA_ERROR(ErrCode::PARAM));
    OP_LOGE(opName, "tiling failed for the block size %ld of the key cache", dim);
}
'''


def _git_tree(root: Path) -> tuple[Path, str]:
    repo = root / "o+pkg" / "repo"
    work = root / "work"
    (work / "pkg").mkdir(parents=True)
    (work / "pkg" / "pool.py").write_text(PY_SOURCE, encoding="utf-8")
    (work / "pkg" / "check.cpp").write_text(CXX_SOURCE, encoding="utf-8")
    (work / "tests").mkdir()
    (work / "tests" / "test_pool.py").write_text(
        'raise ValueError("a message only the tests raise, never kept")\n', encoding="utf-8")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(work)]
    subprocess.run([*git[:5], "init", "-q", str(work)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "c"], check=True)
    commit = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True,
                            text=True).stdout.strip()
    repo.parent.mkdir(parents=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(repo)], check=True)
    return root, commit


def _sdist(folder: Path, name: str, files: dict[str, str]) -> str:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(path)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    (folder / name).write_bytes(buffer.getvalue())
    return hashlib.sha256(buffer.getvalue()).hexdigest()


def test_the_script_reads_templates_from_a_git_commit_and_a_verified_package(
        tmp_path: Path) -> None:
    script = _script()
    mirror, commit = _git_tree(tmp_path / "mirror")
    archives = tmp_path / "archives"
    archives.mkdir()
    base = _sdist(archives, "base-1.0.tar.gz", {"base-1.0/base/x.py": (
        'raise RuntimeError(f"the pool could not be reserved on device {d}, giving up")\n')})
    sources = (
        script.Source("pkg@main", "pkg", "torch_npu", "https://github.com/o/pkg", commit),
        script.Source("base@1.0", "base", script.COMMON, "https://example.org/base-1.0.tar.gz",
                      base, subdir="base-1.0/base"),
    )
    found = script.collect(sources, mirror, [archives])
    assert found == {
        ("the number of blocks", "is larger than the pool of", "blocks"):
            {"torch_npu": "pkg@main\tpkg/pool.py:6"},
        ("a pool of no blocks cannot serve any request",):
            {"torch_npu": "pkg@main\tpkg/pool.py:8"},
        ("the dimension of the query tensor must be positive, got",):
            {"torch_npu": "pkg@main\tpkg/check.cpp:3"},
        ("tiling failed for the block size", "of the key cache"):
            {"torch_npu": "pkg@main\tpkg/check.cpp:5"},
    }  # the logged message is the base layer's too; the tests' message is never read
    out = tmp_path / "messages.tsv.gz"
    script.write(out, list(sources), found)
    written = out.read_bytes()
    script.write(out, list(sources), found)
    assert out.read_bytes() == written  # the same sources give the same bytes
    table = read_table(written)
    got = table.of("ValueError: the number of blocks 9 is larger than the pool of 3 blocks")
    assert got is not None and got.family == "torch_npu"
    assert table.sources["pkg@main"].link(got.where) == \
        f"https://github.com/o/pkg/blob/{commit}/pkg/pool.py#L6"
    # A package whose digest is not the pinned one is refused before it is read.
    wrong = script.Source("base@1.0", "base", script.COMMON,
                          "https://example.org/base-1.0.tar.gz", "0" * 64, subdir="base-1.0/base")
    with pytest.raises(SystemExit, match="sha256"):
        script.collect((wrong,), mirror, [archives])
