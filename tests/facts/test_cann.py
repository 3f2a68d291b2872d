"""CANN: the 8.5+ layout, and an install without its `latest` link."""

from __future__ import annotations

from ascend_env.facts.assemble import facts_from_capture
from ascend_env.facts.capture import (
    Capture,
    PathInfo,
)
from ascend_env.remote import probe
from tests.facts.captures import BASE, ok, sample


def test_new_layout_cann() -> None:
    arch_info = sample("install_info", "toolkit-8.5.0-new-layout")
    capture = Capture(
        options={"install_paths": [BASE]},
        commands={probe.UNAME_M: ok("aarch64\n")},
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
