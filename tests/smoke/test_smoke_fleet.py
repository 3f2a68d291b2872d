"""`ascend-env smoke --inventory`: every host of a fleet gets its own verdict or reason."""

from __future__ import annotations

import json

import pytest

from tests.cli_invoke import invoke
from tests.sim.fixtures import SimFleet

pytestmark = [pytest.mark.sim, pytest.mark.slow]


def test_each_host_answers_for_itself(sim_provisioned: SimFleet) -> None:
    # The simulated hosts have CANN but no framework: each must say so, none may crash.
    result = invoke("smoke", "--framework", "torch", "--inventory",
                    str(sim_provisioned.inventory), "--steps", "5", "--timeout", "60", "--json")
    assert "Traceback" not in result.out + result.err
    document = json.loads(result.out)
    assert document["schema"] == "ascend-env/smoke/fleet/v1"
    assert set(document["hosts"]) == set(sim_provisioned.hosts)
    for answer in document["hosts"].values():
        assert answer["outcome"] == "error"
        assert "torch is not importable" in json.dumps(answer["checks"])
    assert result.code == 2


def test_limit_selects_hosts(sim_provisioned: SimFleet) -> None:
    first = sim_provisioned.hosts[0]
    result = invoke("smoke", "--framework", "torch", "--inventory",
                    str(sim_provisioned.inventory), "--limit", first, "--steps", "5",
                    "--timeout", "60")
    assert f"== {first}" in result.out
    assert all(f"== {other}" not in result.out for other in sim_provisioned.hosts[1:])
