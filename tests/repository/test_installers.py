"""install's check of a fetched repository: every installer hashed again before any host is
touched, against the digests fetch recorded (on a simulated host:
tests/install/test_install_sim.py)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from ascend_env.image.context import RenderError, RenderOptions, prepare_context
from ascend_env.repository.fetch import Source, fetch
from ascend_env.repository.installers import RepoError, verify_repo
from ascend_env.repository.repo_folder import RepoFolderError
from ascend_env.spec.envspec import load_spec
from ascend_env.spec.plan import Plan
from tests.repository.test_fetch import HDK, MEMBERS, overlay_for, plan_with, served
from tests.vendor_server import ServerState

__all__ = ["served"]  # the fixture, used by name

COMPONENTS = {"driver", "firmware", "cann"}


@pytest.fixture
def fetched(served: tuple[str, ServerState, dict[str, bytes]], tmp_path: Path
            ) -> tuple[Path, Plan]:
    url, _, files = served
    plan = plan_with(overlay_for(files, url), tmp_path)
    dest = tmp_path / "repo"
    assert fetch(plan, dest, Source()).complete
    return dest, plan


def test_a_fresh_repository_verifies_with_the_recorded_digests(
        fetched: tuple[Path, Plan]) -> None:
    dest, plan = fetched
    found = verify_repo(plan, dest, COMPONENTS)
    assert set(found) == {"driver", "firmware", "toolkit", "ops"}
    for installer in found.values():
        assert hashlib.sha256(installer.path.read_bytes()).hexdigest() == installer.sha256


def test_an_altered_member_is_named_with_both_digests(fetched: tuple[Path, Plan]) -> None:
    dest, plan = fetched
    installer = dest / HDK.removesuffix(".zip") / MEMBERS[HDK][1]
    recorded = json.loads((dest / "repo.json").read_text())["files"][HDK]["members"][
        MEMBERS[HDK][1]]["sha256"]
    installer.write_bytes(installer.read_bytes() + b"\nreboot\n")
    actual = hashlib.sha256(installer.read_bytes()).hexdigest()
    with pytest.raises(RepoError) as raised:
        verify_repo(plan, dest, COMPONENTS)
    assert f"{installer}: sha256 mismatch: expected {recorded} (recorded by fetch), got " \
           f"{actual}" in str(raised.value)
    assert raised.value.exit_code == 1
    # Only the components asked for are checked.
    assert set(verify_repo(plan, dest, {"cann"})) == {"toolkit", "ops"}


def test_a_member_replaced_by_a_link_is_refused(fetched: tuple[Path, Plan],
                                                tmp_path: Path) -> None:
    dest, plan = fetched
    installer = dest / HDK.removesuffix(".zip") / MEMBERS[HDK][0]
    elsewhere = tmp_path / "elsewhere.run"
    elsewhere.write_bytes(installer.read_bytes())  # same bytes: the link itself is refused
    installer.unlink()
    installer.symlink_to(elsewhere)
    with pytest.raises(RepoError, match="is a symlink, not the regular file fetch unpacked"):
        verify_repo(plan, dest, COMPONENTS)


def test_a_manifest_without_member_digests_asks_for_a_new_fetch(
        fetched: tuple[Path, Plan]) -> None:
    dest, plan = fetched
    document = json.loads((dest / "repo.json").read_text())
    for entry in document["files"].values():
        del entry["members"]
    (dest / "repo.json").write_text(json.dumps(document))
    with pytest.raises(RepoError, match="records no digests of its unpacked files"):
        verify_repo(plan, dest, COMPONENTS)


@pytest.mark.parametrize("content", ["{broken", "[]", '{"schema": "other", "files": {}}'])
def test_a_broken_manifest_could_not_be_read(fetched: tuple[Path, Plan], content: str) -> None:
    dest, plan = fetched
    (dest / "repo.json").write_text(content)
    with pytest.raises(RepoFolderError) as raised:
        verify_repo(plan, dest, COMPONENTS)
    assert raised.value.exit_code == 2
    assert str(dest / "repo.json") in str(raised.value)


def test_an_image_context_refuses_an_installer_altered_after_fetch(
        fetched: tuple[Path, Plan], tmp_path: Path) -> None:
    """The image build's installers are checked against the digests fetch recorded for the
    unpacked members, as install's are (before: hashed as found, so an altered .run went
    into the Containerfile with its own new digest)."""
    dest, plan = fetched
    toolkit = verify_repo(plan, dest, {"cann"})["toolkit"]
    context = prepare_context(tmp_path / "ctx", load_spec(profile="310p"), plan, dest,
                              RenderOptions(base="debian:12"))
    assert f"{toolkit.sha256}" in context.containerfile.read_text()
    toolkit.path.write_bytes(toolkit.path.read_bytes() + b"\nreboot\n")
    actual = hashlib.sha256(toolkit.path.read_bytes()).hexdigest()
    with pytest.raises(RenderError) as raised:
        prepare_context(tmp_path / "ctx2", load_spec(profile="310p"), plan, dest,
                        RenderOptions(base="debian:12"))
    assert f"expected {toolkit.sha256} (recorded by fetch), got {actual}" in str(raised.value)
