"""The terminal rendering of an image build: what it says about the builder and its storage."""

from __future__ import annotations

import pytest

from ascend_env.cli import image_view
from ascend_env.doctor.report import Report
from ascend_env.image.build import CacheUse, ImageResult, StorageUse


def result(storage: StorageUse | None, builder: str = "buildah") -> ImageResult:
    return ImageResult(action="build", image="localhost/x:1", image_id="abc", tag="localhost/x:1",
                       validated=True, builder=builder, storage=storage, build_seconds=3.25,
                       cache=CacheUse(steps=4, cached=3, by_stage={"cann": [2, 2],
                                                                  "final": [2, 1]}),
                       validation_digest="sha256:0", report=Report(host="x").summarize())


def test_the_build_line_names_the_storage_driver(capsys: pytest.CaptureFixture[str]) -> None:
    storage = StorageUse(driver="overlay", mount_program="/usr/bin/fuse-overlayfs",
                         source="detected", reason="fuse-overlayfs works here")
    image_view.render_image(result(storage), as_json=False)
    out = capsys.readouterr().out
    assert "built with buildah on overlay storage in 3.2 s; layers from cache: cann 2/2, " \
           "final 1/2" in out
    image_view.render_image(result(storage.model_copy(update={"driver": "vfs"})),
                            as_json=False)
    assert "built with buildah on vfs storage in" in capsys.readouterr().out


def test_docker_and_podman_keep_their_own_storage(capsys: pytest.CaptureFixture[str]) -> None:
    image_view.render_image(result(None, builder="docker"), as_json=False)
    out = capsys.readouterr().out
    assert "built with docker in 3.2 s" in out and "storage" not in out.split("built with")[1]
