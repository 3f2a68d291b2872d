"""Fixtures of the image tests: a private buildah storage, the simulated hosts' base image,
the fake vendor repository, and one validated image shared by the tests that only read it."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ascend_env.image.build import BuildRequest, ImageResult, build_image
from ascend_env.image.builders import Buildah
from ascend_env.spec.catalogue import Catalogue
from ascend_env.spec.envspec import EnvSpec
from tests.image.stack import import_base, make_repo, spec_for

BASE_TAG = "localhost/ascend-env-test-base:latest"
GOOD_TAG = "localhost/ascend-env-test:good"


@dataclass
class BuildLog:
    """The raw output of one `buildah bud` of the session, kept for failure reports."""

    tag: str
    path: Path
    lines: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


@dataclass
class ImageStack:
    """What the build tests share."""

    storage: Path
    repo: Path
    catalogue: Catalogue
    builder: Buildah
    log_dir: Path
    logs: list[BuildLog] = field(default_factory=list, repr=False)

    def build(self, tag: str, spec: EnvSpec | None = None) -> ImageResult:
        """Build (and validate) TAG, recording buildah's whole output line by line.

        The lines are kept even when the build fails, in memory for the failure report of
        any test using the stack (pytest_runtest_makereport below) and in `log_dir`.
        """
        log = BuildLog(tag=tag, path=self.log_dir /
                       f"{len(self.logs) + 1:02d}-{tag.rpartition(':')[2]}.log")
        self.logs.append(log)
        try:
            return build_image(self.builder, BuildRequest(
                spec=spec or spec_for(), repo=self.repo, catalogue=self.catalogue,
                base=BASE_TAG, tag=tag, offline=True, gid=1000, on_line=log.lines.append))
        finally:
            log.path.write_text(log.text + "\n", encoding="utf-8")

    def buildah(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*self.builder.base, *args], capture_output=True, text=True,
                              check=False, timeout=300)


def _require_buildah() -> None:
    if os.geteuid() != 0:
        pytest.skip("image builds need root (buildah with chroot isolation)")
    missing = [t for t in ("buildah", "makeself", "debootstrap") if shutil.which(t) is None]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)} (scripts/test.sh installs them)")


@pytest.fixture(scope="session")
def image_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ImageStack]:
    """A private buildah storage (the driver ascend-env picks, chroot) with the base image."""
    _require_buildah()
    root = tmp_path_factory.mktemp("image-stack")
    storage = root / "storage"
    conf = root / "storage.conf"
    # Everything the tests build lives here and goes with the session: nothing is left in,
    # or taken from, the machine's own container storage. No driver is named, so the builds
    # run on what ascend-env detects (STORAGE_DRIVER, where set, still wins: `vfs` tests
    # the fallback).
    conf.write_text(f'[storage]\ngraphroot = "{storage}/graph"\nrunroot = "{storage}/run"\n')
    saved = {k: os.environ.get(k) for k in ("CONTAINERS_STORAGE_CONF", "BUILDAH_ISOLATION")}
    os.environ.update(CONTAINERS_STORAGE_CONF=str(conf), BUILDAH_ISOLATION="chroot")
    builder = Buildah()
    try:
        import_base(builder.base, BASE_TAG)
        repo, _vendor, catalogue = make_repo(root)
        log_dir = root / "build-logs"
        log_dir.mkdir()
        yield ImageStack(storage=storage, repo=repo, catalogue=catalogue, builder=builder,
                         log_dir=log_dir)
    finally:
        subprocess.run([*builder.base, "rm", "--all"], capture_output=True, check=False)
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


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A failed test that uses the stack reports the raw log of every build so far.

    The session's builds share one layer cache, so a surprising cache result in one build
    can come from an earlier one: all of them are attached, in build order.
    """
    report = yield
    stack = getattr(item, "funcargs", {}).get("image_stack")
    if not report.failed or not isinstance(stack, ImageStack):
        return report
    for number, log in enumerate(stack.logs, 1):
        report.sections.append((f"buildah bud log {number}: {log.tag} ({log.path})",
                                log.text))
    return report
