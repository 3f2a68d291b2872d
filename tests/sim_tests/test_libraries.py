"""Stub libraries resolve only through configured paths, as on a real host."""

from __future__ import annotations

import pytest

from tests.sim.fixtures import SimFleet

pytestmark = pytest.mark.sim

CDLL = "python3 -c 'import ctypes, sys; ctypes.CDLL(sys.argv[1]); print(\"loaded\")' "
A = "/usr/local/Ascend"


def test_not_resolved_without_paths(sim_provisioned: SimFleet) -> None:
    h = sim_provisioned.hosts[0]
    assert "libascendcl.so" not in sim_provisioned.ssh(h, "ldconfig -p").stdout
    res = sim_provisioned.ssh(h, CDLL + "libhccl.so")
    assert res.returncode != 0
    assert "libhccl.so: cannot open shared object file: No such file or directory" in res.stderr
    res = sim_provisioned.ssh(h, CDLL + "libascend_hal.so")
    assert "libascend_hal.so: cannot open shared object file" in res.stderr


def test_resolved_after_set_env(sim_provisioned: SimFleet) -> None:
    h = sim_provisioned.hosts[0]
    for lib in ("libascendcl.so", "libhccl.so", "libge_runner.so", "libgraph.so",
                "libacl_op_compiler.so", "libacl_tdt_channel.so", "libfmk_parser.so",
                "libascend_protobuf.so", "libascend_hal.so", "libc_sec.so"):
        res = sim_provisioned.ssh(h, f". {A}/cann/set_env.sh && {CDLL}{lib}")
        assert res.stdout.strip() == "loaded", (lib, res.stderr)
    res = sim_provisioned.ssh(h, f". {A}/nnal/atb/set_env.sh --cxx_abi=0 && {CDLL}libatb.so")
    assert res.stdout.strip() == "loaded", res.stderr
    res = sim_provisioned.ssh(h, f". {A}/cann/set_env.sh && python3 -c "
                                 "'import ctypes; l = ctypes.CDLL(\"libascendcl.so\"); "
                                 "print(l.aclInit(None), l.aclrtSetDevice(0))'")
    assert res.stdout.split() == ["0", "507033"]  # no real device behind the stub


def test_ldconfig_and_ldd_with_ld_so_conf(sim_provisioned: SimFleet) -> None:
    h = sim_provisioned.hosts[1]
    conf = "/etc/ld.so.conf.d/ascend-test.conf"
    try:
        assert sim_provisioned.ssh(
            h, f"printf '%s\\n' {A}/cann/lib64 {A}/driver/lib64/driver > {conf} && ldconfig"
        ).returncode == 0
        listing = sim_provisioned.ssh(h, "ldconfig -p").stdout
        assert f"libascendcl.so (libc6,x86-64) => {A}/cann/lib64/libascendcl.so" in listing \
            or "libascendcl.so" in listing
        assert "libascend_hal.so" in listing
        res = sim_provisioned.ssh(h, f"ldd {A}/cann/lib64/libhccl.so")
        assert res.returncode == 0
        assert sim_provisioned.ssh(h, CDLL + "libhccl.so").stdout.strip() == "loaded"
    finally:
        sim_provisioned.ssh(h, f"rm -f {conf} && ldconfig")
    assert "libascendcl.so" not in sim_provisioned.ssh(h, "ldconfig -p").stdout


def test_tbe_importable_only_with_pythonpath(sim_provisioned: SimFleet) -> None:
    h = sim_provisioned.hosts[0]
    res = sim_provisioned.ssh(h, "python3 -c 'import tbe.common'")
    assert "No module named 'tbe'" in res.stderr
    res = sim_provisioned.ssh(h, f". {A}/cann/set_env.sh && python3 -c 'import tbe.common'")
    assert res.returncode == 0, res.stderr
