"""`perf --inventory -- CMD` end to end over ssh: two simulated hosts (tests/sim) run a real CPU
training job (torch from the sim's shared layer) with the profiling hook; the traces of both
come back under each host's name and make one summary."""

from __future__ import annotations

import json

import pytest

from tests.cli_invoke import invoke
from tests.perf.test_run_cpu import TRAIN
from tests.sim import torch_layer
from tests.sim.fixtures import FleetFactory

pytestmark = [pytest.mark.sim, pytest.mark.slow]


def test_two_hosts_profiled_and_brought_back(sim_fleet_factory: FleetFactory,
                                            tmp_path_factory: pytest.TempPathFactory) -> None:
    sim = sim_fleet_factory(hosts=2, state="bare")
    layer = torch_layer.ensure_layer()
    for host in sim.hosts:
        root = sim.root(host)
        torch_layer.attach(root, layer)
        (root / "opt" / "perf-train.py").write_text(TRAIN)
    out = tmp_path_factory.mktemp("perf") / "out"
    result = invoke("perf", "--inventory", str(sim.inventory), "--out", str(out), "--steps",
                    "2", "--timeout", "300", "--json", "--", "python3-torch",
                    "/opt/perf-train.py")
    assert result.code == 0, (result.out[-2000:], result.err[-2000:])
    document = json.loads(result.out)
    names = sorted(document["run"]["hosts"])
    assert len(names) == 2
    assert all(document["run"]["hosts"][n]["returncode"] == 0 for n in names)
    assert sorted(n["rank"] for n in document["files"]) == [f"{n}/0" for n in names]
    assert len(document["host_steps_us"]) == 4  # two recorded steps on each host
    assert "aten::addmm" in [op["name"] for op in document["top_host_ops"]]
    for name in names:
        assert "step 7 loss" in (out / name / "run.log").read_text()
