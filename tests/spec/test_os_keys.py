"""OS keys (spec/os_keys.py): real os-release texts map to the right key and package manager,
the rules never overlap, the map reads os-release alone (never Ansible's os_family), the data
is sourced, and a site adds an OS with a file of its own (the overlay)."""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from ascend_env.core.errors import SpecError, UsageError
from ascend_env.facts.system import parse_os_release
from ascend_env.spec.envspec import build_spec, profile_document, profile_names
from ascend_env.spec.os_keys import (
    ENV_VAR,
    PURPOSES,
    load_os_keys,
    match_os,
    matching_keys,
    overlay_paths,
)

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "tests" / "data" / "os_release"

# Every real os-release text under tests/data/os_release/ (each with its public source), the
# architecture its host ran (where the source shows it; else one the vendor supports) and the
# key it must map to, with its package manager; None = outside the data: a warning naming the
# nearest key. A second architecture shows the vendor's arch support being applied.
EXPECTED: dict[str, list[tuple[str, str | None, str | None]]] = {
    # BCLinux 8 is Anolis-based (PLATFORM_ID an8), not the 21.10 "for Euler" the data knows.
    "bclinux-8.8": [("x86_64", None, None)],
    "centos-7-core": [("x86_64", "centos-7-x86_64", "yum")],
    "debian-10": [("x86_64", "debian-10-x86_64", "apt")],
    "debian-11": [("x86_64", "debian-11-x86_64", "apt"), ("aarch64", None, None)],
    "debian-12": [("x86_64", "debian-12-x86_64", "apt")],
    "euleros-2.0-sp5-on-sp9": [("x86_64", None, None)],
    "euleros-2.0-sp8": [("aarch64", "euleros-2.8-aarch64", "dnf"), ("x86_64", None, None)],
    "hce-2.0-aarch64": [("aarch64", "hce-2.0-aarch64", "dnf")],
    "kylin-desktop-v10-juniper": [("aarch64", "kylin-desktop-v10-aarch64", "apt")],
    "kylin-desktop-v10-sp1": [("aarch64", "kylin-desktop-v10-sp1-aarch64", "apt")],
    "kylin-v10-sp1-tercel": [("x86_64", "kylin-v10-sp1-x86_64", "dnf")],
    "kylin-v10-sp1-tercel-a800i-a2": [("aarch64", "kylin-v10-sp1-aarch64", "dnf")],
    "kylin-v10-sp2-sword": [("aarch64", "kylin-v10-sp2-aarch64", "dnf")],
    "kylin-v10-sp2-sword-x86_64": [("x86_64", None, None), ("aarch64", "kylin-v10-sp2-aarch64",
                                                            "dnf")],
    "kylin-v10-sp3-lance": [("aarch64", "kylin-v10-sp3-aarch64", "dnf")],
    "openeuler-20.03-lts": [("aarch64", "openeuler-20.03-aarch64", "dnf")],
    "openeuler-20.03-sp2": [("x86_64", "openeuler-20.03-sp2-x86_64", "dnf")],
    "openeuler-20.03-sp4": [("x86_64", "openeuler-20.03-sp4-x86_64", "dnf")],
    "openeuler-22.03-sp3": [("x86_64", "openeuler-22.03-sp3-x86_64", "dnf")],
    "openeuler-24.03-lts": [("aarch64", "openeuler-24.03-aarch64", "dnf")],
    "openeuler-24.03-lts-x86_64": [("x86_64", "openeuler-24.03-x86_64", "dnf")],
    "openeuler-24.03-sp2": [("aarch64", None, None)],
    "ubuntu-18.04.3": [("x86_64", "ubuntu-18.04-x86_64", "apt")],
    "ubuntu-20.04.1": [("aarch64", "ubuntu-20.04-aarch64", "apt")],
    "ubuntu-22.04": [("aarch64", "ubuntu-22.04-aarch64", "apt")],
    "ubuntu-24.04.3": [("aarch64", "ubuntu-24.04-aarch64", "apt")],
    "uos-20-a-uelc20": [("x86_64", "uos-20a-x86_64", "dnf")],
    "uos-20-a-uelc20-uniontech": [("aarch64", "uos-20a-aarch64", "dnf")],
    "uos-20-d-fou": [("x86_64", "uos-20d-x86_64", "apt")],
    "uos-20-e-uel20": [("aarch64", "uos-20e-aarch64", "dnf")],
    "uos-20-e-uel20-uniontech": [("aarch64", "uos-20e-aarch64", "dnf")],
}

# Where a text is outside the data, the key the warning must name as nearest.
NEAREST = {
    ("bclinux-8.8", "x86_64"): "bclinux-21.10-aarch64",
    ("euleros-2.0-sp5-on-sp9", "x86_64"): "euleros-2.9-x86_64",
    ("openeuler-24.03-sp2", "aarch64"): "openeuler-24.03-sp1-aarch64",
    ("euleros-2.0-sp8", "x86_64"): "euleros-2.8-aarch64",
    ("debian-11", "aarch64"): "debian-11-x86_64",
    ("kylin-v10-sp2-sword-x86_64", "x86_64"): "kylin-v10-sp2-aarch64",
}


def release(name: str) -> dict[str, str]:
    return parse_os_release((SAMPLES / f"{name}.txt").read_text(encoding="utf-8")).values


def cases() -> Iterator[tuple[str, str, str | None, str | None]]:
    for name, expectations in EXPECTED.items():
        for arch, key, manager in expectations:
            yield name, arch, key, manager


def test_every_sample_has_an_expectation_and_a_source() -> None:
    """Adding a real text is adding files and a line above: none is left unjudged."""
    texts = {p.stem for p in SAMPLES.glob("*.txt")}
    assert texts == set(EXPECTED)
    for name in texts:
        assert "http" in (SAMPLES / f"{name}.source").read_text() or name == "debian-12", name


def test_the_samples_cover_the_required_oses() -> None:
    """At least 25 real texts in the data, across every family the vendor ships on."""
    known = {name for name, _, key, _ in cases() if key is not None}
    assert len(known) >= 25
    for stem in ("openeuler-20.03", "openeuler-22.03", "openeuler-24.03", "kylin-v10-sp",
                 "kylin-desktop", "uos-20-a", "uos-20-d", "uos-20-e", "euleros", "hce",
                 "centos", "ubuntu-20.04", "ubuntu-22.04", "ubuntu-24.04", "debian-12"):
        assert any(name.startswith(stem) for name in known), stem


@pytest.mark.parametrize(("name", "arch", "key", "manager"), list(cases()),
                         ids=[f"{n}-{a}" for n, a, _, _ in cases()])
def test_real_os_release_maps_to_its_key(name: str, arch: str, key: str | None,
                                         manager: str | None) -> None:
    found = match_os(release(name), arch)
    assert found.key == key, found.reason
    if key is None:
        assert found.entry is None and found.nearest == NEAREST[(name, arch)]
        assert "os.d" in found.reason, "the warning says how to add an OS"
    else:
        assert found.entry is not None and found.entry.manager == manager
        assert found.entry.arch == arch


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_rules_never_overlap_on_a_real_text(name: str) -> None:
    """One distribution version at most recognises each text: no rule order decides."""
    versions = {key.rsplit("-", 1)[0] for key in matching_keys(release(name))}
    assert len(versions) <= 1, versions


def test_the_traps() -> None:
    """UOS e/a are RPM and d is apt although all say ID=uos/UOS; Kylin server and desktop
    share ID=kylin; Kylin desktop's VERSION is UTF-8 Chinese; openEuler GA has no SP."""
    assert release("uos-20-d-fou")["ID"] == "UOS"
    assert release("kylin-desktop-v10-sp1")["VERSION"] == "银河麒麟桌面操作系统V10 (SP1)"
    managers = {name: match_os(release(name), "aarch64").entry for name in
                ("uos-20-e-uel20", "uos-20-a-uelc20", "uos-20-d-fou",
                 "kylin-v10-sp1-tercel", "kylin-desktop-v10-juniper")}
    assert {n: e.manager if e else None for n, e in managers.items()} == {
        "uos-20-e-uel20": "dnf", "uos-20-a-uelc20": "dnf", "uos-20-d-fou": "apt",
        "kylin-v10-sp1-tercel": "dnf", "kylin-desktop-v10-juniper": "apt"}
    ga = {"ID": "openEuler", "VERSION_ID": "22.03", "VERSION": "22.03 LTS",
          "PRETTY_NAME": "openEuler 22.03 LTS"}
    assert match_os(ga, "aarch64").key == "openeuler-22.03-aarch64"
    assert match_os({**ga, "VERSION": "22.03 (LTS-SP4)"}, "aarch64").key == \
        "openeuler-22.03-sp4-aarch64"


# -- never Ansible's os_family ------------------------------------------------------------------

class Recording(Mapping[str, str]):
    """An os-release mapping that remembers which keys were read."""

    def __init__(self, values: dict[str, str]) -> None:
        self.data, self.read = values, set[str]()

    def __getitem__(self, key: str) -> str:
        self.read.add(key)
        return self.data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)

    def get(self, key: str, default: Any = None) -> Any:
        self.read.add(key)
        return self.data.get(key, default)


@pytest.mark.parametrize("fixture", ["uos_server_20_uel20", "uos_20"])
def test_ansible_os_family_is_never_consulted(fixture: str) -> None:
    """Ansible's own verdict rides along in the mapping and changes nothing; the map reads
    os-release keys only. (ansible's fixtures uos_20 / uos_server_20_uel20 say Debian and
    RedHat; what decides here is ID, PLATFORM_ID and VERSION_CODENAME.)"""
    name = {"uos_server_20_uel20": "uos-20-e-uel20", "uos_20": "uos-20-d-fou"}[fixture]
    plain = match_os(release(name), "aarch64")
    for family in ("Debian", "RedHat", "Suse"):
        mixed = Recording({**release(name), "ansible_os_family": family, "os_family": family,
                           "ansible_pkg_mgr": "apt" if family == "RedHat" else "dnf"})
        assert match_os(mixed, "aarch64") == plain
        assert not {k for k in mixed.read if not k.isupper() or "FAMILY" in k}, mixed.read


def test_no_code_of_the_map_names_os_family() -> None:
    for path in (ROOT / "ascend_env" / "spec" / "os_keys.py", ROOT / "checks" / "test_system.py"):
        names = {node.id for node in ast.walk(ast.parse(path.read_text()))
                 if isinstance(node, ast.Name)}
        # Keys and names, not prose: the docstrings say why os_family is not used.
        strings = {node.value for node in ast.walk(ast.parse(path.read_text()))
                   if isinstance(node, ast.Constant) and isinstance(node.value, str)
                   and not any(c.isspace() for c in node.value)}
        assert not [s for s in names | strings if "os_family" in s or "pkg_mgr" in s], path


# -- the data --------------------------------------------------------------------------------

def test_every_entry_is_sourced_and_complete() -> None:
    keys = load_os_keys()
    assert len(keys) >= 40
    for key, entry in keys.items():
        assert key == f"{entry.distribution}-{entry.version}-{entry.arch}"
        assert entry.supported_by and entry.packages.driver_build, key
        for purpose in PURPOSES:
            for package in getattr(entry.packages, purpose):
                assert package.source.startswith("https://") and package.why, (key, package)
        assert entry.family == ("deb" if entry.manager == "apt" else "rpm"), key
        assert any("{kernel}" in p.name for p in entry.packages.driver_build), key
        assert entry.baseline.source.startswith("https://")


def test_python_of_the_os_is_named_or_absent_never_guessed() -> None:
    keys = load_os_keys()
    assert keys["openeuler-22.03-aarch64"].pythons() == ["3.9"]
    assert keys["ubuntu-22.04-x86_64"].pythons() == ["3.10", "3.11"]
    assert keys["ubuntu-22.04-x86_64"].needs("python", "k", python="3.11") == [
        "python3.11", "python3.11-dev", "python3.11-venv"]
    assert keys["centos-7-x86_64"].pythons() == []  # 7.6 ships no python3
    assert keys["openeuler-22.03-aarch64"].needs("driver_build", "5.10.0-182.0.0.95.oe2203sp3"
                                                 ".aarch64")[-1] == \
        "kernel-devel-5.10.0-182.0.0.95.oe2203sp3.aarch64"


def test_profiles_name_known_os_keys() -> None:
    keys = load_os_keys()
    for name in profile_names():
        spec = build_spec(profile_document(name), name)
        assert spec.os_key() in keys, name


@pytest.mark.parametrize(("os_", "arch", "path", "phrase"), [
    ({"family": "rocky", "version": "9"}, "aarch64", "os.family", "known: bclinux"),
    ({"family": "openeuler", "version": "25.03"}, "aarch64", "os.version", "22.03-sp4"),
    ({"family": "uos", "version": "20e"}, "x86_64", "hardware.arch", "uos-20e-aarch64"),
])
def test_an_unknown_os_is_a_spec_error_naming_what_is_known(
        os_: dict[str, str], arch: str, path: str, phrase: str) -> None:
    with pytest.raises(SpecError) as caught:
        build_spec({"extends": "910b", "name": "x", "os": os_, "hardware": {"arch": arch}}, "t")
    problem = next(p for p in caught.value.problems if p.path == path)
    assert phrase in problem.message and "os.d" in problem.message


# -- the site overlay ------------------------------------------------------------------------

SITE = {
    "schema": "ascend-env/os/v1",
    "extends": "openeuler-22.03-sp4",
    "distribution": "openeuler",
    "version": "22.03-sp5",
    "name": "openEuler 22.03 LTS SP5 (as our site runs it)",
    "supported_by": ["https://example.org/our-vendor-letter"],
    "mirror": "https://mirror.example.org/openEuler-22.03-LTS-SP5/",
    "match": [{"ID": "openEuler", "VERSION_ID": "22\\.03", "VERSION": ".*\\(LTS-SP5\\).*"}],
}
SP5 = {"ID": "openEuler", "VERSION_ID": "22.03", "VERSION": "22.03 (LTS-SP5)"}


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "os.d"
    folder.mkdir()
    monkeypatch.setenv(ENV_VAR, str(folder))
    return folder


def test_a_site_adds_an_os_by_a_file(site: Path) -> None:
    assert match_os(SP5, "aarch64").key is None
    (site / "50-sp5.yaml").write_text(yaml.safe_dump(SITE))
    found = match_os(SP5, "aarch64")
    assert found.key == "openeuler-22.03-sp5-aarch64" and found.entry is not None
    assert found.entry.origin == str(site / "50-sp5.yaml")
    assert found.entry.needs("driver_build", "k")[-1] == "kernel-devel-k"  # from SP4
    assert overlay_paths() == [site / "50-sp5.yaml"]
    spec = build_spec({"extends": "910b", "name": "x",
                       "os": {"family": "openeuler", "version": "22.03-sp5"}}, "t")
    assert spec.os_key() == "openeuler-22.03-sp5-aarch64"


def test_an_explicit_overlay_folder(tmp_path: Path) -> None:
    (tmp_path / "sp5.yaml").write_text(yaml.safe_dump(SITE))
    assert "openeuler-22.03-sp5-x86_64" in load_os_keys(tmp_path)


def test_a_site_file_replaces_the_shipped_version(site: Path) -> None:
    own = {**SITE, "extends": "openeuler-22.03", "version": "22.03-sp4", "name": "our SP4",
           "match": [{"ID": "openEuler", "VERSION_ID": "22\\.03", "VERSION": ".*SP4.*"}]}
    (site / "sp4.yaml").write_text(yaml.safe_dump(own))
    entry = load_os_keys()["openeuler-22.03-sp4-aarch64"]
    assert entry.name == "our SP4" and entry.origin.endswith("sp4.yaml")


@pytest.mark.parametrize(("change", "phrase"), [
    ({"schema": "ascend-env/os/v0"}, "schema"),
    ({"match": [{"VERSION_ID": "22"}]}, "names no ID"),
    ({"match": [{"ID": "open(Euler"}]}, "not a regular expression"),
    ({"supported_by": ["ftp://x"]}, "not a public https URL"),
    ({"extends": "nowhere-1"}, "extends 'nowhere-1'"),
    ({"packages": {"python": [{"name": "python3", "why": "w", "source": "no"}]}}, "https"),
    ({"packages": {"python": [{"name": "py; rm -rf /", "why": "w",
                               "source": "https://x"}]}}, "not a package name"),
])
def test_a_bad_site_file_is_refused_naming_it(site: Path, change: dict[str, Any],
                                              phrase: str) -> None:
    path = site / "bad.yaml"
    path.write_text(yaml.safe_dump({**SITE, **change}))
    with pytest.raises(UsageError) as caught:
        load_os_keys()
    assert str(path) in str(caught.value) and phrase in str(caught.value), str(caught.value)


def test_site_files_are_read_as_hostile_input(site: Path) -> None:
    """Not a mapping, or not a regular file: refused with its name, never read or hung on."""
    (site / "list.yaml").write_text("- one\n- two\n")
    with pytest.raises(UsageError, match=r"list\.yaml"):
        load_os_keys()
    (site / "list.yaml").unlink()
    os.mkfifo(site / "pipe.yaml")
    with pytest.raises(UsageError, match=r"pipe\.yaml"):
        load_os_keys()
