"""The doctor's network category run on a simulated fleet, and its verdicts by host: shared by
the cluster and the network-ip fix tests."""

from __future__ import annotations

import json
from typing import Any

from tests.cli_invoke import invoke
from tests.sim.fixtures import SimFleet

# The simulated hosts' address plan (contract: subnets 10.20.<i>.0/24, host k at .10+k).
SIM_PLAN = {"subnets": [f"10.20.{i}.0/24" for i in range(8)], "first_host": 11,
            "gateway": "first", "netdetect": "gateway"}
FAILED = ("fail", "error")


def doctor(fleet: SimFleet, *extra: str) -> tuple[int, dict[str, Any]]:
    """`doctor --only network --json` on the fleet: exit code and report."""
    result = invoke("doctor", "--inventory", str(fleet.inventory), "--only", "network",
                    "--json", *extra)
    assert "Traceback" not in result.out + result.err, result.err
    assert result.out.startswith("{"), (result.code, result.out[-2000:], result.err[-2000:])
    return result.code, json.loads(result.out)


def checks_by_host(document: dict[str, Any], statuses: tuple[str, ...] = FAILED
                   ) -> dict[str, list[dict[str, Any]]]:
    """The checks in `statuses` by host ("fleet" for the fleet-wide ones); hosts with none
    left out."""
    out = {r["host"]: [c for c in r["checks"] if c["status"] in statuses]
           for r in document["hosts"]}
    out["fleet"] = [c for c in document["fleet_checks"] if c["status"] in statuses]
    return {k: v for k, v in out.items() if v}


def ids_by_host(document: dict[str, Any], statuses: tuple[str, ...] = FAILED
                ) -> dict[str, list[str]]:
    """checks_by_host, the check ids only."""
    return {k: [c["id"] for c in v] for k, v in checks_by_host(document, statuses).items()}
