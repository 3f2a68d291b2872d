"""The real torch_npu wheel through fetch and install, on a simulated host.

The wheel is the package index's torch_npu 2.9.0 cp311 x86_64 (tests/real_wheels.py: cached,
its sha256 the shipped catalogue's). It is served from the loopback mirror under the path of
its catalogue URL, fetched with `--mirror` and the shipped catalogue's digest, and installed
offline with `pip install --require-hashes` into the host's venv. Beside it stands a tiny torch
2.9.0+cpu made here (the real CPU torch is about 180 MB): torch_npu's own METADATA pins exactly
that build, so pip on the host accepts the pairing, but nothing imports or runs torch_npu, and
the post-install doctor (which would import it) is off for that reason.
"""

from __future__ import annotations

import json
import platform
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from ascend_env.install.provision import InstallOptions, InstallSummary, install
from ascend_env.repository.fetch import Source, fetch
from ascend_env.repository.repo_folder import sha256_of
from ascend_env.repository.wheel_digests import WheelDigestError
from ascend_env.spec.catalogue import load_catalogue, load_overlay
from ascend_env.spec.envspec import EnvSpec, build_spec
from ascend_env.spec.plan import Plan, resolve
from tests.real_wheels import NAME, catalogued_sha256, real_torch_npu
from tests.sim import provision
from tests.sim.fixtures import FleetFactory, SimFleet
from tests.sim.fleet import Versions
from tests.vendor_server import vendor_server
from tests.wheels import build_wheel, fill_wheels

pytestmark = [pytest.mark.sim, pytest.mark.slow,
              pytest.mark.skipif(platform.machine() != "x86_64",
                                 reason="the recorded real wheel is the x86_64 one")]

VENV = "/opt/ascend-env/venv"


def spec() -> EnvSpec:
    return build_spec({"extends": "910b", "name": "real-wheel", "os": {"family": "debian",
                       "version": "12"}, "hardware": {"arch": "x86_64", "devices": 8},
                       "python": {"version": "3.11", "venv": VENV},
                       "frameworks": {"torch": {"version": "2.9.0", "torch_npu": "2.9.0"},
                                      "mindspore": None}}, "test")


def torch_cpu_overlay(vendor: Path) -> Path:
    """The stand-in torch 2.9.0+cpu, named in an overlay with its digest (fetch verifies it)."""
    wheel = build_wheel(vendor, "torch", "2.9.0+cpu")
    overlay = vendor / "torch-cpu-overlay.json"
    overlay.write_text(json.dumps({"source": "stand-in torch", "components": {"torch": {
        "2.9.0+cpu": {"files": [{"filename": wheel.name, "kind": "wheel", "arch": "x86_64",
                                 "python_tag": "cp311", "distribution": "torch",
                                 "file_version": "2.9.0+cpu", "sha256": sha256_of(wheel)}]}}}}))
    return overlay


@pytest.fixture(scope="module")
def real_repo(tmp_path_factory: pytest.TempPathFactory, sim_fleet_factory: FleetFactory
              ) -> tuple[Path, Plan, list[str]]:
    del sim_fleet_factory  # only for its require_sim()
    wheel = real_torch_npu()
    root = tmp_path_factory.mktemp("real-wheel")
    vendor, served = root / "vendor", root / "served"
    shutil.copytree(provision.cached_repo("910b", Versions(cann="8.5.0", hdk="25.5.0"),
                                          "x86_64"), vendor)
    catalogue = load_catalogue().merged(load_overlay(vendor / "catalogue-overlay.json"))
    catalogue = catalogue.merged(load_overlay(torch_cpu_overlay(vendor)))
    plan = resolve(spec(), catalogue)
    [npu] = [item for item in plan.items if item.component == "torch_npu"]
    # The shipped catalogue's own entry: its vendor URL and its digest.
    assert npu.file == NAME and npu.sha256 == catalogued_sha256()
    assert npu.url is not None and "ascend-repo.obs" in npu.url
    served.mkdir()
    (served / NAME).symlink_to(wheel)
    repo = root / "repo"
    with vendor_server(served) as (url, state):
        result = fetch(plan, repo, Source(mirror=url, from_dir=vendor))
    assert result.complete, result
    [fetched] = [f for f in result.files if f.file == NAME]
    assert fetched.status == "downloaded" and fetched.sha256 == catalogued_sha256()
    assert [name for name, _range in state.requests] == [NAME]
    fill_wheels(repo)
    return repo, plan, [name for name, _range in state.requests]


@pytest.fixture
def host(sim_private_fleet: FleetFactory) -> Iterator[SimFleet]:
    yield sim_private_fleet(hosts=1, state="provisioned")


def run(fleet: SimFleet, repo: Path, plan: Plan, tmp_path: Path) -> InstallSummary:
    return install(spec(), plan, InstallOptions(
        repo=repo, inventory=fleet.inventory, components=["python"], offline=True,
        log_dir=tmp_path / "logs"))


def test_the_real_torch_npu_installs_offline_with_its_digest_checked(
        host: SimFleet, real_repo: tuple[Path, Plan, list[str]], tmp_path: Path) -> None:
    repo, plan, _requests = real_repo
    summary = run(host, repo, plan, tmp_path)
    assert [(h.status, h.failed) for h in summary.hosts] == [("changed", 0)], summary
    # pip ran with --require-hashes from the closure's digests, the real wheel's among them.
    sent = json.loads(next((tmp_path / "logs").glob("*/extra-vars.json")).read_text())
    python = sent["ascend_python"]
    assert f"torch-npu==2.9.0 --hash=sha256:{catalogued_sha256()}" in python["hashes"]
    staged = (host.root(host.hosts[0]) / "var/cache/ascend-env/packages/wheels"
              / python["bundle_id"] / "requirements.txt")
    assert staged.read_text().splitlines() == python["hashes"]
    listed = host.ssh(host.hosts[0], f"{VENV}/bin/python -m pip list --format json "
                                     "--disable-pip-version-check")
    have = {d["name"].lower().replace("_", "-"): d["version"] for d in json.loads(listed.stdout)}
    assert have["torch-npu"] == "2.9.0" and have["torch"] == "2.9.0+cpu"
    # The real package's files, not a stand-in's: its compiled extension is there.
    site = host.root(host.hosts[0]) / VENV.lstrip("/") / "lib/python3.11/site-packages"
    assert list((site / "torch_npu").glob("_C*.so")), sorted(p.name for p in
                                                            (site / "torch_npu").iterdir())
    # The host checks too: a wheel altered in the host's staged copy (a trailing byte, which
    # a zip reader ignores) is refused by pip when the venv needs it again.
    torch_copy = staged.parent / "torch-2.9.0+cpu-py3-none-any.whl"
    with torch_copy.open("ab") as handle:
        handle.write(b"\0")
    removed = host.ssh(host.hosts[0], f"{VENV}/bin/python -m pip uninstall -y torch")
    assert removed.returncode == 0, removed.stderr
    again = run(host, repo, plan, tmp_path)
    assert [h.status for h in again.hosts] == ["failed"], again
    assert "Install the frameworks" in again.hosts[0].message
    log = Path(again.log).read_text()
    assert "THESE PACKAGES DO NOT MATCH THE HASHES" in log
    assert "torch==2.9.0+cpu from file://" in log


def test_the_real_wheel_altered_after_fetch_is_refused_before_any_host(
        host: SimFleet, real_repo: tuple[Path, Plan, list[str]], tmp_path: Path) -> None:
    repo, plan, _requests = real_repo
    altered = tmp_path / "repo"
    shutil.copytree(repo, altered, symlinks=False)
    wheel = altered / NAME
    with wheel.open("r+b") as handle:  # one byte of its central directory, same size
        handle.seek(-30, 2)
        byte = handle.read(1)
        handle.seek(-30, 2)
        handle.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(WheelDigestError) as raised:
        run(host, altered, plan, tmp_path)
    message = str(raised.value)
    assert f"{wheel}: sha256 {sha256_of(wheel)}, but repo.json records " \
           f"{catalogued_sha256()}" in message
    assert not (tmp_path / "logs").exists()  # ansible never ran
    assert not (host.root(host.hosts[0]) / VENV.lstrip("/")).exists()
