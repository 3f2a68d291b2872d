"""The all-reduce across hosts, without running it: bandwidth figures, merging every host's
ranks, blaming the host at fault, the pair plan, the exit codes and the command's refusals."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from ascend_env.cli.smoke_view import collective_exit, render_collective
from ascend_env.core.errors import AscendEnvError
from ascend_env.remote.hccl_workload import merge_results
from ascend_env.smoke import fleet_collective
from ascend_env.smoke.fleet_collective import (
    PORT_TRIES,
    PORTS,
    SCHEMA,
    FleetHost,
    at_fault,
    hosts_of,
    merge_hosts,
    round_robin,
    run_world,
)
from tests.cli_invoke import invoke

MiB = 1024**2


def rank(number: int, *, seconds: float = 0.01, correct: bool = True, status: str = "ok",
         reason: str | None = None, duration: float | None = 5.0,
         sizes: tuple[int, ...] = (MiB, 4 * MiB)) -> dict[str, Any]:
    """One rank's part of a coordinator's document, as hccl_workload prints it."""
    results = [{"bytes": size, "iterations": 3, "correct": correct,
                "wrong_elements": 0 if correct else 7, "time_s": seconds} for size in sizes]
    return {"rank": number, "device": "cpu", "pid": 100 + number, "status": status,
            "reason": reason, "results": results if status == "ok" else [],
            "duration_s": duration}


def host(name: str, ranks: list[dict[str, Any]], status: str | None = None,
         reason: str | None = None) -> dict[str, Any]:
    ok = all(r["status"] == "ok" for r in ranks)
    return {"host": name, "status": status or ("ok" if ok else "failed"), "reason": reason,
            "backend": "gloo", "ranks": ranks}


# --- bandwidth ------------------------------------------------------------------------------


def test_algbw_and_busbw_follow_nccl_tests() -> None:
    # nccl-tests (doc/PERFORMANCE.md): algbw = S / t; all-reduce busbw = algbw * 2(n-1)/n.
    ranks = [rank(0, seconds=0.002), rank(1, seconds=0.004), rank(2), rank(3, seconds=0.001)]
    for r in ranks[2:]:
        r["results"][0]["time_s"] = r["results"][1]["time_s"] = 0.001
    merged = merge_results(ranks, 4)
    first = merged[0]
    assert first["bytes"] == MiB and first["ranks_reporting"] == 4 and first["correct"]
    assert first["time_s"] == 0.004  # the slowest rank's time
    assert first["algbw_gbps"] == pytest.approx(MiB / 0.004 / 1e9)
    assert first["busbw_gbps"] == pytest.approx(first["algbw_gbps"] * 2 * 3 / 4)
    assert [row["bytes"] for row in merged] == [MiB, 4 * MiB]


def test_busbw_equals_algbw_times_one_for_two_ranks_and_tends_to_twice() -> None:
    two = merge_results([rank(0), rank(1)], 2)[0]
    assert two["busbw_gbps"] == pytest.approx(two["algbw_gbps"])
    many = merge_results([rank(n) for n in range(64)], 64)[0]
    assert many["busbw_gbps"] == pytest.approx(many["algbw_gbps"] * 126 / 64)


def test_a_missing_rank_makes_a_size_incorrect() -> None:
    merged = merge_results([rank(0), rank(1), rank(2)], 4)
    assert all(row["ranks_reporting"] == 3 and not row["correct"] for row in merged)


# --- merging hosts ----------------------------------------------------------------------------


def test_every_host_merged_into_one_world() -> None:
    documents = [host("sim1", [rank(0), rank(1)]), host("sim2", [rank(2), rank(3)])]
    merged = merge_hosts(documents, 4, None, "127.0.0.11:20001")
    assert merged["schema"] == SCHEMA == "ascend-env/smoke/collective/v1"
    assert merged["status"] == "ok" and merged["problems"] == []
    assert merged["hosts"] == ["sim1", "sim2"] and merged["world_size"] == 4
    assert merged["failing_hosts"] == [] and merged["first_failure"] is None
    assert all(row["ranks_reporting"] == 4 and row["correct"] for row in merged["results"])
    assert merged["busbw_floor_gbps"] is None  # reported, not judged


def test_wrong_elements_on_one_host_fail_the_run() -> None:
    documents = [host("sim1", [rank(0), rank(1)]),
                 host("sim2", [rank(2, correct=False), rank(3)])]
    merged = merge_hosts(documents, 4, None, "m:1")
    assert merged["status"] == "failed"
    assert merged["problems"][0].startswith(f"{MiB} bytes: 7 wrong element(s)")


def test_the_floor_judges_the_largest_size() -> None:
    documents = [host("sim1", [rank(0), rank(1)]), host("sim2", [rank(2), rank(3)])]
    busbw = 4 * MiB / 0.01 / 1e9 * 1.5
    assert merge_hosts(documents, 4, busbw * 0.9, "m:1")["status"] == "ok"
    below = merge_hosts(documents, 4, busbw * 1.1, "m:1")
    assert below["status"] == "failed"
    assert "below the spec's floor" in below["problems"][0]
    assert f"at {4 * MiB} bytes" in below["problems"][0]


def test_the_host_whose_rank_failed_first_is_blamed_not_those_that_waited() -> None:
    # As a real run where sim2 cannot bind its address: sim1's ranks wait for it until the
    # time limit (or lose the store when rank 0 ends); sim2's fail at once.
    documents = [
        host("sim1", [rank(0, status="timeout", duration=30.0,
                           reason="time limit of 30 s reached during init_process_group"),
                      rank(1, status="failed", duration=30.5,
                           reason="DistNetworkError: Failed to recv, got 0 bytes.")]),
        host("sim2", [rank(2, status="failed", duration=4.2,
                           reason="RuntimeError: Cannot resolve 10.255.255.1 to a (local) "
                                  "address"),
                      rank(3, status="failed", duration=4.0,
                           reason="RuntimeError: Cannot resolve 10.255.255.1 to a (local) "
                                  "address")])]
    merged = merge_hosts(documents, 4, None, "m:1")
    assert merged["status"] == "failed"
    assert merged["failing_hosts"] == ["sim2"]
    assert merged["first_failure"].startswith("sim2 rank 3 after 4 s: RuntimeError")
    assert {p.split(":")[0] for p in merged["problems"]} >= {"sim1", "sim2"}


def test_a_host_that_could_not_run_is_blamed() -> None:
    documents = [host("sim1", [rank(0, status="timeout", duration=30.0,
                                     reason="time limit of 30 s reached")]),
                 {"host": "sim2", "status": "error", "reason": "cannot reach sim2: refused"}]
    assert at_fault(documents) == (["sim2"], "sim2: cannot reach sim2: refused")


# torch's store on the first host when the drawn port is held there, as a CI run printed it.
LISTEN = ("DistNetworkError: The server socket has failed to listen on any local network "
          "address. port: 35990, useIpv6: 0, code: -98, name: EADDRINUSE, message: address "
          "already in use")


def _runs(monkeypatch: pytest.MonkeyPatch, failures: list[str | None]) -> list[int]:
    """run_world's tries answered in turn (None: the run passes); the ports it used."""
    used: list[int] = []
    answers = iter(failures)

    def once(request: Any, members: list[FleetHost], nprocs: int, port: int) -> dict[str, Any]:
        used.append(port)
        first = next(answers)
        ranks = [rank(0)] if first is None else [rank(0, status="failed", reason=first)]
        return merge_hosts([host(members[0].name, ranks), host("sim2", [rank(1)])], 2, None,
                           f"{members[0].address}:{port}")

    monkeypatch.setattr(fleet_collective, "_run_once", once)
    return used


MEMBERS = [FleetHost("sim1", "127.0.0.11", None), FleetHost("sim2", "127.0.0.12", None)]


def test_a_drawn_port_the_first_host_holds_is_drawn_again(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    used = _runs(monkeypatch, [LISTEN, None])
    document = run_world(None, MEMBERS, 1)  # type: ignore[arg-type]
    assert document["status"] == "ok" and len(used) == 2
    assert all(PORTS[0] <= port <= PORTS[1] for port in used)
    assert document["ports_taken"] == [{"master": f"127.0.0.11:{used[0]}",
                                        "reason": f"sim1 rank 0 after 5 s: {LISTEN}"}]
    assert document["master"] == f"127.0.0.11:{used[1]}"
    assert render_collective(document, as_json=False) == 0
    assert f"rendezvous 127.0.0.11:{used[0]} was taken on the first host" in \
        capsys.readouterr().out


def test_the_port_is_drawn_at_most_three_times_and_a_chosen_port_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    used = _runs(monkeypatch, [LISTEN] * 5)
    document = run_world(None, MEMBERS, 1)  # type: ignore[arg-type]
    assert document["status"] == "failed" and len(used) == PORT_TRIES == 3
    assert len(document["ports_taken"]) == 3
    used = _runs(monkeypatch, [LISTEN] * 5)
    assert run_world(None, MEMBERS, 1, port=29500)["status"] == "failed"  # type: ignore[arg-type]
    assert used == [29500]


def test_another_failure_is_not_tried_again(monkeypatch: pytest.MonkeyPatch) -> None:
    used = _runs(monkeypatch, ["RuntimeError: Connection reset by peer", None])
    document = run_world(None, MEMBERS, 1)  # type: ignore[arg-type]
    assert document["status"] == "failed" and len(used) == 1
    assert document["ports_taken"] == []


def test_when_every_rank_only_timed_out_every_failed_host_is_named() -> None:
    documents = [host("sim1", [rank(0, status="timeout", reason="time limit")]),
                 host("sim2", [rank(1, status="timeout", reason="time limit")]),
                 host("sim3", [rank(2)])]
    failing, first = at_fault(documents)
    assert failing == ["sim1", "sim2"] and first == "sim1 rank 0: time limit"


# --- the pair plan ------------------------------------------------------------------------------


@pytest.mark.parametrize("count", range(2, 10))
def test_round_robin_plays_every_pair_once_in_disjoint_rounds(count: int) -> None:
    rounds = round_robin(count)
    played = [pair for pairs in rounds for pair in pairs]
    assert sorted(played) == list(itertools.combinations(range(count), 2))
    assert len(rounds) == (count - 1 if count % 2 == 0 else count)
    for pairs in rounds:
        busy = [h for pair in pairs for h in pair]
        assert len(busy) == len(set(busy))  # a host is in one pair at a time
        assert all(a < b for a, b in pairs)  # the lower host holds the rendezvous


def test_one_host_has_no_pairs() -> None:
    assert round_robin(1) == []


# --- exit codes and the text view ----------------------------------------------------------


def test_exit_codes() -> None:
    assert collective_exit({"status": "ok"}) == 0
    assert collective_exit({"status": "failed", "per_host": {"a": {"status": "failed"},
                                                             "b": {"status": "ok"}}}) == 1
    # Nothing measured anywhere: the run itself could not happen.
    assert collective_exit({"status": "failed", "per_host": {"a": {"status": "error"},
                                                             "b": {"status": "error"}}}) == 2
    assert collective_exit({"status": "failed", "mode": "pairwise"}) == 1


def test_text_view_shows_sizes_bandwidth_and_blame(capsys: pytest.CaptureFixture[str]) -> None:
    ok = merge_hosts([host("sim1", [rank(0), rank(1)]), host("sim2", [rank(2), rank(3)])],
                     4, None, "m:1")
    assert render_collective(ok, as_json=False) == 0
    out = capsys.readouterr().out
    assert out.startswith("smoke hccl across 2 hosts, 4 gloo rank(s): OK")
    assert f"{4 * MiB} B  algbw" in out and "busbw" in out and "correct" in out
    bad = merge_hosts([host("sim1", [rank(0)]), {"host": "sim2", "status": "error",
                                                  "reason": "cannot reach sim2"}], 2, None, "m:1")
    assert render_collective(bad, as_json=False) == 1
    out = capsys.readouterr().out
    assert "FAIL  sim2: cannot reach sim2" in out
    assert "at fault: sim2 (first failure: sim2: cannot reach sim2)" in out


def test_pairwise_view_names_slowest_and_failing_pairs(
        capsys: pytest.CaptureFixture[str]) -> None:
    pairs = [{"hosts": ["sim1", "sim2"], "status": "ok", "problems": [], "busbw_gbps": 2.0,
              "bytes": MiB},
             {"hosts": ["sim1", "sim3"], "status": "ok", "problems": [], "busbw_gbps": 0.5,
              "bytes": MiB},
             {"hosts": ["sim2", "sim3"], "status": "failed", "problems": ["could not connect"],
              "busbw_gbps": None, "bytes": None}]
    document = {"schema": SCHEMA, "mode": "pairwise", "hosts": ["sim1", "sim2", "sim3"],
                "pairs": pairs, "slowest": pairs[1], "failing": [pairs[2]],
                "status": "failed", "problems": ["sim2 <-> sim3: could not connect"]}
    assert render_collective(document, as_json=False) == 1
    out = capsys.readouterr().out
    assert "FAIL  sim2 <-> sim3: no figure" in out
    assert "slowest: sim1 <-> sim3" in out
    assert "FAIL  sim2 <-> sim3: could not connect" in out


# --- the inventory and the command's refusals ----------------------------------------------


def inventory(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "hosts.ini"
    path.write_text("[all]\n" + "\n".join(lines) + "\n")
    return path


def test_hosts_take_their_inventory_addresses(tmp_path: Path) -> None:
    found = hosts_of(inventory(tmp_path, "a ansible_connection=local ansible_host=127.0.0.1",
                               "b ansible_connection=local ansible_host=127.0.0.2"), None)
    assert [(h.name, h.address) for h in found] == [("a", "127.0.0.1"), ("b", "127.0.0.2")]


def test_two_hosts_on_one_address_are_refused(tmp_path: Path) -> None:
    path = inventory(tmp_path, "a ansible_connection=local ansible_host=127.0.0.1",
                     "b ansible_connection=local ansible_host=127.0.0.1")
    with pytest.raises(AscendEnvError, match=r"a and b resolve to one address \(127.0.0.1\)"):
        hosts_of(path, None)
    result = invoke("smoke", "--framework", "hccl", "--inventory", str(path), "--device", "cpu")
    assert result.code in (1, 2) and "Traceback" not in result.out + result.err
    assert "resolve to one address" in result.err
    assert str(path) in result.err


@pytest.mark.parametrize("args", [
    ("--framework", "hccl", "--pairwise"),
    ("--framework", "torch", "--pairwise", "--inventory", "INVENTORY"),
])
def test_pairwise_without_an_hccl_fleet_is_refused(tmp_path: Path, args: tuple[str, ...]
                                                   ) -> None:
    path = inventory(tmp_path, "a ansible_connection=local ansible_host=127.0.0.1")
    result = invoke("smoke", *(str(path) if a == "INVENTORY" else a for a in args),
                    "--device", "cpu")
    assert result.code == 2 and "Traceback" not in result.out + result.err
    assert "--pairwise goes with --framework hccl --inventory" in result.err


def test_pairwise_with_one_host_is_refused(tmp_path: Path) -> None:
    path = inventory(tmp_path, "a ansible_connection=local ansible_host=127.0.0.1")
    result = invoke("smoke", "--framework", "hccl", "--inventory", str(path), "--pairwise",
                    "--device", "cpu")
    assert result.code == 2 and "--pairwise needs at least two hosts" in result.err


def test_ranks_per_host_must_be_known_on_accelerators(tmp_path: Path) -> None:
    path = inventory(tmp_path, "a ansible_connection=local ansible_host=127.0.0.1",
                     "b ansible_connection=local ansible_host=127.0.0.2")
    result = invoke("smoke", "--framework", "hccl", "--inventory", str(path))
    assert result.code == 2 and "--ranks-per-host" in result.err
