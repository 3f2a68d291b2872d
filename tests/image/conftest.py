"""Fixtures of the image tests: a private buildah storage, the simulated hosts' base image,
the fake vendor repository, and one validated image shared by the tests that only read it."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ascend_env.catalogue import Catalogue
from ascend_env.image import BuildRequest, ImageResult, build_image
from ascend_env.image_builders import Buildah
from ascend_env.spec import EnvSpec
from tests.image.stack import make_repo, spec_for

BASE_TAG = "localhost/ascend-env-test-base:latest"
GOOD_TAG = "localhost/ascend-env-test:good"


@dataclass
class ImageStack:
    """What the build tests share."""

    storage: Path
    repo: Path
    catalogue: Catalogue
    builder: Buildah

    def build(self, tag: str, spec: EnvSpec | None = None) -> ImageResult:
        return build_image(self.builder, BuildRequest(
            spec=spec or spec_for(), repo=self.repo, catalogue=self.catalogue, base=BASE_TAG,
            tag=tag, offline=True, gid=1000))

    def buildah(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*self.builder.base, *args], capture_output=True, text=True,
                              check=False, timeout=300)


def _require_buildah() -> None:
    if os.geteuid() != 0:
        pytest.skip("image builds need root (buildah with vfs storage and chroot isolation)")
    missing = [t for t in ("buildah", "makeself", "debootstrap") if shutil.which(t) is None]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)} (scripts/test.sh installs them)")


@pytest.fixture(scope="session")
def image_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ImageStack]:
    """A private buildah storage (vfs, chroot isolation) holding the base image."""
    _require_buildah()
    root = tmp_path_factory.mktemp("image-stack")
    storage = root / "storage"
    conf = root / "storage.conf"
    # Everything the tests build lives here and goes with the session: nothing is left in,
    # or taken from, the machine's own container storage.
    conf.write_text(f'[storage]\ndriver = "vfs"\ngraphroot = "{storage}/graph"\n'
                    f'runroot = "{storage}/run"\n')
    saved = {k: os.environ.get(k) for k in ("CONTAINERS_STORAGE_CONF", "BUILDAH_ISOLATION",
                                            "STORAGE_DRIVER")}
    os.environ.update(CONTAINERS_STORAGE_CONF=str(conf), BUILDAH_ISOLATION="chroot",
                      STORAGE_DRIVER="vfs")
    try:
        from tests.sim.image import import_base  # noqa: PLC0415

        import_base(BASE_TAG)
        repo, _vendor, catalogue = make_repo(root)
        yield ImageStack(storage=storage, repo=repo, catalogue=catalogue, builder=Buildah())
    finally:
        subprocess.run(["buildah", "--storage-driver", "vfs", "rm", "--all"],
                       capture_output=True, check=False)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        shutil.rmtree(storage, ignore_errors=True)


@pytest.fixture(scope="session")
def good_image(image_stack: ImageStack) -> ImageResult:
    """The stack's image, built and validated once per session."""
    return image_stack.build(GOOD_TAG)
