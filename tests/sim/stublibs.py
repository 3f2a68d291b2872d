"""Stub shared libraries with the real SONAMEs and a few real exported symbols.

They make `ldconfig -p`, `ldd` and `ctypes.CDLL` behave as on a real host: a library
resolves only once its directory is configured. Compiled once with gcc, cached by key.
"""

from __future__ import annotations

from pathlib import Path

from tests.sim import gcc

STUB_VERSION = 1
FLAGS = ("-shared", "-fPIC", "-O1")
# ACL_ERROR_RT_DEVICE_NOT_FOUND-style failure: a simulated host has no NPU to open.
NO_DEVICE = 507033

# soname -> exported functions (names from the public ACL/HAL/DCMI/HCCL APIs).
LIBS: dict[str, tuple[str, ...]] = {
    "libascend_hal.so": ("halGetDeviceInfo", "halGetAPIVersion", "drvGetDevNum"),
    "libdcmi.so": ("dcmi_init", "dcmi_get_card_num_list", "dcmi_get_device_health"),
    "libc_sec.so": ("memcpy_s", "memset_s", "strcpy_s"),
    "libmmpa.so": ("mmGetTid", "mmSleep"),
    "libascendcl.so": ("aclInit", "aclFinalize", "aclrtSetDevice", "aclrtGetDeviceCount",
                       "aclsysGetCANNVersion", "aclsysGetVersionNum"),
    "libhccl.so": ("HcclCommInitRootInfo", "HcclGetRootInfo", "HcclAllReduce"),
    "libge_runner.so": ("aclgrphBuildInitialize", "aclgrphBuildModel"),
    "libgraph.so": ("aclgrphDumpGraph",),
    "libacl_op_compiler.so": ("aclopCompile", "aclopCompileAndExecute", "aclSetCompileopt"),
    "libacl_tdt_channel.so": ("acltdtCreateChannel", "acltdtSendTensor"),
    "libfmk_parser.so": ("aclgrphParseTensorFlow",),
    "libascend_protobuf.so": ("ascend_protobuf_stub",),
    "libatb.so": ("atbGetVersion",),
}
# Functions that must report failure rather than pretend an NPU exists.
FAILING = {"aclrtSetDevice", "halGetDeviceInfo", "dcmi_get_device_health"}


def _source(soname: str) -> str:
    lines = [f"/* simulated {soname} for ascend-env tests */"]
    for fn in LIBS[soname]:
        ret = NO_DEVICE if fn in FAILING else 0
        if fn == "aclrtGetDeviceCount":
            lines.append("int aclrtGetDeviceCount(unsigned int *count)"
                         " { if (count) *count = 0; return 0; }")
        else:
            lines.append(f"int {fn}(void) {{ return {ret}; }}")
    return "\n".join(lines) + "\n"


def ensure_stubs() -> Path:
    """Directory holding every stub .so, built on first use."""

    def build(tmp: Path) -> None:
        for soname in LIBS:
            src = tmp / (soname + ".c")
            src.write_text(_source(soname))
            gcc.run([*FLAGS, f"-Wl,-soname,{soname}", "-o", str(tmp / soname), str(src)],
                    f"the {soname} stub")
            src.unlink()

    recipe = f"{STUB_VERSION}|{' '.join(FLAGS)}|" + "".join(_source(s) for s in LIBS)
    return gcc.cached("stublibs", recipe, build)
