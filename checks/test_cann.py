"""CANN: installed, the spec's release, operator package and NNAL of the same release."""

from __future__ import annotations

import shlex

import pytest

from ascend_env.core.versions import same_release
from ascend_env.doctor.findings import fail, failure, observe, warn
from ascend_env.facts.model import CannFacts, DriverFacts, Facts
from ascend_env.spec.envspec import EnvSpec

pytestmark = [pytest.mark.category("cann"), pytest.mark.level(1)]

INSTALL_CANN = "ascend-env install --profile <profile> --components cann"


def _same(a: str | None, b: str | None) -> bool:
    # The one identity every check uses (case, npu-smi build suffixes, community tags).
    return a is not None and b is not None and same_release(a, b)


def test_installed(facts: Facts, driver: DriverFacts, spec: EnvSpec | None) -> None:
    """cann.installed: the CANN toolkit is installed."""
    del driver
    if facts.cann is None:
        message = "CANN is not installed (no toolkit under the install path)"
        details = {"observed": "no ascend-toolkit/latest or cann/ with a version record",
                   "expected": "the CANN toolkit and its operator package",
                   "why": "every framework needs CANN's runtime, compiler and operators",
                   "manual": INSTALL_CANN}
        if spec is None:
            warn(message=message + ": fine on a host whose containers bring CANN", **details)
        fail(message=message, **details)
    observe(f"CANN {facts.cann.version_raw} ({facts.cann.layout} layout) in {facts.cann.home}")


def test_linked(cann: CannFacts) -> None:
    """cann.linked: the toolkit is reached through its layout's `cann` or `latest` link."""
    link = (f"{cann.install_path}/cann" if cann.layout == "new"
            else f"{cann.install_path}/ascend-toolkit/latest")
    # The paths jobs use go through the link: 8.5+ documents <install>/cann/set_env.sh, the
    # older ascend-toolkit/set_env.sh sets ASCEND_HOME_PATH=<install>/ascend-toolkit/latest
    # (https://www.hiascend.com/document/detail/zh/canncommercial/850/softwareinst/instg/instg_0008.html;
    # https://hiascend.com/document/detail/zh/CANNCommunityEdition/800alpha001/apiref/envref/envref_07_0002.html).
    uses = (f"source {link}/set_env.sh (8.5+'s environment script) or use {link}"
            if cann.layout == "new" else
            f"source {cann.install_path}/ascend-toolkit/set_env.sh (ASCEND_HOME_PATH={link})")
    why = (f"jobs that {uses} find no CANN there (libascendcl.so: cannot open shared object "
           "file)")
    if cann.linked is None:
        warn(message=f"cannot tell whether {link} leads to CANN {cann.version_raw}",
             observed=f"CANN {cann.version_raw} in {cann.home}; the capture does not show {link}",
             expected=f"{link} -> {cann.home}", why=why, manual=f"ls -ld {shlex.quote(link)}")
    assert cann.linked, failure(
        message=f"CANN {cann.version_raw} in {cann.home} has no {link} link: its install "
                "stopped before the end",
        observed=f"CANN {cann.version_raw} in {cann.home}; {link} missing, broken or leading "
                 "to no toolkit",
        expected=f"{link} -> {cann.home} (the toolkit's installer makes it last)", why=why,
        manual="re-run the toolkit install, which makes the link: " + INSTALL_CANN)
    observe(f"{link} -> {cann.home}")


def test_version(cann: CannFacts, with_spec: EnvSpec) -> None:
    """cann.version: the installed CANN is the spec's release."""
    wanted = with_spec.cann.version
    assert cann.version is not None and _same(cann.version_raw, wanted.raw), failure(
        message=f"CANN {cann.version_raw} is installed, the spec wants {wanted.raw}",
        observed=f"CANN {cann.version_raw}" + (
            f" (also installed: {', '.join(cann.installed_versions)})"
            if len(cann.installed_versions) > 1 else ""),
        expected=f"CANN {wanted.raw} (cann.version of spec {with_spec.name})",
        why="torch_npu and MindSpore are built against one CANN release",
        manual=f"ascend-env install --spec <spec> --components cann (CANN {wanted.raw})")
    observe(f"CANN {cann.version_raw}", wanted.raw)


def test_ops(cann: CannFacts, spec: EnvSpec | None) -> None:
    """cann.ops: the operator package (ops/kernels) is installed, same release as the toolkit."""
    if spec is not None and not {"ops", "kernels"} & set(spec.cann.packages):
        pytest.skip("the spec installs no operator package")
    kind = "ops" if cann.layout == "new" else "kernels"
    package = cann.packages.get("ops") or cann.packages.get("kernels")
    assert package is not None, failure(
        message=f"the CANN operator package ({kind}) is not installed; the toolkit is alone",
        observed=f"toolkit {cann.version_raw}, no {kind} package (no opp_kernel in version.cfg)",
        expected=f"Ascend-cann-<chip>-{kind} {cann.version_raw} in the same path",
        why="without the chip's operator binaries every operator compiles at run time or "
            "fails (from 8.5.0 ops is mandatory)",
        manual=f"install Ascend-cann-<chip>-{'ops' if kind == 'ops' else 'kernels'}_"
               f"{cann.version_raw}_linux-<arch>.run --install "
               f"--install-path={shlex.quote(cann.install_path)}, or "
               + INSTALL_CANN)
    assert _same(package.version, cann.version_raw), failure(
        message=f"the {package.name} package is {package.version}, the toolkit is "
                f"{cann.version_raw}",
        observed=f"{package.name} {package.version} (from {package.source}), toolkit "
                 f"{cann.version_raw}",
        expected=f"{package.name} {cann.version_raw}",
        why="operators of another release do not match the toolkit's runtime: kernels fail "
            "to load or give wrong results",
        manual=f"reinstall the {package.name} package of CANN {cann.version_raw}")
    observe(f"{package.name} {package.version}", cann.version_raw)


def test_nnal(cann: CannFacts, spec: EnvSpec | None) -> None:
    """cann.nnal: NNAL (ATB), where installed or wanted, is the toolkit's release."""
    package = cann.packages.get("nnal")
    wanted = spec is not None and "nnal" in spec.cann.packages
    if package is None and not wanted:
        pytest.skip("NNAL is not installed and not asked for")
    assert package is not None, failure(
        message="NNAL (ATB) is not installed; the spec lists it",
        observed="no nnal/atb/latest/atb/version.info", expected=f"NNAL {cann.version_raw}",
        why="torch_npu's ATB operators need libatb.so (ImportError: libatb.so)",
        manual=f"install Ascend-cann-nnal_{cann.version_raw}_linux-<arch>.run after sourcing "
               "set_env.sh")
    assert _same(package.version, cann.version_raw), failure(
        message=f"NNAL {package.version} does not match the toolkit {cann.version_raw}",
        observed=f"NNAL {package.version}", expected=f"NNAL {cann.version_raw}",
        why="ATB of another release fails with undefined symbols (_ZN3atb...)",
        manual=f"install NNAL {cann.version_raw}")
    observe(f"NNAL {package.version}")


def test_set_env_script(cann: CannFacts) -> None:
    """cann.set-env: the toolkit's set_env.sh is there."""
    assert cann.set_env is not None, failure(
        message="CANN's set_env.sh is missing",
        observed=f"no {cann.install_path}/cann/set_env.sh or ascend-toolkit/set_env.sh",
        expected="set_env.sh beside the toolkit", why="it defines ASCEND_HOME_PATH, "
        "LD_LIBRARY_PATH and PYTHONPATH for every CANN user; its absence means a broken install",
        manual="reinstall the toolkit: " + INSTALL_CANN)
    observe(cann.set_env)
