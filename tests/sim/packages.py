"""Fake vendor packages: makeself .run files (and zips) named exactly like the real ones."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.sim import stublibs, vendordata
from tests.sim.chips import get_chip
from tests.sim.layout import SimError, cache_dir, secure_mkdir

TARGET = Path(__file__).parent / "target"
REPO_VERSION = 2
OBS = "https://ascend-repo.obs.cn-east-2.myhuaweicloud.com"

# Which stub libraries each package kind lays down, and where (real trees in
# docs/en/faultdiag/user_guide/03_collecting_logs.md of https://github.com/Ascend/mind-cluster;
# sonames as in https://pypi.org/project/torch-npu/2.7.1.post2/).
LIB_PLACES: dict[str, dict[str, tuple[str, ...]]] = {
    "driver": {
        "lib64/driver": ("libascend_hal.so", "libdcmi.so"),
        "lib64/common": ("libc_sec.so", "libmmpa.so"),
    },
    "toolkit": {
        "lib64": ("libascendcl.so", "libhccl.so", "libge_runner.so", "libgraph.so",
                  "libacl_op_compiler.so", "libacl_tdt_channel.so", "libfmk_parser.so",
                  "libascend_protobuf.so"),
    },
    "nnal": {".": ("libatb.so",)},
}


@dataclass(frozen=True)
class FakeFile:
    """One file of a fake repo, as it goes into catalogue-overlay.json."""

    component: str  # NPU or CANN (ascend_env/data/catalogue.json components)
    component_version: str
    filename: str
    kind: str
    arch: str
    chip: str | None
    file_version: str
    url: str


@dataclass(frozen=True)
class Stack:
    """One chip's driver, firmware and CANN versions for one arch."""

    chip: str
    cann: str
    hdk: str
    arch: str
    firmware: str | None = None

    @property
    def hdk_file(self) -> str:
        return vendordata.hdk_file_version(self.hdk)

    @property
    def fw(self) -> str:
        return self.firmware or vendordata.firmware_for(self.hdk_file)


def hdk_arch(arch: str) -> str:
    return "x86-64" if arch == "x86_64" else arch


def names(chip: str, cann: str, hdk: str, arch: str, firmware: str | None = None
          ) -> dict[str, str]:
    """File names per kind for one stack, with each era's spelling (ascend_env/data/packages.yaml).
    """
    c = get_chip(chip)
    vendordata.check_cann(cann)
    hf = vendordata.hdk_file_version(hdk)
    fw = firmware or vendordata.firmware_for(hf)
    era = vendordata.ops_era(cann)
    if era == "kernels-noarch":
        ops = f"Ascend-cann-kernels-{c.ops_token}_{cann}_linux.run"
    elif era == "kernels":
        ops = (f"Atlas-A3-cann-kernels_{cann}_linux-{arch}.run" if c.ops_token == "A3"
               else f"Ascend-cann-kernels-{c.ops_token}_{cann}_linux-{arch}.run")
    else:
        ops = f"Ascend-cann-{c.ops_token}-ops_{cann}_linux-{arch}.run"
    return {
        "driver": f"Ascend-hdk-{c.hdk_token}-npu-driver_{hf}_linux-{hdk_arch(arch)}.run",
        "firmware": f"Ascend-hdk-{c.hdk_token}-npu-firmware_{fw}.run",
        "hdk-npu-bundle": f"Ascend-hdk-{c.hdk_token}-npu_{hf}_linux-{hdk_arch(arch)}.zip",
        "toolkit": f"Ascend-cann-toolkit_{cann}_linux-{arch}.run",
        "ops": ops,
        "nnal": f"Ascend-cann-nnal_{cann}_linux-{arch}.run",
    }


def _patched_header() -> Path:
    """makeself's header, changed to pass the vendor flags through as Ascend's .run do.

    Stock makeself rejects unknown flags and swallows --quiet; Ascend packages hand
    --full/--install/--quiet/... to their install script and accept --extract=<dir>.
    """
    src = Path("/usr/share/makeself/makeself-header.sh")
    if not src.exists():
        raise SimError("makeself is not installed: apt-get install -y makeself")
    text = src.read_text()
    out = cache_dir() / f"makeself-header-{hashlib.sha256(text.encode()).hexdigest()[:12]}.sh"
    if out.exists():
        return out
    edits = [
        ('    -q | --quiet)\n\tquiet=y\n\tnoprogress=y\n\tshift\n',
         '    -q | --quiet)\n\tquiet=y\n\tnoprogress=y\n'
         '\tpassthru="\\$passthru \\$1"\n\tshift\n'),
        ('    -*)\n\techo Unrecognized flag : "\\$1" >&2\n\tMS_Help\n\texit 1\n\t;;\n',
         '    --extract=*)\n\tkeep=y\n\ttargetdir="\\${1#--extract=}"\n\tshift\n\t;;\n'
         '    -*)\n\tpassthru="\\$passthru \\$1"\n\tshift\n\t;;\n'),
        ('eval "\\"\\$script\\" \\$scriptargs \\"\\\\\\$@\\""; res=\\$?;',
         'eval "\\"\\$script\\" \\$scriptargs \\$passthru \\"\\\\\\$@\\""; res=\\$?;'),
        ('\t\teval "\\"\\$script\\" \\$scriptargs \\"\\\\\\$@\\""; res=\\$?\n',
         '\t\teval "\\"\\$script\\" \\$scriptargs \\$passthru \\"\\\\\\$@\\""; res=\\$?\n'),
    ]
    for old, new in edits:
        if old not in text:
            raise SimError(f"unexpected makeself header {src}: cannot patch {old[:30]!r}")
        text = text.replace(old, new)
    text = text.replace("initargs=\"\\$@\"\n", "initargs=\"\\$@\"\npassthru=\n", 1)
    secure_mkdir(out.parent)
    out.write_text(text)
    return out


def _manifest(kind: str, st: Stack) -> dict[str, Any]:
    chip, cann, hdk, arch, fw = st.chip, st.cann, st.hdk, st.arch, st.fw
    c = get_chip(chip)
    hf = st.hdk_file
    inner, compat = vendordata.cann_inner(cann)
    base: dict[str, Any] = {"kind": kind, "arch": arch, "chip": chip, "soc": f"ascend{chip}"}
    if kind == "driver":
        base.update(package_name=f"Ascend-hdk-{c.hdk_token}-npu-driver", version=hf,
                    version_info=vendordata.driver_version_info(hf))
    elif kind == "firmware":
        base.update(package_name=f"Ascend-hdk-{c.hdk_token}-npu-firmware", version=fw,
                    arch="any", version_info=vendordata.firmware_version_info(fw, hf))
    else:
        pkg = {"toolkit": "Ascend-cann-toolkit", "nnal": "Ascend-cann-nnal"}.get(
            kind, names(chip, cann, hdk, arch)["ops"].split("_")[0])
        base.update(package_name=pkg, version=cann, innerversion=inner,
                    compatible_version=compat,
                    component_build=vendordata.component_build(cann))
    return base


def build_run(kind: str, st: Stack, out: Path) -> None:
    """Build one self-extracting .run with makeself."""
    stubs = stublibs.ensure_stubs()
    with tempfile.TemporaryDirectory(dir=cache_dir()) as tmp:
        pay = Path(tmp) / "pkg"
        pay.mkdir()
        shutil.copy2(TARGET / "installer.py", pay / "install.py")
        Path(pay / "install.py").chmod(0o755)
        (pay / "manifest.json").write_text(
            json.dumps(_manifest(kind, st), indent=2))
        if kind == "driver":
            for fake in ("npu_smi.py", "hccn_tool.py"):
                shutil.copy2(TARGET / fake, pay / fake)
        for sub, libs in LIB_PLACES.get(kind, {}).items():
            d = pay / "payload" / kind / sub
            d.mkdir(parents=True, exist_ok=True)
            for lib in libs:
                shutil.copy2(stubs / lib, d / lib)
        res = subprocess.run(
            ["makeself", "--quiet", "--nox11", "--sha256", "--nomd5", "--nocrc",
             "--header", str(_patched_header()), str(pay), str(out), out.stem, "./install.py"],
            capture_output=True, text=True, check=False,
        )
        if res.returncode != 0:
            raise SimError(f"makeself failed for {out.name}: {res.stderr.strip()}")
    Path(out).chmod(0o755)


def _sha256(p: Path) -> str:
    h = hashlib.sha256()
    with p.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _source_key() -> str:
    h = hashlib.sha256(f"{REPO_VERSION}".encode())
    # Sources, not build outputs: the fakes' and the stub libraries' (the stubs' build is
    # keyed apart, gcc's version included).
    for f in [*sorted(TARGET.glob("*.py")), *sorted(TARGET.glob("*.sh")), Path(__file__),
              Path(vendordata.__file__), Path(stublibs.__file__)]:
        h.update(f.read_bytes())
    return h.hexdigest()[:12]


def build_repo(dest: Path, *, chip: str, cann: str, hdk: str, arch: str,
               firmware: str | None = None) -> list[FakeFile]:
    """A fake vendor repo in `dest` plus catalogue-overlay.json; built once per key."""
    st = Stack(chip, cann, hdk, arch, firmware)
    n = names(chip, cann, hdk, arch, firmware)
    fw = st.fw
    key = hashlib.sha256(
        json.dumps([chip, cann, hdk, arch, fw, _source_key()]).encode()).hexdigest()[:16]
    cached = cache_dir() / f"repo-{key}"
    if not (cached / "catalogue-overlay.json").exists():
        tmp = secure_mkdir(cache_dir() / f"tmp-repo-{key}-{os.getpid()}")
        for kind in ("driver", "firmware", "toolkit", "ops", "nnal"):
            build_run(kind, st, tmp / n[kind])
        with zipfile.ZipFile(tmp / n["hdk-npu-bundle"], "w") as z:
            z.write(tmp / n["driver"], n["driver"])
            z.write(tmp / n["firmware"], n["firmware"])
        for kind in ("toolkit", "ops"):
            if n[kind].endswith(f"_linux-{arch}.run"):  # the vendor zips these (catalogue)
                with zipfile.ZipFile(tmp / n[kind].replace(".run", ".zip"), "w") as z:
                    z.write(tmp / n[kind], n[kind])
        files = _describe(tmp, st, n)
        (tmp / "catalogue-overlay.json").write_text(json.dumps(_overlay(tmp, files), indent=1))
        if cached.exists():
            shutil.rmtree(cached)
        tmp.rename(cached)
    dest.mkdir(parents=True, exist_ok=True)
    for f in cached.iterdir():
        shutil.copy2(f, dest / f.name)
    return _describe(dest, st, n)


def _describe(d: Path, st: Stack, n: dict[str, str]) -> list[FakeFile]:
    chip, cann, hdk, arch, fw = st.chip, st.cann, st.hdk, st.arch, st.fw
    hf = st.hdk_file
    c = get_chip(chip)
    hdk_url = f"{OBS}/Ascend%20HDK/Ascend%20HDK%20{hdk}/"
    cann_url = f"{OBS}/CANN/CANN%20{cann}/"
    out: list[FakeFile] = []
    for p in sorted(d.iterdir()):
        name = p.name
        if name == "catalogue-overlay.json":
            continue
        if name == n["hdk-npu-bundle"]:
            out.append(FakeFile("NPU", hdk, name, "hdk-npu-bundle", arch, chip, hf,
                                hdk_url + name))
        elif name == n["driver"]:
            out.append(FakeFile("NPU", hdk, name, "driver", arch, chip, hf, hdk_url + name))
        elif name == n["firmware"]:
            out.append(FakeFile("NPU", hdk, name, "firmware", "any", chip, fw, hdk_url + name))
        else:
            kind = next((k for k in ("toolkit", "ops", "nnal")
                         if name in (n[k], n[k].replace(".run", ".zip"))), None)
            if kind is None:
                continue
            if kind == "ops" and "kernels" in name:
                kind = "kernels"
            has_arch = name.endswith((f"-{arch}.run", f"-{arch}.zip"))
            out.append(FakeFile("CANN", cann, name, kind, arch if has_arch else "any",
                                c.ops_token if kind in ("ops", "kernels") else None, cann,
                                cann_url + name))
    return out


def _overlay(d: Path, files: list[FakeFile]) -> dict[str, Any]:
    comps: dict[str, Any] = {}
    for f in files:
        entry: dict[str, Any] = {
            "filename": f.filename,
            "sha256": _sha256(d / f.filename),
            "url": f.url,
            "arch": f.arch,
            "kind": f.kind,
            "file_version": f.file_version,
        }
        if f.chip:
            entry["chip"] = f.chip
        if "x86-64" in f.filename:
            entry["arch_token_in_name"] = "x86-64"
        comps.setdefault(f.component, {}).setdefault(f.component_version, {"files": []})
        comps[f.component][f.component_version]["files"].append(entry)
    return {
        "schema": "ascend-env-sim/catalogue-overlay/v1",
        "source": "tests.sim fake vendor packages (simulated; not vendor files)",
        "components": comps,
    }
