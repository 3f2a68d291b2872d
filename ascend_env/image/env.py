"""What CANN's set_env.sh scripts export, per CANN era, as the image's ENV lines.

The official images copy these variables into `ENV` so that nothing needs sourcing
(the ENV lines of cann/*/Dockerfile in https://github.com/Ascend/cann-container-image).
Path lists are written out in full, never as `$LD_LIBRARY_PATH` appends, so the image does not
depend on what the base image happened to set.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ascend_env.core.versions import AscendVersion
from ascend_env.spec.cann_layout import cann_layout
from ascend_env.spec.envspec import EnvSpec

# PATH of the Debian/Ubuntu/openEuler base images; the CANN entries go in front of it.
SYSTEM_PATH = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")
# NNAL's set_env.sh defaults; the misspelt GLOABL is theirs (the Dockerfiles of
# https://github.com/Ascend/cann-container-image).
ATB_DEFAULTS: tuple[tuple[str, str], ...] = (
    ("ATB_STREAM_SYNC_EVERY_KERNEL_ENABLE", "0"),
    ("ATB_STREAM_SYNC_EVERY_RUNNER_ENABLE", "0"),
    ("ATB_STREAM_SYNC_EVERY_OPERATION_ENABLE", "0"),
    ("ATB_OPSRUNNER_KERNEL_CACHE_LOCAL_COUNT", "1"),
    ("ATB_OPSRUNNER_KERNEL_CACHE_GLOABL_COUNT", "5"),
    ("ATB_WORKSPACE_MEM_ALLOC_ALG_TYPE", "1"),
    ("ATB_COMPARE_TILING_EVERY_KERNEL", "0"),
    ("ATB_SHARE_MEMORY_NAME_SUFFIX", ""),
    ("ATB_MATMUL_SHUFFLE_K_ENABLE", "1"),
    ("LCCL_DETERMINISTIC", "0"),
    ("LCCL_PARALLEL", "0"),
)
CMAKE_FROM = AscendVersion.parse("9.0.0")
# The C++ ABI of the NNAL libraries: the 8.5.0 and 9.x official images use cxx_abi_1.
ATB_CXX_ABI = 1


@dataclass
class ImageEnv:
    """The ENV lines of the final image, in order."""

    variables: list[tuple[str, str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, str]:
        return dict(self.variables)


def cann_env(spec: EnvSpec) -> ImageEnv:
    """Every variable the toolkit's (and NNAL's) set_env.sh would export, fully expanded."""
    layout = cann_layout(spec)
    home = layout.home
    drv = f"{layout.driver}/lib64"
    # The driver's directories come first: the driver is mounted from the host at run time.
    ld = [drv, f"{drv}/common", f"{drv}/driver", f"{home}/lib64",
          f"{home}/lib64/plugin/opskernel", f"{home}/lib64/plugin/nnengine",
          f"{home}/opp/built-in/op_impl/ai_core/tbe/op_tiling", f"{home}/tools/aml/lib64",
          f"{home}/tools/aml/lib64/plugin"]
    path = [f"{home}/bin", f"{home}/compiler/ccec_compiler/bin",
            f"{home}/tools/ccec_compiler/bin"]
    if layout.new:
        path += [f"{home}/tools/profiler/bin", f"{home}/tools/ascend_system_advisor/asys",
                 f"{home}/tools/show_kernel_debug_data", f"{home}/tools/msobjdump"]
    python_path = [f"{home}/python/site-packages", f"{home}/opp/built-in/op_impl/ai_core/tbe"]
    variables: list[tuple[str, str]] = [("ASCEND_TOOLKIT_HOME", home)]
    if layout.new:
        variables.append(("ASCEND_TOOLKIT_LATEST_HOME",
                          f"{layout.install_path}/ascend-toolkit/latest"))
    variables += [("ASCEND_HOME_PATH", home), ("ASCEND_OPP_PATH", f"{home}/opp"),
                  ("ASCEND_AICPU_PATH", home), ("TOOLCHAIN_HOME", f"{home}/toolkit")]
    if spec.cann.version.release() >= CMAKE_FROM:
        # 9.0.0+ images add CMake's search path (cann/9.0.0-910b-ubuntu22.04-py3.11/Dockerfile
        # of https://github.com/Ascend/cann-container-image).
        variables.append(("CMAKE_PREFIX_PATH", f"{home}/toolkit/tools/tikicpulib/lib/cmake:"
                                               f"{home}/lib64/cmake"))
    if "nnal" in spec.cann.packages:
        atb = f"{layout.install_path}/nnal/atb/latest/atb/cxx_abi_{ATB_CXX_ABI}"
        variables.append(("ATB_HOME_PATH", atb))
        ld = [f"{atb}/lib", f"{atb}/examples", f"{atb}/tests/atbopstest", *ld]
        path = [f"{atb}/bin", *path]
        variables += list(ATB_DEFAULTS)
    variables += [("LD_LIBRARY_PATH", ":".join(ld)),
                  ("PYTHONPATH", ":".join(python_path)),
                  ("PATH", ":".join([*path, *SYSTEM_PATH]))]
    return ImageEnv(variables)


def image_env(spec: EnvSpec, *, frameworks: bool) -> ImageEnv:
    """The final image's ENV: CANN's variables, and with frameworks their venv in front of PATH.

    One ENV instruction, so PATH is written out whole: within one instruction `$PATH` would
    expand to the base image's value, not CANN's.
    """
    variables = cann_env(spec).variables
    if not frameworks:
        return ImageEnv(variables)
    venv = spec.python.venv.rstrip("/")
    head = [(name, value) for name, value in variables if name != "PATH"]
    path = dict(variables)["PATH"]
    return ImageEnv([*head, ("VIRTUAL_ENV", venv), ("PATH", f"{venv}/bin:{path}")])
