#!/usr/bin/env python3
"""Collective smoke workload: all-reduce over every device of the host, one process each.

Runs ON the target with the target's framework Python, standard library + torch (+ torch_npu
for the hccl backend) only; it never imports ascend_env. Usage:

    python hccl_workload.py --device all --steps 20 --timeout 600 [--busbw-floor 100]
    python hccl_workload.py --device cpu --nprocs 2 --steps 5      # gloo, for tests

The coordinator starts one worker process per device (this script with --worker), which
rendezvous over TCP on 127.0.0.1 and run torch.distributed.all_reduce (sum) on float32
buffers of several sizes: backend hccl on NPUs, nccl on CUDA, gloo on the CPU. Every element
of the result is checked; time per all-reduce is the slowest rank's; algbw = bytes / time and
busbw = algbw x 2(n-1)/n (nccl-tests' convention). Prints one JSON document, schema
`ascend-env/smoke/hccl/v1` (docs/smoke.md). Exit 0 ok, 1 failed or NPU stack
missing, 2 torch cannot run, 3 time limit.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

# The harness ships beside every workload (the runner copies both); the workload runs as
# a plain script there, so it imports its neighbour rather than the ascend_env package.
if TYPE_CHECKING:
    from . import harness
else:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import harness


if TYPE_CHECKING:
    import torch

# torch is imported inside the functions (noqa PLC0415): the module must load, and report,
# on a host where torch is missing, and only after TORCH_DEVICE_BACKEND_AUTOLOAD is set.

SCHEMA = "ascend-env/smoke/hccl/v1"
WORKER_SCHEMA = "ascend-env/smoke/hccl-rank/v1"
BACKENDS = {"npu": "hccl", "cuda": "nccl", "cpu": "gloo"}
DEFAULT_SIZES = {"cpu": "64K,1M,4M", "npu": "1M,16M,128M", "cuda": "1M,16M,128M"}
UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}
WARMUP = 3
FAILED_RANK_GRACE_S = 10.0


def main(argv: list[str] | None = None) -> int:
    """Coordinator or worker, by --worker."""
    parser = harness.base_parser(
        "All-reduce over the host's devices (one process each) and print JSON evidence.", "all")
    parser.add_argument("--nprocs", type=int, default=None,
                        help="processes (devices) to use; default every device, cpu 2")
    parser.add_argument("--sizes", default=None,
                        help="comma-separated buffer sizes, e.g. 1M,16M,128M (cpu 64K,1M,4M)")
    parser.add_argument("--busbw-floor", type=float, default=None,
                        help="GB/s the largest size's bus bandwidth must reach (recorded)")
    # Across hosts (ascend_env/smoke/fleet_collective.py starts one coordinator per host):
    parser.add_argument("--master", default=None, metavar="ADDRESS:PORT",
                        help="rendezvous of a multi-host run (the first host's address)")
    parser.add_argument("--node-rank", type=int, default=0, help="this host's place, from 0")
    parser.add_argument("--nnodes", type=int, default=1, help="hosts in the run")
    parser.add_argument("--bind", default=None, metavar="ADDRESS",
                        help="this host's address for gloo's connections")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--rank", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--world-size", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--init", default="", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        doc = harness.new_document(WORKER_SCHEMA, "hccl",
                                   {"rank": args.rank, "device": args.device})
        return harness.run_main(doc, args, lambda d, e: work(args, d))
    requested = {"device": args.device, "steps": args.steps, "timeout_s": args.timeout,
                 "chip": args.chip, "nprocs": args.nprocs, "sizes": args.sizes,
                 "busbw_floor_gbps": args.busbw_floor}
    doc = harness.new_document(SCHEMA, "hccl", requested)
    return harness.run_main(doc, args, lambda d, e: coordinate(args, d, e))


def parse_sizes(text: str) -> list[int]:
    """'64K,1M' -> [65536, 1048576] (bytes, whole float32 elements)."""
    sizes = []
    for raw in text.split(","):
        item = raw.strip().upper().rstrip("B")
        unit = item[-1:] if item[-1:] in ("K", "M", "G") else ""
        number = item[: len(item) - len(unit)]
        if not number.isdigit() or int(number) == 0:
            raise ValueError(f"size {raw!r}: expected a number with an optional K, M or G")
        sizes.append(int(number) * UNITS[unit] // 4 * 4)
    return sizes


def coordinate(args: argparse.Namespace, doc: dict[str, Any], emitter: harness.Emitter) -> int:
    """Find the devices, start one worker per device, gather their evidence."""
    try:
        kind, index = harness.parse_device(args.device)
        if index is not None:
            raise ValueError(f"device {args.device!r}: an all-reduce spans devices; use "
                             "--device all (npu), cuda or cpu, with --nprocs to take fewer")
        kind = "npu" if kind == "all" else kind
        sizes = parse_sizes(args.sizes or DEFAULT_SIZES[kind])
    except ValueError as exc:
        doc.update(status="error", reason=str(exc))
        return harness.EXIT_CANNOT_RUN
    backend = BACKENDS[kind]
    doc.update(backend=backend, sizes_bytes=sizes)
    count, code = device_count(kind, doc)
    if code is not None:
        return code
    nprocs = args.nprocs or (2 if kind == "cpu" else count)
    if nprocs < 1 or (kind != "cpu" and nprocs > count):
        doc.update(status="unavailable" if kind != "cpu" else "error",
                   missing=["device"] if kind != "cpu" else [],
                   reason=f"{nprocs} processes asked for, {count} {kind} device(s) visible")
        return harness.EXIT_FAILED if kind != "cpu" else harness.EXIT_CANNOT_RUN
    world = nprocs * args.nnodes
    doc.update(world_size=world, node_rank=args.node_rank, nnodes=args.nnodes)
    doc["phase"] = f"all-reduce over {world} {backend} rank(s)"
    workers = start_workers(args, kind, nprocs, sizes, emitter)
    wait_for(workers, args.timeout - emitter.elapsed() + 5)
    first = args.node_rank * nprocs
    ranks = [collect(worker, first + local) for local, worker in enumerate(workers)]
    # Across hosts each coordinator sees its own ranks; the fleet merges every host's
    # per-rank results, so they are kept, and when each rank ended: the rank that failed
    # first names the host at fault, the others only waited for it.
    keys = ("rank", "device", "pid", "status", "reason") + (
        ("results", "duration_s") if args.nnodes > 1 else ())
    doc["ranks"] = [{key: r.get(key) for key in keys
                     + (("log_tail",) if r.get("status") != "ok" else ())}
                    for r in ranks]
    doc["results"] = merge_results(ranks, world, expected=nprocs)
    problems = [f"rank {r['rank']}: {r.get('reason') or r.get('status')}"
                for r in ranks if r.get("status") != "ok"]
    problems += [f"{res['bytes']} bytes: {res['wrong_elements']} wrong element(s)"
                 for res in doc["results"] if not res["correct"]]
    return harness.finish(doc, problems)


def device_count(kind: str, doc: dict[str, Any]) -> tuple[int, int | None]:
    """How many devices of the kind this process sees; on failure the exit code beside."""
    env = doc["environment"]
    doc["phase"] = "import torch"
    os.environ["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"  # torch_npu is imported explicitly
    env["autoload_disabled"] = True
    try:
        import torch  # noqa: PLC0415
    except Exception as exc:
        doc.update(status="unavailable", missing=["torch"], reason=harness.describe(exc))
        return 0, harness.EXIT_CANNOT_RUN
    env["torch"] = torch.__version__
    if kind == "cpu":
        return 1, None
    if kind == "cuda":
        return torch.cuda.device_count(), None
    presence = harness.npu_presence()
    env.update(presence)
    doc["phase"] = "import torch_npu"
    try:
        env["torch_npu"] = getattr(harness.load("torch_npu"), "__version__", None)
    except Exception as exc:  # ImportError, OSError or RuntimeError from CANN's libraries
        doc.update(status="unavailable", reason=harness.describe(exc),
                   missing=harness.npu_missing(presence, harness.import_failure("torch_npu", exc)))
        return 0, harness.EXIT_FAILED
    npu = getattr(torch, "npu", None)
    count = int(npu.device_count()) if npu is not None and npu.is_available() else 0
    if count == 0:
        doc.update(status="unavailable", missing=harness.npu_missing(presence, ["device"]),
                   reason="torch_npu sees no NPU")
        return 0, harness.EXIT_FAILED
    return count, None


def start_workers(args: argparse.Namespace, kind: str, nprocs: int, sizes: list[int],
                  emitter: harness.Emitter) -> list[subprocess.Popen[bytes]]:
    """This script once per local rank; rendezvous on a free local port, or on --master."""
    if args.master:
        init = f"tcp://{args.master}"
    else:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            init = f"tcp://127.0.0.1:{probe.getsockname()[1]}"
    left = max(args.timeout - emitter.elapsed() - 3, 1.0)
    workers = []
    for local in range(nprocs):
        device = "cpu" if kind == "cpu" else f"{kind}:{local}"
        rank = args.node_rank * nprocs + local
        argv = [sys.executable, str(Path(__file__).resolve()), "--worker", "--rank", str(rank),
                "--world-size", str(nprocs * args.nnodes), "--init", init,
                "--device", device, "--steps", str(args.steps), "--timeout", str(left),
                "--sizes", ",".join(str(size) for size in sizes),
                *(["--bind", args.bind] if args.bind else [])]
        workers.append(subprocess.Popen(argv, stdout=subprocess.PIPE))
    return workers


def wait_for(workers: list[subprocess.Popen[bytes]], wait_s: float) -> None:
    """Until every worker ends. A rank that fails leaves the others waiting in a collective,
    so they get SIGTERM FAILED_RANK_GRACE_S later (and SIGKILL from collect if that cannot
    interrupt the wait)."""
    deadline = time.monotonic() + max(wait_s, 1.0)
    failed_at = None
    while any(worker.poll() is None for worker in workers):
        now = time.monotonic()
        if failed_at is None and any(worker.poll() not in (None, 0) for worker in workers):
            failed_at = now
        if now > deadline or (failed_at is not None and now - failed_at > FAILED_RANK_GRACE_S):
            for worker in workers:
                if worker.poll() is None:
                    worker.terminate()
            break
        time.sleep(0.1)


def collect(worker: subprocess.Popen[bytes], rank: int) -> dict[str, Any]:
    """A worker's evidence document (or why there is none)."""
    try:
        out, _ = worker.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        worker.kill()
        out, _ = worker.communicate()
    for line in reversed(out.decode("utf-8", "replace").splitlines()):
        try:
            found = json.loads(line)
        except ValueError:
            continue
        if isinstance(found, dict) and found.get("schema") == WORKER_SCHEMA:
            found["pid"] = worker.pid
            return found
    return {"rank": rank, "pid": worker.pid, "device": None, "status": "error", "results": [],
            "reason": f"worker exited {worker.returncode} without evidence"}


def merge_results(ranks: list[dict[str, Any]], nprocs: int,
                  expected: int | None = None) -> list[dict[str, Any]]:
    """Per size: correct on every rank, the slowest rank's time, algbw and busbw (GB/s) for
    a world of `nprocs`; `expected` ranks must report (default: all of them)."""
    by_size: dict[int, list[dict[str, Any]]] = {}
    for rank in ranks:
        for result in rank.get("results") or []:
            by_size.setdefault(int(result["bytes"]), []).append(result)
    merged = []
    for size in sorted(by_size):
        rows = by_size[size]
        seconds = max(float(row["time_s"]) for row in rows)
        algbw = size / seconds / 1e9 if seconds > 0 else 0.0
        merged.append({"bytes": size, "dtype": "float32", "iterations": rows[0]["iterations"],
                       "ranks_reporting": len(rows),
                       "correct": len(rows) == (expected or nprocs)
                       and all(row["correct"] for row in rows),
                       "wrong_elements": sum(int(row["wrong_elements"]) for row in rows),
                       "time_s": seconds, "algbw_gbps": algbw,
                       "busbw_gbps": algbw * 2 * (nprocs - 1) / nprocs})
    return merged


def work(args: argparse.Namespace, doc: dict[str, Any]) -> int:
    """One rank: join the group, all-reduce every size, check and time it."""
    os.environ["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    import torch  # noqa: PLC0415
    import torch.distributed as dist  # noqa: PLC0415

    kind, index = harness.parse_device(args.device)
    backend = BACKENDS[kind]
    if kind == "npu":
        harness.load("torch_npu")
    if kind in ("npu", "cuda"):
        getattr(torch, kind).set_device(index)
    device = torch.device(args.device)
    doc.update(rank=args.rank, backend=backend, phase="init_process_group")
    options: dict[str, Any] = {}
    if backend == "gloo" and args.bind:
        # gloo's connections from this host's own address (its default takes the machine's
        # host name, which names another interface, or every simulated host alike).
        gloo = dist.ProcessGroupGloo._Options()  # type: ignore[attr-defined]
        gloo._devices = [dist.ProcessGroupGloo.create_device(hostname=args.bind)]
        options["pg_options"] = gloo
    dist.init_process_group(backend, init_method=args.init, rank=args.rank,
                            world_size=args.world_size,
                            timeout=datetime.timedelta(seconds=max(args.timeout, 30.0)),
                            **options)
    results: list[dict[str, Any]] = []
    doc["results"] = results
    for size in parse_sizes(args.sizes):
        doc["phase"] = f"all-reduce {size} bytes"
        results.append(all_reduce_once(size, device, args.world_size, args.rank, args.steps))
        doc["device"] = results[-1].pop("device")
    dist.destroy_process_group()
    doc["phase"] = "done"
    wrong = [r for r in results if not r["correct"]]
    doc["status"] = "failed" if wrong else "ok"
    doc["reason"] = f"wrong results at {[r['bytes'] for r in wrong]} bytes" if wrong else None
    return harness.EXIT_FAILED if wrong else harness.EXIT_OK


def all_reduce_once(size: int, device: torch.device, world: int, rank: int,
                    iterations: int) -> dict[str, Any]:
    """Check one sum all-reduce element-wise, then time `iterations` of them."""
    import torch  # noqa: PLC0415
    import torch.distributed as dist  # noqa: PLC0415

    count = size // 4
    # Small integers: every partial sum is exact in float32, so any difference is an error.
    pattern = (torch.arange(count) % 7 + 1).float()
    buffer = (pattern * (rank + 1)).to(device)
    dist.all_reduce(buffer)
    expected = pattern * (world * (world + 1) / 2)
    wrong = int((buffer.cpu() != expected).sum())
    zeros = torch.zeros(count).to(device)  # timed on zeros: repeated sums cannot overflow
    for _ in range(WARMUP):
        dist.all_reduce(zeros)
    synchronize(zeros)
    dist.barrier()
    started = time.perf_counter()
    for _ in range(iterations):
        dist.all_reduce(zeros)
    synchronize(zeros)
    elapsed = (time.perf_counter() - started) / max(iterations, 1)
    return {"bytes": size, "iterations": iterations, "correct": wrong == 0,
            "wrong_elements": wrong, "time_s": elapsed, "device": str(buffer.device)}


def synchronize(tensor: torch.Tensor) -> None:
    """Wait for the device the tensor lives on (collectives run asynchronously)."""
    import torch  # noqa: PLC0415

    if tensor.device.type in ("npu", "cuda"):
        getattr(torch, tensor.device.type).synchronize()


if __name__ == "__main__":
    sys.exit(main())
