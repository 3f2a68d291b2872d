"""Fake vendor installers: names, flags, failures and on-disk layout."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import zipfile
from pathlib import Path

import pytest

from tests.sim import packages
from tests.sim.fixtures import ScratchRoots
from tests.sim.provision import HOST_PKG_DIR, in_root

pytestmark = pytest.mark.sim

ARCH = os.uname().machine
OTHER_ARCH = "aarch64" if ARCH == "x86_64" else "x86_64"
A = "/usr/local/Ascend"


@pytest.mark.parametrize(("chip", "cann", "hdk", "arch", "expected"), [
    ("910b", "8.5.0", "25.5.0", "x86_64", {
        "driver": "Ascend-hdk-910b-npu-driver_25.5.0_linux-x86-64.run",
        "hdk-npu-bundle": "Ascend-hdk-910b-npu_25.5.0_linux-x86-64.zip",
        "toolkit": "Ascend-cann-toolkit_8.5.0_linux-x86_64.run",
        "ops": "Ascend-cann-910b-ops_8.5.0_linux-x86_64.run",
        "nnal": "Ascend-cann-nnal_8.5.0_linux-x86_64.run"}),
    ("910_93", "8.5.0", "25.5.0", "aarch64", {"ops": "Ascend-cann-A3-ops_8.5.0_linux-aarch64.run"}),
    ("910b", "8.1.RC1", "25.0.RC1", "aarch64", {
        "driver": "Ascend-hdk-910b-npu-driver_25.0.rc1.1_linux-aarch64.run",
        "firmware": "Ascend-hdk-910b-npu-firmware_7.7.0.1.231.run",
        "ops": "Ascend-cann-kernels-910b_8.1.RC1_linux-aarch64.run"}),
    ("910_93", "8.2.RC1", "25.2.0", "x86_64",
     {"ops": "Atlas-A3-cann-kernels_8.2.RC1_linux-x86_64.run"}),
    ("910b", "8.0.RC1", "24.1.rc1", "x86_64", {
        "ops": "Ascend-cann-kernels-910b_8.0.RC1_linux.run",
        "firmware": "Ascend-hdk-910b-npu-firmware_7.1.0.6.220.run"}),
    ("910b", "8.0.RC2.alpha002", "24.1.rc2", "x86_64",
     {"ops": "Ascend-cann-kernels-910b_8.0.RC2.alpha002_linux.run"}),
    ("910b", "8.5.0.alpha001", "25.3.RC1", "aarch64",
     {"ops": "Ascend-cann-kernels-910b_8.5.0.alpha001_linux-aarch64.run",
      "driver": "Ascend-hdk-910b-npu-driver_25.3.rc1_linux-aarch64.run"}),
    ("310p", "9.0.0-beta.1", "26.0.RC1", "x86_64",
     {"ops": "Ascend-cann-310p-ops_9.0.0-beta.1_linux-x86_64.run",
      "toolkit": "Ascend-cann-toolkit_9.0.0-beta.1_linux-x86_64.run"}),
])
def test_file_names_per_era(chip: str, cann: str, hdk: str, arch: str,
                            expected: dict[str, str]) -> None:
    names = packages.names(chip, cann, hdk, arch)
    for kind, name in expected.items():
        assert names[kind] == name


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("repo")
    packages.build_repo(d, chip="910b", cann="8.5.0", hdk="25.5.0", arch=ARCH)
    return d


@pytest.fixture(scope="module")
def repo_old(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("repo-old")
    packages.build_repo(d, chip="910b", cann="8.1.RC1", hdk="25.0.RC1", arch=ARCH)
    return d


def _names(cann: str = "8.5.0", hdk: str = "25.5.0", arch: str = ARCH) -> dict[str, str]:
    return packages.names("910b", cann, hdk, arch)


def _stage(root: Path, repo: Path) -> None:
    d = root / HOST_PKG_DIR.lstrip("/")
    d.mkdir(parents=True, exist_ok=True)
    for f in repo.iterdir():
        (d / f.name).write_bytes(f.read_bytes())
        (d / f.name).chmod(0o755)


def run(root: Path, cmd: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return in_root(root, f"cd {HOST_PKG_DIR} && {cmd}", stdin=stdin)


USER = ("groupadd HwHiAiUser && useradd -g HwHiAiUser -d /home/HwHiAiUser -m HwHiAiUser "
        "-s /bin/bash")


def test_catalogue_overlay_matches_files(repo: Path) -> None:
    overlay = json.loads((repo / "catalogue-overlay.json").read_text())
    entries = [f for comp in overlay["components"].values() for v in comp.values()
               for f in v["files"]]
    assert {e["filename"] for e in entries} == {
        p.name for p in repo.iterdir() if p.name != "catalogue-overlay.json"}
    for e in entries:
        assert e["sha256"] == hashlib.sha256((repo / e["filename"]).read_bytes()).hexdigest()
        assert set(e) >= {"filename", "sha256", "url", "arch", "kind", "file_version"}
    bundle = next(e for e in entries if e["kind"] == "hdk-npu-bundle")
    assert bundle["chip"] == "910b"
    assert bundle["file_version"] == "25.5.0"
    if ARCH == "x86_64":
        assert bundle["arch_token_in_name"] == "x86-64"
    n = _names()
    with zipfile.ZipFile(repo / n["hdk-npu-bundle"]) as z:
        assert sorted(z.namelist()) == sorted([n["driver"], n["firmware"]])


def test_check_version_and_extract(repo: Path, tmp_path: Path) -> None:
    run_file = repo / _names()["toolkit"]
    res = subprocess.run([str(run_file), "--check"], capture_output=True, text=True, check=False)
    assert res.returncode == 0
    assert "SHA256 checksums are OK" in res.stdout + res.stderr
    assert "All good." in res.stdout + res.stderr
    res = subprocess.run([str(run_file), "--quiet", "--version"], capture_output=True, text=True,
                         check=False)
    assert res.stdout.strip() == "8.5.0"
    res = subprocess.run([str(run_file), "--noexec", f"--extract={tmp_path}/x"],
                         capture_output=True, text=True, check=False)
    assert res.returncode == 0
    assert (tmp_path / "x" / "install.py").exists()


def test_full_stack_new_layout(sim_scratch: ScratchRoots, repo: Path) -> None:
    root = sim_scratch.new()
    _stage(root, repo)
    n = _names()
    assert run(root, USER).returncode == 0
    for cmd in (f"./{n['driver']} --nox11 --full --quiet --install-for-all",
                f"./{n['firmware']} --nox11 --full --quiet",
                f"./{n['toolkit']} --nox11 --install --quiet --install-for-all",
                f"./{n['ops']} --nox11 --install --quiet --install-for-all"):
        res = run(root, cmd)
        assert res.returncode == 0, res.stdout + res.stderr
    r = root / A.lstrip("/")
    assert (r / "driver/version.info").read_text().startswith("Version=25.5.0\n")
    assert "compatible_version_fw=" in (r / "driver/version.info").read_text()
    assert (r / "driver/tools/upgrade-tool").exists()
    assert (r / "firmware/version.info").read_text().startswith("Version=7.")
    info = (root / "etc/ascend_install.info").read_text()
    assert "Driver_Install_For_All=yes" in info
    assert "Firmware_Install_Path_Param=/usr/local/Ascend" in info
    assert (r / "cann").readlink() == Path("cann-8.5.0")
    assert (r / "ascend-toolkit/latest").readlink() == Path("../cann-8.5.0")
    tk = (r / f"cann/{ARCH}-linux/ascend_toolkit_install.info").read_text()
    assert f"path=/usr/local/Ascend/cann-8.5.0/{ARCH}-linux" in tk
    assert "innerversion=V100R001C25SPC001B212" in tk
    cfg = (r / "cann-8.5.0/version.cfg").read_text()
    assert "opp_kernel_installed_version=[" in cfg
    env = (r / "cann/set_env.sh").read_text()
    assert "export ASCEND_TOOLKIT_HOME=/usr/local/Ascend/cann-8.5.0" in env
    assert "export ASCEND_TOOLKIT_LATEST_HOME=/usr/local/Ascend/ascend-toolkit/latest" in env
    assert (r / "ascend-toolkit/set_env.sh").exists()
    assert (root / "usr/local/dcmi/libdcmi.so").exists()
    smi = root / "usr/local/bin/npu-smi"
    # The Python fake itself (target/npu_smi.py); nothing else of npu-smi's.
    assert smi.read_bytes().startswith(b"#!/usr/bin/python3 -S\n")
    assert smi.stat().st_mode & 0o777 == 0o755
    assert sorted(p.name for p in smi.parent.iterdir() if "npu" in p.name) == ["npu-smi"]
    assert run(root, "npu-smi info -t board -i 0").stdout.count("25.5.0") == 1
    # nnal needs the toolkit environment sourced first (CCI order).
    res = run(root, f"./{n['nnal']} --install --quiet")
    assert res.returncode == 1
    assert "set_env.sh" in res.stderr
    res = run(root, f". {A}/cann/set_env.sh && ./{n['nnal']} --install --quiet --install-for-all")
    assert res.returncode == 0, res.stderr
    assert (r / "nnal/atb/latest/atb/cxx_abi_0/lib/libatb.so").exists()
    assert (r / "nnal/atb/latest/atb/cxx_abi_1/lib/libatb.so").exists()
    # An upgrade while a process holds a davinci node is refused
    # (https://support.huaweicloud.com/bestpractice-aics/aics_bp_0106.html).
    sim_state = json.loads((root / "var/lib/ascend-sim/state.json").read_text())
    sim_state["npus"][0]["processes"] = [{"pid": 9, "name": "python3", "memory_mb": 1}]
    (root / "var/lib/ascend-sim/state.json").write_text(json.dumps(sim_state))
    res = run(root, f"./{n['driver']} --upgrade --quiet")
    assert "The davinci nodes are occupied by some processes" in res.stderr
    res = run(root, f"./{n['driver']} --upgrade --quiet --force")
    assert res.returncode == 0, res.stderr
    # Uninstalling the driver takes npu-smi along.
    res = run(root, f"./{n['driver']} --uninstall --force")
    assert res.returncode == 0, res.stderr
    assert not smi.exists()


def test_old_layout_and_upgrade_rule(sim_scratch: ScratchRoots, repo_old: Path,
                                     repo: Path) -> None:
    root = sim_scratch.new()
    _stage(root, repo_old)
    _stage(root, repo)
    old, new = _names("8.1.RC1", "25.0.RC1"), _names()
    res = run(root, f"./{old['toolkit']} --install --quiet")
    assert res.returncode == 0, res.stderr
    r = root / A.lstrip("/")
    assert (r / "ascend-toolkit/latest").readlink() == Path("8.1.RC1")
    info = (r / f"ascend-toolkit/latest/{ARCH}-linux/ascend_toolkit_install.info").read_text()
    assert f"path=/usr/local/Ascend/ascend-toolkit/8.1.RC1/{ARCH}-linux" in info
    assert "ASCEND_TOOLKIT_LATEST_HOME" not in (r / "ascend-toolkit/set_env.sh").read_text()
    # Kernels of another version than the toolkit are refused.
    res = run(root, f"./{new['ops']} --install --quiet")
    assert res.returncode == 1
    assert "requires Ascend-cann-toolkit 8.5.0" in res.stderr
    # 8.5.0 over an older CANN needs --upgrade
    # (https://www.hiascend.com/document/detail/zh/canncommercial/850/softwareinst/instg/instg_0008.html).
    res = run(root, f"./{new['toolkit']} --install --quiet")
    assert res.returncode == 1
    assert "--upgrade" in res.stderr
    res = run(root, f"./{new['toolkit']} --upgrade --quiet")
    assert res.returncode == 0, res.stderr
    assert not (r / "ascend-toolkit/8.1.RC1").exists()
    # and --upgrade cannot go back.
    res = run(root, f"./{old['toolkit']} --upgrade --quiet")
    assert "cannot downgrade" in res.stderr
    res = run(root, f"./{new['toolkit']} --uninstall")
    assert res.returncode == 0, res.stderr
    assert not (r / "cann-8.5.0").exists()


def test_failures(sim_scratch: ScratchRoots, repo: Path, tmp_path: Path) -> None:
    root = sim_scratch.new(kernel_headers=False)
    _stage(root, repo)
    n = _names()
    res = run(root, f"./{n['driver']} --full --quiet --install-for-all")
    assert res.returncode == 1
    assert "(HwHiAiUser:HwHiAiUser) does not exist" in res.stderr
    assert run(root, USER).returncode == 0
    res = run(root, f"./{n['driver']} --full --quiet --install-for-all")
    assert "Do you want to try build driver after input kernel absolute path? [y/n]" in res.stdout
    assert "Driver_ko_install failed" in res.stderr
    res = run(root, f"./{n['firmware']} --full --quiet")
    assert res.returncode == 1
    assert "install the driver package first" in res.stderr
    res = run(root, f"./{n['ops']} --install --quiet")
    assert res.returncode == 1
    assert "requires Ascend-cann-toolkit 8.5.0" in res.stderr
    res = run(root, f"./{n['toolkit']} --install", stdin="n\n")
    assert res.returncode == 1
    assert "EULA" in res.stdout + res.stderr
    res = run(root, f"./{n['toolkit']} --install", stdin="y\n")
    assert res.returncode == 0, res.stderr
    res = run(root, f"./{n['driver']} --upgrade --quiet --install-for-all")
    assert "--upgrade cannot be used together with" in res.stderr
    res = run(root, f"./{n['toolkit']} --bogus")
    assert "Unsupported parameter: --bogus" in res.stderr
    (root / "usr/bin/lspci").unlink()
    (root / f"lib/modules/{os.uname().release}/build").mkdir(parents=True)
    res = run(root, f"./{n['driver']} --full --quiet --install-for-all")
    assert "[ERROR]The list of missing tools: lspci" in res.stderr
    foreign = tmp_path / "foreign"
    packages.build_repo(foreign, chip="910b", cann="8.5.0", hdk="25.5.0", arch=OTHER_ARCH)
    _stage(root, foreign)
    fn = _names(arch=OTHER_ARCH)
    res = run(root, f"./{fn['toolkit']} --install --quiet")
    assert res.returncode == 1
    assert f"architecture of the package ({OTHER_ARCH})" in res.stderr
    assert (root / "var/log/ascend_seclog/ascend_install.log").exists()
