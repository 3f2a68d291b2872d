"""Installed CANN: version.cfg, the packages' install records, NNAL/ATB's version.info.

Both layouts: 8.5+ `<base>/cann -> cann-<ver>`, and the older `ascend-toolkit/latest -> <ver>`.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from ascend_env.core.versions import AscendVersion, try_parse
from ascend_env.facts.installed import (
    BRACKETS,
    install_paths,
    parse_version_ranges,
    unique_paths,
)
from ascend_env.facts.model import CannFacts, CannPackage, VersionRange
from ascend_env.facts.reader import CaptureReader
from ascend_env.facts.values import none_if_na, parse_kv


@dataclass(kw_only=True, slots=True)
class InstallInfo:
    """ascend_<package>_install.info of a CANN package (samples:
    https://github.com/vllm-project/vllm-ascend/issues/198,
    https://github.com/vllm-project/vllm-ascend/issues/1047)."""

    package_name: str | None = None
    version: str | None = None
    inner_version: str | None = None
    compatible_version: list[VersionRange] = field(default_factory=list)
    arch: str | None = None
    os: str | None = None
    path: str | None = None
    values: dict[str, str] = field(default_factory=dict)


def parse_install_info(text: str) -> InstallInfo:
    """A toolkit/nnae/nnrt/ops install record."""
    values = parse_kv(text)
    return InstallInfo(
        package_name=none_if_na(values.get("package_name")),
        version=none_if_na(values.get("version")),
        inner_version=none_if_na(values.get("innerversion")),
        compatible_version=parse_version_ranges(values.get("compatible_version", "")),
        arch=none_if_na(values.get("arch")),
        os=none_if_na(values.get("os")),
        path=none_if_na(values.get("path")),
        values=values,
    )


@dataclass(kw_only=True, slots=True)
class BuildVersion:
    """One `[<component build>:<CANN version>]` item of version.cfg."""

    build: str
    version: str


@dataclass(kw_only=True, slots=True)
class VersionCfg:
    """CANN version.cfg: per component, the running/upgrade/installed build and release."""

    running: dict[str, list[BuildVersion]] = field(default_factory=dict)
    upgrade: dict[str, list[BuildVersion]] = field(default_factory=dict)
    installed: dict[str, list[BuildVersion]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def installed_version(self, component: str) -> str | None:
        """The release of a component's last installed build, if any."""
        items = self.installed.get(component)
        return items[-1].version if items else None


_CFG_LINE = re.compile(r"^\s*([A-Za-z0-9_]+?)_(running|upgrade|installed)_version\s*=\s*(.*)$")


def parse_version_cfg(text: str) -> VersionCfg:
    """`<component>_<running|upgrade|installed>_version=[build:version]` lines."""
    cfg = VersionCfg()
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _CFG_LINE.match(line)
        if match is None:
            cfg.notes.append(f"unparsed version.cfg line: {line.strip()[:120]}")
            continue
        component, kind, value = match.groups()
        items = []
        for inner in BRACKETS.findall(value):
            build, sep, version = inner.rpartition(":")
            if sep and build.strip() and version.strip():
                items.append(BuildVersion(build=build.strip(), version=version.strip()))
        getattr(cfg, kind)[component] = items
    return cfg


@dataclass(kw_only=True, slots=True)
class CannInstallRecord:
    """/etc/Ascend/ascend_cann_install.info: where CANN was installed."""

    install_path: str | None = None
    values: dict[str, str] = field(default_factory=dict)


def parse_cann_install_record(text: str) -> CannInstallRecord:
    """The `Install_Path=` record CANN leaves in /etc/Ascend."""
    values = parse_kv(text)
    return CannInstallRecord(install_path=none_if_na(values.get("Install_Path")), values=values)


@dataclass(kw_only=True, slots=True)
class AtbVersionInfo:
    """NNAL/ATB version.info: `Key : value` lines, unlike the KEY=VALUE files (https://github.com/vllm-project/vllm-ascend/issues/451)."""

    version: str | None = None
    build: str | None = None
    platform: str | None = None
    values: dict[str, str] = field(default_factory=dict)


def parse_atb_version_info(text: str) -> AtbVersionInfo:
    """`Ascend-cann-atb : 8.0.0`-style lines."""
    values = parse_kv(text, ":")
    return AtbVersionInfo(version=none_if_na(values.get("Ascend-cann-atb")),
                          build=none_if_na(values.get("Ascend-cann-atb Version")),
                          platform=none_if_na(values.get("Platform")), values=values)


def read_cann(r: CaptureReader, arch: str | None) -> CannFacts | None:
    """The CANN under the first install path that has one (ascend_cann_install.info's first)."""
    record = parse_cann_install_record(
        r.file("/etc/Ascend/ascend_cann_install.info") or "")
    for base in unique_paths([record.install_path, *install_paths(r)]):
        found = _cann_at(r, base, arch)
        if found is not None:
            return found
    return None


def _cann_at(r: CaptureReader, base: str, arch: str | None) -> CannFacts | None:
    """The CANN under one install path, either layout; None when none is there."""
    # New layout (8.5+): <base>/cann -> cann-<ver>; old: ascend-toolkit/latest -> <ver>.
    candidates: list[tuple[str, Literal["old", "new"]]] = [
        (f"{base}/cann", "new"), (f"{base}/ascend-toolkit/latest", "old")]
    # Without a `latest`/`cann` link (an interrupted install), the newest version folder.
    for version in reversed(_installed_versions(r, base)):
        candidates += [(f"{base}/cann-{version}", "new"),
                       (f"{base}/ascend-toolkit/{version}", "old")]
    for logical, named_layout in candidates:
        info_path, info = _toolkit_info(r, logical, arch)
        cfg_text = r.file(f"{logical}/version.cfg")
        if info is None and cfg_text is None:
            continue
        if not logical.endswith(("/cann", "/latest")):
            r.notes.append(f"no ascend-toolkit/latest or cann link under {base}; "
                           f"reading {logical}")
        cfg = parse_version_cfg(cfg_text or "")
        home = r.resolved(logical)
        # ascend-toolkit/latest is kept on 8.5+ as a link into cann-<ver>.
        layout: Literal["old", "new"] = (
            "new" if posixpath.basename(home).startswith("cann-") else named_layout)
        raw = (info.version if info else None) or cfg.installed_version("toolkit") or \
            parse_kv(r.file(f"{logical}/compiler/version.info") or "").get("Version")
        packages: dict[str, CannPackage] = {}
        if info is not None and info_path is not None:
            packages["toolkit"] = CannPackage(name="toolkit", version=info.version,
                                              path=info.path, arch=info.arch,
                                              source=info_path)
        elif raw:
            packages["toolkit"] = CannPackage(name="toolkit", version=raw,
                                              source=f"{logical}/version.cfg")
        kernels = cfg.installed_version("opp_kernel")
        if kernels:
            name = "ops" if layout == "new" else "kernels"
            packages[name] = CannPackage(name=name, version=kernels,
                                         source=f"{logical}/version.cfg")
        _other_install_infos(r, logical, packages)
        _runtime_packages(r, base, packages)
        set_env = next((p for p in (f"{base}/cann/set_env.sh",
                                    f"{base}/ascend-toolkit/set_env.sh")
                        if r.exists(p) or p in r.capture.files), None)
        return CannFacts(
            version=r.version(raw, f"CANN version in {logical}"), version_raw=raw,
            layout=layout, install_path=base, home=home,
            arch=(info.arch if info else None) or arch,
            packages=packages, installed_versions=_installed_versions(r, base),
            components={k: v[-1].version for k, v in cfg.installed.items() if v},
            kernel_socs=list(r.capture.listings.get(
                f"{logical}/opp/built-in/op_impl/ai_core/tbe/kernel", [])),
            set_env=set_env, linked=_linked(r, base, layout, logical),
            inner_version=info.inner_version if info else None,
            compatible_driver=list(info.compatible_version) if info else [])
    return None


def _linked(r: CaptureReader, base: str, layout: Literal["old", "new"], logical: str
            ) -> bool | None:
    """Whether the toolkit read from `logical` is reached through its layout's link, which
    the installer makes last; None when the capture did not look (CANN 8.5.0 install guide,
    https://www.hiascend.com/document/detail/zh/canncommercial/850/softwareinst/instg/instg_0008.html)."""
    link = f"{base}/cann" if layout == "new" else f"{base}/ascend-toolkit/latest"
    if logical == link:
        return True
    # Read elsewhere: the link is missing, broken or leads to no toolkit, if the probe saw it.
    info = r.capture.paths.get(link)
    if info is not None and info.type != "unknown":
        return False
    parent, name = posixpath.split(link)
    listing = r.capture.listings.get(parent)
    if listing is not None and name not in listing:
        return False
    return None


def _toolkit_info(r: CaptureReader, home: str, arch: str | None
                  ) -> tuple[str | None, InstallInfo | None]:
    """The toolkit's install record under `home`, this arch's first."""
    paths = sorted(p for p in r.capture.files
                   if p.startswith(home + "/") and p.endswith("/ascend_toolkit_install.info")
                   and p.count("/") == home.count("/") + 2)
    if not paths:
        return None, None
    preferred = [p for p in paths if arch and f"/{arch}-linux/" in p]
    chosen = (preferred or paths)[0]
    return chosen, parse_install_info(r.capture.files[chosen])


def _other_install_infos(r: CaptureReader, home: str, packages: dict[str, CannPackage]) -> None:
    """ops/kernels packages that leave an install record of their own."""
    for path, text in sorted(r.capture.files.items()):
        if not (path.startswith(home + "/") and path.endswith("_install.info")):
            continue
        info = parse_install_info(text)
        name = (info.package_name or "").lower()
        kind = "ops" if name.endswith("-ops") else "kernels" if "kernels" in name else None
        if kind is not None and kind not in packages:
            packages[kind] = CannPackage(name=kind, version=info.version, path=info.path,
                                         arch=info.arch, source=path)


def _runtime_packages(r: CaptureReader, base: str, packages: dict[str, CannPackage]) -> None:
    """NNAL (ATB), NNAE, TF plugin and NNRT, each with its own version file."""
    nnal = f"{base}/nnal/atb/latest/atb/version.info"
    if nnal not in r.capture.files:
        target = r.resolved(f"{base}/nnal/atb/latest")
        nnal = f"{target}/atb/version.info"
    if nnal in r.capture.files:
        atb = parse_atb_version_info(r.capture.files[nnal])
        packages["nnal"] = CannPackage(name="nnal", version=atb.version,
                                       arch=atb.platform, path=f"{base}/nnal/atb",
                                       source=nnal)
    for name, pattern in (("nnae", f"{base}/nnae/latest/ascend_nnae_install.info"),
                          ("tfplugin", f"{base}/tfplugin/latest/ascend_tfplugin_install.info")):
        if pattern in r.capture.files:
            info = parse_install_info(r.capture.files[pattern])
            packages[name] = CannPackage(name=name, version=info.version, path=info.path,
                                         arch=info.arch, source=pattern)
    for path in sorted(r.capture.files):
        if path.startswith(f"{base}/nnrt/latest/") and path.endswith("nnrt_install.info"):
            info = parse_install_info(r.capture.files[path])
            packages["nnrt"] = CannPackage(name="nnrt", version=info.version, path=info.path,
                                           arch=info.arch, source=path)


def _installed_versions(r: CaptureReader, base: str) -> list[str]:
    """Version folders under `base`, both layouts, oldest first."""
    versions = [n for n in r.capture.listings.get(f"{base}/ascend-toolkit", [])
                if n not in ("latest", "set_env.sh") and try_parse(n) is not None]
    versions += [n[len("cann-"):] for n in r.capture.listings.get(base, [])
                 if n.startswith("cann-")]
    return sorted(set(versions), key=lambda v: try_parse(v) or AscendVersion.parse("0.0.0"))


# Parsers by the folder name of their samples under tests/data/.
PARSERS: dict[str, Callable[[Any], Any]] = {
    "install_info": parse_install_info,
    "version_cfg": parse_version_cfg,
    "cann_install_record": parse_cann_install_record,
    "atb_version_info": parse_atb_version_info,
}
