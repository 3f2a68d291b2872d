"""Environment: set_env.sh sourced by login shells; driver and CANN libraries resolvable."""

from __future__ import annotations

import posixpath
import shlex

import pytest

from ascend_env.doctor.findings import failure, observe, warn
from ascend_env.facts.model import CannFacts, DriverFacts, Facts

pytestmark = [pytest.mark.category("env"), pytest.mark.level(1)]

DRIVER_LIBS = ("libascend_hal.so",)
CANN_LIBS = ("libascendcl.so", "libhccl.so", "libge_runner.so", "libgraph.so",
             "libacl_op_compiler.so")


def _login_dirs(facts: Facts) -> set[str]:
    login = facts.env.login_vars or {}
    return {posixpath.normpath(d) for d in login.get("LD_LIBRARY_PATH", "").split(":")
            if d.startswith("/")}


def test_set_env_sourced(facts: Facts, cann: CannFacts) -> None:
    """env.set-env: login shells source CANN's set_env.sh (the managed profile.d file)."""
    if facts.env.login_vars is None:
        pytest.skip("the login shell's environment was not captured")
    script = cann.set_env or f"{cann.install_path}/cann/set_env.sh"
    assert facts.env.login_sourced, failure(
        message="login shells do not source set_env.sh: ASCEND_HOME_PATH is unset",
        observed="bash -l: no ASCEND_HOME_PATH / ASCEND_TOOLKIT_HOME",
        expected=f"{script} sourced from /etc/profile.d/ascend-env.sh",
        why="torch_npu then fails with 'libhccl.so: cannot open shared object file' or "
            "'ASCEND_HOME_PATH environment variable is not set'",
        fix="ld-library-path",
        # Quoted twice: for the shell that runs echo, and for the login shells that read
        # the line back; a hint to paste must not split differently.
        manual=f"echo {shlex.quote('. ' + shlex.quote(script))} > /etc/profile.d/ascend-env.sh"
               "  # never a user's ~/.bashrc")
    home = (facts.env.login_vars or {}).get("ASCEND_HOME_PATH") or \
        (facts.env.login_vars or {}).get("ASCEND_TOOLKIT_HOME") or ""
    current = {posixpath.normpath(p) for p in (cann.home, f"{cann.install_path}/cann",
                                               f"{cann.install_path}/ascend-toolkit/latest")}
    if posixpath.normpath(home) not in current and not home.endswith(cann.version_raw or "?"):
        warn(message=f"login shells point ASCEND_HOME_PATH at {home}, the active CANN is "
                     f"{cann.home}",
             observed=f"ASCEND_HOME_PATH={home}", expected=cann.home,
             why="a stale path after an upgrade loads the old CANN's libraries",
             fix="ld-library-path", manual=f"source {shlex.quote(script)} from /etc/profile.d")
    observe(f"ASCEND_HOME_PATH={home}")


def test_driver_libraries(facts: Facts, driver: DriverFacts) -> None:
    """env.driver-libraries: the driver's libraries resolve for every process (ldconfig)."""
    libs = [facts.libraries[s] for s in DRIVER_LIBS if s in facts.libraries]
    if not libs:
        pytest.skip("the library search was not captured")
    missing = [lib for lib in libs if not lib.resolvable]
    lib_dir = f"{driver.install_path}/driver/lib64"
    assert not missing, failure(
        message=", ".join(lib.soname for lib in missing) + " does not resolve: the driver's "
                "library path is not configured",
        observed="; ".join(f"{lib.soname}: not in `ldconfig -p` nor LD_LIBRARY_PATH"
                           + (f", on disk at {lib.on_disk[0]}" if lib.on_disk else "")
                           for lib in missing),
        expected=f"{lib_dir}, {lib_dir}/common, {lib_dir}/driver in /etc/ld.so.conf.d/",
        why="'ImportError: libascend_hal.so: cannot open shared object file' for every job "
            "not started from a login shell (services, schedulers, ssh commands)",
        fix="ld-library-path",
        manual=f"printf '%s\\n' {shlex.join([lib_dir, f'{lib_dir}/common', f'{lib_dir}/driver'])}"
               " > "
               "/etc/ld.so.conf.d/ascend-env.conf && ldconfig")
    observe("; ".join(f"{lib.soname} -> {(lib.ldconfig or lib.ld_library_path)[0]}"
                      for lib in libs))


def test_cann_libraries(facts: Facts, cann: CannFacts) -> None:
    """env.cann-libraries: CANN's libraries resolve (loader cache or a login shell's path)."""
    # cann/ and ascend-toolkit/latest are links to the active version folder: one place.
    links = (f"{cann.install_path}/cann", f"{cann.install_path}/ascend-toolkit/latest")

    def real(path: str) -> str:
        for link in links:
            if path == link or path.startswith(link + "/"):
                return cann.home + path[len(link):]
        return path

    login = {real(d) for d in _login_dirs(facts)}
    missing = []
    for soname in CANN_LIBS:
        lib = facts.libraries.get(soname)
        if lib is None:
            continue
        in_login = any(real(posixpath.dirname(p)) in login for p in lib.on_disk)
        if not (lib.resolvable or in_login):
            missing.append(soname)
    assert not missing, failure(
        message=", ".join(missing) + " do(es) not resolve: CANN's environment is not set up",
        observed="not in `ldconfig -p`, the probe's LD_LIBRARY_PATH or a login shell's",
        expected=f"{cann.home}/lib64 on the library path (set_env.sh or ld.so.conf.d)",
        why="torch_npu needs them at import: 'libhccl.so: cannot open shared object file'",
        fix="ld-library-path",
        manual=f"source {shlex.quote(cann.set_env or 'set_env.sh')} from "
               f"/etc/profile.d/ascend-env.sh and add {shlex.quote(cann.home + '/lib64')} to "
               "/etc/ld.so.conf.d/ascend-env.conf; ldconfig")
    observe(f"{len(CANN_LIBS)} CANN libraries resolve")
