"""OS keys: which operating systems ascend-env knows, how to recognise them, what they need.

Each file of `ascend_env/data/os/` describes one distribution version: the os-release rules
that recognise it, the architectures the vendor supports it on, its package manager, and the
OS packages each purpose needs (driver build, Python, CANN prerequisites) with why and the
public source. One file on N architectures gives N keys, `<distribution>-<version>-<arch>`.
A site adds an OS the way it adds a release: a file of the same shape in
`/etc/ascend-env/os.d/` (or where `ASCEND_ENV_OS_D` says), read beside the shipped ones.

Hosts are recognised from os-release alone, never from Ansible's `os_family`, which calls an
RPM-based UOS Debian and does not know CTyunOS.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ascend_env.core.errors import UsageError
from ascend_env.core.inputs import load_yaml_bounded, read_text, yaml_problem
from ascend_env.core.resources import data_names, load_yaml
from ascend_env.spec.site_files import content_key, site_files

OS_SCHEMA = "ascend-env/os/v1"
ENV_VAR = "ASCEND_ENV_OS_D"
DEFAULT_DIR = Path("/etc/ascend-env/os.d")
ARCHES: tuple[str, ...] = ("aarch64", "x86_64")
# What `dpkg --print-architecture` and some tools say for the kernel's machine names.
_ARCH_ALIASES = {"arm64": "aarch64", "amd64": "x86_64", "x86-64": "x86_64"}
KERNEL = "{kernel}"  # in a package name: the running kernel's release, `uname -r`
ADD_OS = ("To add one: a file of the shape of ascend_env/data/os/*.yaml in "
          f"{DEFAULT_DIR}/ or ${ENV_VAR} (docs/spec.md, 'Operating systems')")

Purpose = Literal["driver_build", "python", "cann_prerequisites"]
PURPOSES: tuple[Purpose, ...] = ("driver_build", "python", "cann_prerequisites")
_NAME = re.compile(r"[a-z0-9][a-z0-9.]*(-[a-z0-9][a-z0-9.]*)*")
_PACKAGE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*(\{kernel\}[A-Za-z0-9._+-]*)?")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _url(value: str) -> str:
    if not value.startswith("https://") or any(c.isspace() for c in value):
        raise ValueError(f"{value!r} is not a public https URL")
    return value


class Package(_Strict):
    """One OS package a purpose needs, why, and the public page that says so."""

    name: str = Field(description="the package name; {kernel} stands for `uname -r`")
    why: str = Field(min_length=1)
    source: str = Field(description="public URL of the statement")
    python: str | None = Field(None, pattern=r"^3\.\d+$",
                               description="purpose python: the minor version it belongs to")

    _source = field_validator("source")(_url)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _PACKAGE.fullmatch(value):
            raise ValueError(f"{value!r} is not a package name (letters, digits, . _ + -, "
                             "at most one {kernel})")
        return value

    def resolved(self, kernel: str) -> str:
        """The name with the running kernel's release put in."""
        return self.name.replace(KERNEL, kernel)


class Packages(_Strict):
    """The OS packages per purpose."""

    driver_build: list[Package] = Field(description="what the driver's installer builds its "
                                        "kernel modules with")
    python: list[Package] = Field(default_factory=list,
                                  description="the Pythons the OS ships as packages")
    cann_prerequisites: list[Package] = Field(default_factory=list,
                                              description="OS packages CANN's install needs")


class Baseline(_Strict):
    """What a minimal install of the OS already has (the resolver's starting point)."""

    source: str
    packages: list[str] = Field(min_length=1)

    _source = field_validator("source")(_url)


Rule = dict[str, str]  # os-release KEY -> regular expression its value must fully match


class OsFile(_Strict):
    """One file of ascend_env/data/os/ (or a site's os.d/): a distribution version."""

    schema_: str = Field(alias="schema", pattern=f"^{re.escape(OS_SCHEMA)}$")
    distribution: str = Field(description="spec os.family, e.g. openeuler")
    version: str = Field(description="spec os.version, e.g. 22.03-sp4")
    name: str = Field(min_length=1, description="what the vendor calls it")
    architectures: list[Literal["aarch64", "x86_64"]] = Field(min_length=1)
    supported_by: list[str] = Field(min_length=1, description="public URLs: the vendor's "
                                    "support for this OS on these architectures")
    family: Literal["rpm", "deb"]
    manager: Literal["dnf", "yum", "apt"]
    releasever: str | None = Field(None, description="dnf/yum $releasever, apt suite")
    mirror: str | None = Field(None, description="a public mirror of the OS's packages")
    match: list[Rule] = Field(min_length=1, description="os-release rules, any may match")
    packages: Packages
    baseline: Baseline
    note: str = ""

    @field_validator("distribution", "version")
    @classmethod
    def _lower(cls, value: str) -> str:
        if not _NAME.fullmatch(value):
            raise ValueError(f"{value!r}: lower-case letters, digits, dots and single dashes")
        return value

    @field_validator("supported_by")
    @classmethod
    def _urls(cls, values: list[str]) -> list[str]:
        return [_url(v) for v in values]

    @field_validator("match")
    @classmethod
    def _rules(cls, rules: list[Rule]) -> list[Rule]:
        for rule in rules:
            if "ID" not in rule:
                raise ValueError(f"rule {rule} names no ID: every rule starts from os-release ID")
            for key, pattern in rule.items():
                if not re.fullmatch(r"[A-Z][A-Z0-9_]*", key):
                    raise ValueError(f"{key!r} is not an os-release key")
                try:
                    re.compile(pattern)
                except re.error as exc:
                    raise ValueError(f"{key}: {pattern!r} is not a regular expression: "
                                     f"{exc}") from None
        return rules

    @field_validator("mirror")
    @classmethod
    def _mirror(cls, value: str | None) -> str | None:
        return None if value is None else _url(value)


class OsEntry(_Strict):
    """The data of one OS key: one distribution version on one architecture."""

    key: str
    distribution: str
    version: str
    arch: Literal["aarch64", "x86_64"]
    name: str
    supported_by: list[str]
    family: Literal["rpm", "deb"]
    manager: Literal["dnf", "yum", "apt"]
    releasever: str | None
    mirror: str | None
    match: list[Rule]
    packages: Packages
    baseline: Baseline
    note: str = ""
    origin: str = Field("", description="'' for ascend-env's data, else the site file")

    def needs(self, purpose: Purpose, kernel: str, python: str | None = None) -> list[str]:
        """Package names for a purpose, the running kernel put in (python: that minor only)."""
        return [p.resolved(kernel) for p in getattr(self.packages, purpose)
                if python is None or p.python in (None, python)]

    def pythons(self) -> list[str]:
        """The Python minor versions the OS ships as packages."""
        return sorted({p.python for p in self.packages.python if p.python},
                      key=lambda v: tuple(int(n) for n in v.split(".")))


class OsMatch(BaseModel):
    """What a host's os-release and arch are: a key, or the nearest one and why not."""

    model_config = ConfigDict(frozen=True)

    key: str | None
    entry: OsEntry | None = None
    nearest: str | None = None
    reason: str = ""


# -- reading ------------------------------------------------------------------------------------

def overlay_paths(overlay: Path | None = None) -> list[Path]:
    """The site's OS files in the order they apply: `overlay` (a folder or a file) when
    given, else `$ASCEND_ENV_OS_D` (`:`-separated; empty = none), else /etc/ascend-env/os.d."""
    setting = os.environ.get(ENV_VAR)
    if overlay is not None:
        return site_files([overlay], named=True, what="OS files")
    places = [DEFAULT_DIR] if setting is None else [Path(p) for p in setting.split(":") if p]
    return site_files(places, named=setting is not None, what="OS files")


def _read_site_file(path: Path) -> dict[str, Any]:
    what = f"OS file {path}"
    try:
        document = load_yaml_bounded(read_text(path, what=what))
    except yaml.YAMLError as exc:
        raise UsageError(f"{what}: {yaml_problem(exc)}") from None
    if not isinstance(document, dict):
        raise UsageError(f"{what}: expected a mapping with schema: {OS_SCHEMA}")
    return document


def _expand(name: str, documents: Mapping[str, dict[str, Any]], seen: tuple[str, ...] = ()
            ) -> dict[str, Any]:
    """A file with `extends: <distribution>-<version>` applied: the parent's keys with its own
    over them (mappings merge, so `packages.python` alone replaces only the Python list)."""
    document = documents[name]
    parent = document.get("extends")
    if parent is None:
        return document
    if parent in seen or parent == name:
        raise ValueError(f"extends {parent!r} goes round in a circle")
    if parent not in documents:
        raise ValueError(f"extends {parent!r}, which is no OS file "
                         f"(known: {', '.join(sorted(documents))})")
    base = _expand(str(parent), documents, (*seen, name))
    return _merge(base, {k: v for k, v in document.items() if k != "extends"})


def _merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        old = merged.get(key)
        merged[key] = _merge(old, value) if isinstance(old, dict) and isinstance(value, dict) \
            else value
    return merged


def _file_id(document: Mapping[str, Any], fallback: str) -> str:
    return f"{document.get('distribution', '')}-{document.get('version', '')}" \
        if document.get("distribution") and document.get("version") else fallback


def _entries(document: dict[str, Any], origin: str) -> list[OsEntry]:
    parsed = OsFile.model_validate(document)
    fields = parsed.model_dump(exclude={"schema_", "architectures"})
    return [OsEntry(key=f"{parsed.distribution}-{parsed.version}-{arch}", arch=arch,
                    origin=origin, **fields) for arch in parsed.architectures]


def load_os_keys(overlay: Path | None = None) -> dict[str, OsEntry]:
    """Every OS key: the shipped data, then the site's files (a site file of the same
    distribution and version replaces the shipped one). Cached per the site files' content."""
    return _load(overlay, content_key(overlay_paths(overlay)))


@cache
def _load(overlay: Path | None, key: tuple[tuple[str, int, int], ...]) -> dict[str, OsEntry]:
    del overlay  # the key says which files, and their content
    documents: dict[str, dict[str, Any]] = {}
    origins: dict[str, str] = {}
    for name in data_names("os"):
        if name.endswith(".yaml"):
            try:
                document = load_yaml(f"os/{name}")
            except yaml.YAMLError as exc:
                raise UsageError(f"ascend_env/data/os/{name}: {yaml_problem(exc)}") from None
            file_id = _file_id(document, name)
            documents[file_id], origins[file_id] = document, ""
    site: list[tuple[str, Path]] = []
    for path_text, _, _ in key:
        path = Path(path_text)
        document = _read_site_file(path)
        file_id = _file_id(document, path.name)
        documents[file_id], origins[file_id] = document, str(path)
        site.append((file_id, path))
    keys: dict[str, OsEntry] = {}
    for file_id in documents:
        origin = origins[file_id]
        try:
            entries = _entries(_expand(file_id, documents), origin)
        except (ValidationError, ValueError) as exc:
            where = f"OS file {origin}" if origin else f"ascend_env/data/os/{file_id}.yaml"
            raise UsageError(f"{where}: {_problem(exc)}") from None
        keys.update((entry.key, entry) for entry in entries)
    return dict(sorted(keys.items()))


def _problem(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:5])
    return str(exc)


# -- matching -----------------------------------------------------------------------------------

def normal_arch(arch: str | None) -> str | None:
    """The kernel's machine name for an architecture (`arm64` -> `aarch64`)."""
    if not arch:
        return None
    arch = arch.strip()
    return _ARCH_ALIASES.get(arch, arch)


def _rule_holds(rule: Rule, release: Mapping[str, str]) -> bool:
    return all(re.fullmatch(pattern, release.get(key, "")) for key, pattern in rule.items())


def _best_rule(entry: OsEntry, release: Mapping[str, str]) -> int:
    """How specific the most specific rule that holds is (its number of keys); 0 = none."""
    return max((len(rule) for rule in entry.match if _rule_holds(rule, release)), default=0)


def _numbers(text: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", text))


def _closeness(wanted: tuple[int, ...], entry: OsEntry) -> tuple[int, int]:
    """Sorts the nearest first: the longest equal start, then the smallest step after it
    (versions padded with 0, so 24.03 is 24.03 SP0)."""
    have = _numbers(entry.version)
    size = max(len(wanted), len(have))
    a, b = wanted + (0,) * (size - len(wanted)), have + (0,) * (size - len(have))
    common = next((i for i in range(size) if a[i] != b[i]), size)
    return (-common, abs(a[common] - b[common]) if common < size else 0)


def _release_numbers(release: Mapping[str, str]) -> tuple[int, ...]:
    """VERSION_ID's numbers and the service pack VERSION names (22.03 (LTS-SP4) -> 22, 3, 4)."""
    service_pack = re.search(r"SP(\d+)", release.get("VERSION", ""))
    return _numbers(release.get("VERSION_ID", "")) + (
        (int(service_pack.group(1)),) if service_pack else ())


_VERSION_KEYS = frozenset({"VERSION_ID", "VERSION", "VERSION_CODENAME", "PROJECT_CODENAME"})


def _kind(entry: OsEntry, release: Mapping[str, str]) -> int:
    """How many of an entry's conditions other than the version ones the host meets."""
    return max(sum(1 for key, pattern in rule.items()
                   if key not in _VERSION_KEYS and re.fullmatch(pattern, release.get(key, "")))
               for rule in entry.match)


def _shares_id(entry: OsEntry, ids: list[str]) -> bool:
    return any(re.fullmatch(rule["ID"], one, re.IGNORECASE)
               for rule in entry.match for one in ids if one)


def _nearest(release: Mapping[str, str], arch: str | None, keys: Mapping[str, OsEntry]
             ) -> tuple[str | None, str]:
    host_id = release.get("ID", "")
    likes = release.get("ID_LIKE", "").split()
    how = "the same ID"
    related = [e for e in keys.values() if _shares_id(e, [host_id])]
    if not related:
        how = "an ID its ID_LIKE names"
        related = [e for e in keys.values() if _shares_id(e, likes)]
    if not related:
        return None, (f"no OS of the data has ID {host_id or '(none)'}"
                      + (f" or one of ID_LIKE {' '.join(likes)}" if likes else ""))
    wanted = _release_numbers(release)
    same_arch = [e for e in related if e.arch == arch] or related
    # The same kind first (Kylin server, not Kylin desktop, for an unknown Kylin server),
    # then the closest version.
    best = min(same_arch, key=lambda e: (-_kind(e, release), _closeness(wanted, e), e.key))
    return best.key, f"nearest by {how} and the closest version"


def matching_keys(release: Mapping[str, str], keys: Mapping[str, OsEntry] | None = None
                  ) -> list[str]:
    """Every key one of whose rules this os-release meets, whatever its architecture."""
    keys = load_os_keys() if keys is None else keys
    return [key for key, entry in keys.items() if _best_rule(entry, release)]


def match_os(release: Mapping[str, str], arch: str | None,
             keys: Mapping[str, OsEntry] | None = None) -> OsMatch:
    """The OS key of a host from its os-release values (KEY -> value, as parsed) and machine
    architecture; when none fits, the nearest key and why."""
    keys = load_os_keys() if keys is None else keys
    arch = normal_arch(arch)
    scored = [(score, entry) for entry in keys.values()
              if (score := _best_rule(entry, release))]
    shown = release.get("PRETTY_NAME") or " ".join(filter(None, (
        release.get("ID"), release.get("VERSION") or release.get("VERSION_ID")))) \
        or "this os-release"
    if not scored:
        nearest, why = _nearest(release, arch, keys)
        return OsMatch(key=None, nearest=nearest,
                       reason=f"{shown} is not in the OS data ({why}). {ADD_OS}")
    top = max(score for score, _ in scored)
    # A site's file wins over the shipped one where both recognise the host equally well.
    found = sorted((e for s, e in scored if s == top), key=lambda e: (not e.origin, e.key))
    on_arch = [e for e in found if e.arch == arch]
    if on_arch:
        return OsMatch(key=on_arch[0].key, entry=on_arch[0])
    other = found[0]
    supported = ", ".join(sorted({e.arch for e in found}))
    return OsMatch(key=None, nearest=other.key,
                   reason=f"{other.name} is in the OS data for {supported} only, not for "
                          f"{arch or 'an unknown architecture'}. {ADD_OS}")


def spec_key(distribution: str, version: str, arch: str) -> str:
    """The OS key a spec names (os.family, os.version, hardware.arch)."""
    return f"{distribution}-{version}-{arch}"


def unknown_os(distribution: str, version: str, arch: str,
               keys: Mapping[str, OsEntry] | None = None) -> tuple[str, str, str] | None:
    """None when a spec's OS is a known key, else (key path, message, value) naming what is
    known there."""
    keys = load_os_keys() if keys is None else keys
    if spec_key(distribution, version, arch) in keys:
        return None
    same = [e for e in keys.values() if e.distribution == distribution]
    if not same:
        known = sorted({e.distribution for e in keys.values()})
        return ("os.family", f"no OS data for distribution {distribution!r}; known: "
                f"{', '.join(known)}. {ADD_OS}", distribution)
    versions = [e for e in same if e.version == version]
    if not versions:
        known = sorted({e.version for e in same}, key=_numbers)
        return ("os.version", f"no OS data for {distribution} {version}; known versions: "
                f"{', '.join(known)}. {ADD_OS}", version)
    return ("hardware.arch", f"{versions[0].name} is in the OS data for "
            f"{', '.join(sorted(e.arch for e in versions))} only (the vendor's support), not "
            f"{arch}; known keys: {', '.join(e.key for e in versions)}. {ADD_OS}", arch)
