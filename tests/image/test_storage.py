"""buildah's storage: the operator's choice kept, else overlay where it works, else vfs (why).

The detection tests run real buildah against a private store: a tiny `FROM scratch` build
shows the chosen storage builds and reuses its layers.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from ascend_env.image import storage as storage_mod
from ascend_env.image.build import storage_use, storage_warnings
from ascend_env.image.builders import Buildah, DockerLike
from ascend_env.image.storage import Storage, choose_storage

needs_buildah = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("buildah") is None,
                                   reason="needs root and buildah")


def _no_probe(args: list[str]) -> subprocess.CompletedProcess[str]:
    raise AssertionError(f"an explicit choice must not be probed: buildah {args}")


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private buildah store whose storage.conf names no driver; emptied afterwards."""
    conf = tmp_path / "storage.conf"
    conf.write_text(f'[storage]\ngraphroot = "{tmp_path}/graph"\n'
                    f'runroot = "{tmp_path}/run"\n')
    monkeypatch.setenv("CONTAINERS_STORAGE_CONF", str(conf))
    monkeypatch.setenv("BUILDAH_ISOLATION", "chroot")
    monkeypatch.delenv("STORAGE_DRIVER", raising=False)
    yield conf
    for driver in ("overlay", "vfs"):
        subprocess.run(["buildah", "--storage-driver", driver, "rm", "--all"],
                       capture_output=True, check=False)


def _layers_reused(builder: Buildah, context: Path) -> tuple[list[bool], list[bool]]:
    """Cache use of each COPY: a first build, then one after only the second file changed."""
    (context / "a").write_text("a\n")
    (context / "b").write_text("b\n")
    (context / "Containerfile").write_text("FROM scratch\nCOPY a /a\nCOPY b /b\n")
    first = builder.build(context, {}, lambda line: None)
    (context / "b").write_text("b, changed\n")
    second = builder.build(context, {}, lambda line: None)
    return [s.cached for s in first.steps], [s.cached for s in second.steps]


def test_storage_driver_variable_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(storage_mod, "_buildah", _no_probe)
    chosen = choose_storage({"STORAGE_DRIVER": "vfs"})
    assert (chosen.driver, chosen.source) == ("vfs", "STORAGE_DRIVER")
    assert Buildah(chosen).base == ["buildah", "--storage-driver", "vfs"]


def test_a_driver_in_storage_conf_is_left_to_buildah(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    conf = tmp_path / "storage.conf"
    conf.write_text('[storage]\ndriver = "vfs"\ngraphroot = "/nowhere"\n')
    monkeypatch.setattr(storage_mod, "_buildah", _no_probe)
    chosen = choose_storage({"CONTAINERS_STORAGE_CONF": str(conf)})
    assert (chosen.driver, chosen.source, chosen.pass_driver) == ("vfs", "storage.conf", False)
    assert str(conf) in chosen.reason
    assert Buildah(chosen).base == ["buildah"]  # buildah reads the file itself


def test_an_unreadable_storage_conf_is_still_not_overridden(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    conf = tmp_path / "storage.conf"
    conf.write_text('[storage\ndriver = "vfs"\n')
    monkeypatch.setattr(storage_mod, "_buildah", lambda args: subprocess.CompletedProcess(
        args, 0, "vfs\n", ""))
    chosen = choose_storage({"CONTAINERS_STORAGE_CONF": str(conf)})
    assert (chosen.driver, chosen.source, chosen.pass_driver) == ("vfs", "storage.conf", False)
    assert "could not be read" in chosen.reason and "buildah's own choice" in chosen.reason


def test_only_a_detected_vfs_fallback_is_a_warning() -> None:
    fallback = Storage("vfs", "detected", "overlay does not work here: fuse-overlayfs: ...")
    assert storage_warnings(Buildah(fallback)) == [
        "buildah uses vfs storage, which copies every layer in full, so a rebuild costs "
        "nearly as much as a full build; overlay does not work here: fuse-overlayfs: ..."]
    assert storage_warnings(Buildah(Storage("vfs", "STORAGE_DRIVER", "STORAGE_DRIVER=vfs"))
                            ) == []
    overlay = Storage("overlay", "detected", "overlay through /usr/bin/fuse-overlayfs works",
                      mount_program="/usr/bin/fuse-overlayfs")
    assert storage_warnings(Buildah(overlay)) == []
    use = storage_use(Buildah(overlay))
    assert use is not None and use.model_dump() == {
        "driver": "overlay", "mount_program": "/usr/bin/fuse-overlayfs", "source": "detected",
        "reason": "overlay through /usr/bin/fuse-overlayfs works"}
    assert storage_use(DockerLike("docker")) is None


@needs_buildah
def test_kernel_overlay_is_detected_and_builds(store: Path, tmp_path: Path) -> None:
    if "overlay" not in Path("/proc/filesystems").read_text():
        pytest.skip("this kernel has no overlay file system")
    chosen = choose_storage()
    assert (chosen.driver, chosen.source, chosen.mount_program) == ("overlay", "detected", None)
    builder = Buildah(chosen)
    assert builder.base == ["buildah", "--storage-driver", "overlay"]
    context = tmp_path / "context"
    context.mkdir()
    assert _layers_reused(builder, context) == ([False, False], [True, False])


@needs_buildah
def test_fuse_overlayfs_is_detected_and_builds(store: Path, tmp_path: Path) -> None:
    if shutil.which("fuse-overlayfs") is None or not Path("/dev/fuse").exists():
        pytest.skip("needs fuse-overlayfs and /dev/fuse")
    chosen = choose_storage(kernel=False)
    program = shutil.which("fuse-overlayfs")
    assert (chosen.driver, chosen.mount_program) == ("overlay", program), chosen.reason
    builder = Buildah(chosen)
    info = [*builder.base, "info", "--format", "{{.store.GraphOptions}}"]
    assert f"overlay.mount_program={program}" in subprocess.run(
        info, capture_output=True, text=True, check=True).stdout
    context = tmp_path / "context"
    context.mkdir()
    assert _layers_reused(builder, context) == ([False, False], [True, False])


@needs_buildah
def test_no_usable_overlay_falls_back_to_vfs_with_the_reasons(store: Path,
                                                              tmp_path: Path) -> None:
    missing = choose_storage(kernel=False, fuse_program="no-such-fuse-overlayfs")
    assert missing.driver == "vfs" and "no-such-fuse-overlayfs is not installed" in \
        missing.reason
    no_device = choose_storage(kernel=False, fuse_device=tmp_path / "fuse")
    assert no_device.driver == "vfs"
    assert f"{tmp_path / 'fuse'} is not usable (No such file or directory)" in no_device.reason
    # A mount program that fails: buildah's own error from mounting a container.
    failing = choose_storage(kernel=False, fuse_program=shutil.which("false") or "false")
    assert (failing.driver, failing.source) == ("vfs", "detected")
    assert failing.tried == (failing.reason.removeprefix("overlay does not work here: "),)
    assert "using mount program" in failing.reason and "exit status 1" in failing.reason
    builder = Buildah(failing)
    assert builder.base == ["buildah", "--storage-driver", "vfs"]
    context = tmp_path / "context"
    context.mkdir()
    assert _layers_reused(builder, context) == ([False, False], [True, False])
