"""Output paths: written whole, only over a regular file or a new name.

collect -o, doctor --junit/--prometheus and image build --context against a directory, a
device, a missing parent, /proc and /sys: exit 2, a clear message, nothing left behind, and
the doctor's report still printed.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from ascend_env.core.outputs import (
    OutputError,
    output_folder,
    output_target,
    staged_folder,
    write_output,
)
from ascend_env.image.build import BuildRequest, build_image
from ascend_env.image.context import RenderError
from ascend_env.spec.catalogue import load_catalogue
from ascend_env.spec.envspec import load_spec
from tests.cli_invoke import invoke

BAD_FILES = {
    "a directory": ("{tmp}", "is a directory"),
    "a device": ("/dev/full", "is a character device"),
    "a missing parent": ("{tmp}/no/such/x.json", "does not exist"),
    "under /proc": ("/proc/self/ascend-env.json", "kernel interface"),
    "under /sys": ("/sys/kernel/ascend-env.json", "kernel interface"),
}


def _listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_bad_targets_are_refused_with_nothing_left(tmp_path: Path, case: str) -> None:
    raw, words = BAD_FILES[case]
    target = raw.format(tmp=tmp_path)
    before = _listing(tmp_path)
    with pytest.raises(OutputError, match=words) as caught:
        write_output(target, b"data", what="--output")
    assert caught.value.exit_code == 2
    assert _listing(tmp_path) == before


def test_dev_full_stays_a_device() -> None:
    with pytest.raises(OutputError):
        write_output("/dev/full", "x")
    assert stat.S_ISCHR(Path("/dev/full").stat().st_mode)


def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(OutputError, match="FIFO"):
        write_output(fifo, "x")  # would block forever if it opened the FIFO for writing
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_replaces_a_regular_file_whole_and_keeps_its_mode(tmp_path: Path) -> None:
    target = tmp_path / "report.xml"
    target.write_text("old")
    target.chmod(0o600)
    written = write_output(target, "new")
    assert written == target.resolve()
    assert target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert _listing(tmp_path) == ["report.xml"]  # no temporary file beside it


def test_a_link_is_followed_like_a_shell_redirect(tmp_path: Path) -> None:
    real = tmp_path / "real.prom"
    real.write_text("old")
    link = tmp_path / "link.prom"
    link.symlink_to(real)
    write_output(link, "new")
    assert link.is_symlink() and real.read_text() == "new"
    to_device = tmp_path / "to-null"
    to_device.symlink_to("/dev/null")
    with pytest.raises(OutputError, match="character device"):
        write_output(to_device, "x")


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    target = tmp_path / "here.json"
    target.write_text("old")

    def full_disk(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(OutputError, match="No space left on device"):
        write_output(target, "new")
    assert target.read_text() == "old"
    assert _listing(tmp_path) == ["here.json"]


def test_empty_path_and_nul_are_refused() -> None:
    with pytest.raises(OutputError, match="empty path"):
        output_target("  ")
    with pytest.raises(OutputError, match="NUL"):
        output_target("a\x00b")


def test_staged_folder_appears_whole_or_not_at_all(tmp_path: Path) -> None:
    dest = tmp_path / "ctx"
    with pytest.raises(RuntimeError), staged_folder(dest) as staging:
        (staging / "Containerfile").write_text("FROM x\n")
        raise RuntimeError("render failed half-way")
    assert _listing(tmp_path) == []
    with staged_folder(dest) as staging:
        (staging / "Containerfile").write_text("FROM x\n")
    assert _listing(tmp_path) == ["ctx"] and _listing(dest) == ["Containerfile"]
    with pytest.raises(OutputError, match="not empty"):
        output_folder(dest)
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputError, match="not a folder"):
        output_folder(tmp_path / "file")
    with pytest.raises(OutputError, match="kernel interface"):
        output_folder("/proc/ctx")


def test_empty_context_folder_is_filled(tmp_path: Path) -> None:
    dest = tmp_path / "ctx"
    dest.mkdir()
    with staged_folder(dest) as staging:
        (staging / "a").write_text("x")
    assert _listing(dest) == ["a"]


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_collect_output_refused_before_any_host(tmp_path: Path, case: str) -> None:
    raw, words = BAD_FILES[case]
    # An unreachable host: were the path not checked first, collect would try to reach it.
    done = invoke("collect", "-o", raw.format(tmp=tmp_path), "--host", "ssh://root@127.0.0.1:1")
    assert done.code == 2, done
    assert words in done.err and "--output" in done.err
    assert "Traceback" not in done.out + done.err


@pytest.fixture(scope="module")
def capture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("capture") / "here.json"
    assert invoke("collect", "-o", str(path)).code == 0
    return path


@pytest.mark.parametrize("option", ["--junit", "--prometheus"])
@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_doctor_side_file_refused_report_still_printed(tmp_path: Path, capture: Path,
                                                       option: str, case: str) -> None:
    raw, words = BAD_FILES[case]
    done = invoke("doctor", "--from", str(capture), "--json", option, raw.format(tmp=tmp_path))
    assert done.code == 2, done
    assert '"schema": "ascend-env/report/v1"' in done.out  # the report is still there
    assert words in done.err and option in done.err
    assert _listing(tmp_path) == []


def test_doctor_writes_the_good_side_file_when_the_other_fails(tmp_path: Path,
                                                               capture: Path) -> None:
    junit = tmp_path / "doctor.xml"
    done = invoke("doctor", "--from", str(capture), "--junit", str(junit),
                  "--prometheus", "/dev/full")
    assert done.code == 2
    assert junit.read_text().startswith('<?xml version="1.0"')
    assert _listing(tmp_path) == ["doctor.xml"]


@pytest.mark.parametrize("case", ["a directory that is not empty", "a file", "/proc",
                                  "a missing parent"])
def test_image_build_context_refused_first(tmp_path: Path, case: str) -> None:
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    (tmp_path / "file").write_text("x")
    target = {"a directory that is not empty": tmp_path / "full", "a file": tmp_path / "file",
              "/proc": Path("/proc/ctx"), "a missing parent": tmp_path / "no" / "ctx"}[case]
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    done = invoke("image", "build", "--profile", "910b", "--context", str(target),
                  "--repo", str(tmp_path / "no-repo"))
    assert done.code == 2, done
    assert "--context" in done.err and "Traceback" not in done.out + done.err
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before


class _NoBuild:
    """A builder never reached: the context fails to render first."""

    name = "buildah"
    storage = None

    def build(self, *args: object) -> object:
        raise AssertionError("the build must not start")


@pytest.mark.parametrize("empty_folder", [False, True])
def test_failed_render_leaves_no_context_behind(tmp_path: Path, empty_folder: bool) -> None:
    """The repository lacks the installers: the render fails inside the staged folder, and
    neither DIR nor a hidden staging folder stays (an empty DIR stays as it was)."""
    dest = tmp_path / "ctx"
    if empty_folder:
        dest.mkdir()
    repo = tmp_path / "repo"
    repo.mkdir()
    request = BuildRequest(spec=load_spec(profile="910b"), repo=repo, context=dest,
                           catalogue=load_catalogue())
    with pytest.raises(RenderError, match="not in the repository"):
        build_image(_NoBuild(), request)  # type: ignore[arg-type]
    assert _listing(tmp_path) == (["ctx", "repo"] if empty_folder else ["repo"])
    if empty_folder:
        assert _listing(dest) == []
