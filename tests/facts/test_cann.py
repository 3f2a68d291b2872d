"""CANN: the 8.5+ layout, and an install without its `cann` / `latest` link."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascend_env.facts import system
from ascend_env.facts.assemble import facts_from_capture
from ascend_env.facts.capture import (
    Capture,
    PathInfo,
)
from tests.facts.captures import BASE, CANN_TREES, cann_tree, ok, probe_tree, sample


def test_new_layout_cann() -> None:
    arch_info = sample("install_info", "toolkit-8.5.0-new-layout")
    capture = Capture(
        options={"install_paths": [BASE]},
        commands={system.UNAME_M: ok("aarch64\n")},
        files={f"{BASE}/cann/aarch64-linux/ascend_toolkit_install.info": arch_info,
               f"{BASE}/cann/version.cfg": "toolkit_installed_version=[7.8.0.1.212:8.5.0]\n"
                                           "opp_kernel_installed_version=[7.8.0.1.212:8.5.0]\n"},
        paths={f"{BASE}/cann": PathInfo(type="link", target="cann-8.5.0",
                                        resolved=f"{BASE}/cann-8.5.0"),
               f"{BASE}/cann/set_env.sh": PathInfo(type="file")},
        listings={BASE: ["ascend-toolkit", "cann", "cann-8.5.0", "driver"]})
    cann = facts_from_capture(capture).cann
    assert cann is not None
    assert (cann.layout, str(cann.version), cann.home) == ("new", "8.5.0", f"{BASE}/cann-8.5.0")
    assert cann.packages["ops"].version == "8.5.0"
    assert cann.installed_versions == ["8.5.0"]
    assert cann.set_env == f"{BASE}/cann/set_env.sh"
    assert cann.linked is True


def test_cann_without_latest_link_reads_the_newest_folder() -> None:
    info = sample("install_info", "toolkit-8.1.RC1-aarch64")
    capture = Capture(
        options={"install_paths": [BASE]},
        files={f"{BASE}/ascend-toolkit/8.1.RC1/aarch64-linux/ascend_toolkit_install.info": info},
        listings={f"{BASE}/ascend-toolkit": ["8.0.0", "8.1.RC1", "set_env.sh"]})
    facts = facts_from_capture(capture)
    assert facts.cann is not None and str(facts.cann.version) == "8.1.RC1"
    assert facts.cann.installed_versions == ["8.0.0", "8.1.RC1"]
    assert any("no ascend-toolkit/latest" in n for n in facts.notes)
    # The listing of ascend-toolkit/ shows no `latest`.
    assert facts.cann.linked is False


@pytest.mark.parametrize(("layout", "links", "linked"), [
    ("old", ("ascend-toolkit/latest",), True),
    ("old", (), False),
    ("new", ("cann", "ascend-toolkit/latest"), True),
    ("new", ("cann",), True),
    ("new", (), False),
    # 8.5+ keeps `latest` for old scripts, but its own set_env.sh is under `cann`.
    ("new", ("ascend-toolkit/latest",), False),
], ids=["old-linked", "old-unlinked", "new-linked", "new-cann-only", "new-unlinked",
        "new-latest-only"])
def test_linked_as_the_probe_records_it(tmp_path: Path, layout: str, links: tuple[str, ...],
                                        linked: bool) -> None:
    home = cann_tree(tmp_path, layout, links)
    cann = facts_from_capture(probe_tree(tmp_path)).cann
    assert cann is not None
    assert (cann.version_raw, cann.layout, cann.home) == (CANN_TREES[layout][0], layout, home)
    assert cann.linked is linked


def test_a_broken_link_is_no_link(tmp_path: Path) -> None:
    cann_tree(tmp_path, "old", ("ascend-toolkit/latest",))
    link = tmp_path / BASE.lstrip("/") / "ascend-toolkit/latest"
    link.unlink()
    link.symlink_to("8.0.0")  # a version since removed
    cann = facts_from_capture(probe_tree(tmp_path)).cann
    assert cann is not None and cann.home == f"{BASE}/ascend-toolkit/8.1.RC1"
    assert cann.linked is False


def test_linked_is_unknown_when_the_capture_did_not_look() -> None:
    info = sample("install_info", "toolkit-8.1.RC1-aarch64")
    files = {f"{BASE}/ascend-toolkit/8.1.RC1/aarch64-linux/ascend_toolkit_install.info": info}
    # The listing names `latest` but not where it leads, and no toolkit was read through it.
    listings = {f"{BASE}/ascend-toolkit": ["8.1.RC1", "latest", "set_env.sh"]}
    unseen = Capture(options={"install_paths": [BASE]}, files=files, listings=listings)
    unreadable = Capture(options={"install_paths": [BASE]}, files=files, listings=listings,
                         paths={f"{BASE}/ascend-toolkit/latest": PathInfo(type="unknown")})
    for capture in (unseen, unreadable):
        cann = facts_from_capture(capture).cann
        assert cann is not None and cann.version_raw == "8.1.RC1"
        assert cann.linked is None
