"""`image run-args` for each runtime and device selection, on a fake host root."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ascend_env.core.errors import UsageError
from ascend_env.image.runargs import RUNTIMES, HostView, RunArgsRequest, Runtime, run_args
from ascend_env.spec.envspec import load_spec
from tests.cli_invoke import invoke

CONTROL = ["/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc"]


def fake_host(root: Path, *, davinci: int = 0, enforcing: bool = False, gid: int | None = 1234,
              hccn: bool = False) -> HostView:
    (root / "dev").mkdir(parents=True)
    for number in range(davinci):
        (root / "dev" / f"davinci{number}").touch()
    (root / "sys/fs/selinux").mkdir(parents=True)
    (root / "sys/fs/selinux/enforce").write_text("1\n" if enforcing else "0\n")
    (root / "etc").mkdir()
    (root / "etc/group").write_text("root:x:0:\n" + (f"HwHiAiUser:x:{gid}:\n" if gid else ""))
    if hccn:
        (root / "etc/hccn.conf").write_text("address_0=10.0.0.1\n")
    return HostView(root=root)


def devices_of(args: list[str]) -> list[str]:
    return [args[i + 1] for i, a in enumerate(args) if a == "--device"]


def volumes_of(args: list[str]) -> list[str]:
    return [args[i + 1] for i, a in enumerate(args) if a == "-v"]


@pytest.mark.parametrize("runtime", ["docker", "podman"])
def test_plain_runtime_lists_nodes_and_read_only_mounts(tmp_path: Path, runtime: Runtime
                                                        ) -> None:
    result = run_args(RunArgsRequest(devices="0,1", runtime=runtime), fake_host(tmp_path))
    assert devices_of(result.args) == ["/dev/davinci0", "/dev/davinci1", *CONTROL]
    assert volumes_of(result.args) == [
        "/usr/local/Ascend/driver:/usr/local/Ascend/driver:ro",
        "/usr/local/dcmi:/usr/local/dcmi:ro",
        "/usr/local/bin/npu-smi:/usr/local/bin/npu-smi:ro",
        "/etc/ascend_install.info:/etc/ascend_install.info:ro"]
    assert "--ipc=host" in result.args
    assert result.args[-2:] == ["--group-add", "1234"]
    assert result.command_line("img").startswith(f"{runtime} run --device /dev/davinci0 ")


def test_ascend_runtime_uses_visible_devices_and_adds_the_driver_folder(tmp_path: Path) -> None:
    result = run_args(RunArgsRequest(devices="2-3", runtime="ascend-docker-runtime"),
                      fake_host(tmp_path))
    assert result.args[:4] == ["--runtime", "ascend", "-e", "ASCEND_VISIBLE_DEVICES=2,3"]
    assert result.env == {"ASCEND_VISIBLE_DEVICES": "2,3"}
    assert devices_of(result.args) == []  # the runtime's hook adds the nodes
    assert volumes_of(result.args) == [
        "/usr/local/Ascend/driver:/usr/local/Ascend/driver:ro",
        "/etc/ascend_install.info:/etc/ascend_install.info:ro"]


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize(("profile", "count"), [("910b", 8), ("310p", 2), ("a3", 16)])
def test_all_devices_of_a_profile(tmp_path: Path, runtime: Runtime, profile: str,
                                  count: int) -> None:
    spec = load_spec(profile=profile)
    result = run_args(RunArgsRequest(devices="all", runtime=runtime, spec=spec),
                      fake_host(tmp_path))
    assert result.devices == list(range(spec.hardware.devices or count))
    if runtime == "ascend-docker-runtime":
        assert result.env["ASCEND_VISIBLE_DEVICES"] == ",".join(map(str, result.devices))
    else:
        assert devices_of(result.args)[:-3] == [f"/dev/davinci{n}" for n in result.devices]


def test_all_without_a_spec_takes_the_host_nodes(tmp_path: Path) -> None:
    result = run_args(RunArgsRequest(devices="all"), fake_host(tmp_path, davinci=3))
    assert result.devices == [0, 1, 2]


def test_all_without_spec_or_nodes_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no /dev/davinciN"):
        run_args(RunArgsRequest(devices="all"), fake_host(tmp_path))


@pytest.mark.parametrize("bad", ["x", "3-1", ",", "0;1"])
def test_bad_device_lists(tmp_path: Path, bad: str) -> None:
    with pytest.raises(UsageError, match="--device"):
        run_args(RunArgsRequest(devices=bad), fake_host(tmp_path))


def test_device_beyond_the_spec(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="8 devices"):
        run_args(RunArgsRequest(devices="8", spec=load_spec(profile="910b")),
                 fake_host(tmp_path))


@pytest.mark.parametrize(("mode", "enforcing", "relabel"), [
    ("auto", True, True), ("auto", False, False), ("on", False, True), ("off", True, False)])
def test_selinux_relabel(tmp_path: Path, mode: str, enforcing: bool, relabel: bool) -> None:
    result = run_args(RunArgsRequest(devices="0", selinux=mode),  # type: ignore[arg-type]
                      fake_host(tmp_path, enforcing=enforcing))
    assert result.selinux_relabel is relabel
    suffixes = {v.rsplit(":", 1)[1] for v in volumes_of(result.args)}
    assert suffixes == ({"ro,z"} if relabel else {"ro"})
    assert not any(d.endswith(":z") for d in devices_of(result.args))


def test_shm_size_replaces_ipc_host_and_missing_group_is_noted(tmp_path: Path) -> None:
    result = run_args(RunArgsRequest(devices="0", shm_size="16g"),
                      fake_host(tmp_path, gid=None, hccn=True))
    assert "--shm-size=16g" in result.args and "--ipc=host" not in result.args
    assert "--group-add" not in result.args
    assert any("no group HwHiAiUser" in n for n in result.notes)
    assert "/etc/hccn.conf:/etc/hccn.conf:ro" in volumes_of(result.args)


def test_cli_json_and_text() -> None:
    done = invoke("image", "run-args", "--profile", "910b", "--device", "0,1", "--runtime",
                  "ascend-docker-runtime", "--selinux", "off", "--json")
    assert done.code == 0, done.err
    document = json.loads(done.out)
    assert document["schema"] == "ascend-env/run-args/v1"
    assert document["env"] == {"ASCEND_VISIBLE_DEVICES": "0,1"}
    text = invoke("image", "run-args", "--profile", "910b", "--device", "0", "--selinux", "off")
    assert text.code == 0 and "--device /dev/davinci0 \\\n" in text.out
    whole = invoke("image", "run-args", "--profile", "910b", "--device", "0", "--selinux",
                   "off", "--image", "ascend-env/x:1")
    assert whole.out.startswith("docker run ") and whole.out.strip().endswith("ascend-env/x:1")
    bad = invoke("image", "run-args", "--device", "zero")
    assert bad.code == 2 and "--device" in bad.err
