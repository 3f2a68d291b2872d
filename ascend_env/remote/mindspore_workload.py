#!/usr/bin/env python3
"""MindSpore smoke workload: train a small network in GRAPH_MODE on one device and print
evidence.

Runs ON the target with the target's framework Python, standard library + MindSpore (and the
numpy it depends on) only; it never imports ascend_env. Usage:

    python mindspore_workload.py --device npu:0 --steps 50 --timeout 600 [--peak-tflops 256]

Prints one JSON document, schema `ascend-env/smoke/mindspore/v1` (docs/smoke.md),
with the torch workload's fields where MindSpore exposes them: device_target Ascend (npu),
GPU (cuda) or CPU; where the parameters and outputs really were (Tensor.device, else the
context); the loss curve; steps/s; peak device memory; a float32 matmul checked element-wise
against float64; fp16 matmul TFLOPS; on an NPU the pid in `npu-smi info`. `--device all`
runs one child process per NPU, because MindSpore binds a process to one device.
Exit 0 ok, 1 failed or NPU stack missing, 2 MindSpore cannot run, 3 time limit.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

# The harness ships beside every workload (the runner copies both); the workload runs as
# a plain script there, so it imports its neighbour rather than the ascend_env package.
if TYPE_CHECKING:
    from . import harness, mindspore_parity, parity_rules
else:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import harness
    import mindspore_parity
    import parity_rules


SCHEMA = "ascend-env/smoke/mindspore/v1"
FEATURES, HIDDEN, BATCH = 32, 64, 64
CHECK_SHAPE = (128, 256, 96)  # m, k, n of the element-wise checked matmul
CHECK_RTOL = 1e-3  # same tolerance rule as the torch workload (docs/smoke.md)
CHECK_ATOL_PER_SQRT_K = 1e-3
SAMPLE_TOLERANCE = {"float16": 1e-2, "float32": 1e-4}
TARGETS = {"npu": "Ascend", "cuda": "GPU", "cpu": "CPU"}
# MindSpore (ms) and numpy (np) are loaded with importlib: MindSpore ships no type
# information, and a missing framework must become evidence rather than an ImportError.


def main(argv: list[str] | None = None) -> int:
    """Parse the options, run under the watchdog, print the evidence."""
    parser = harness.base_parser(
        "Train a small MindSpore network in GRAPH_MODE and print JSON evidence.", "npu:0")
    parser.add_argument("--peak-tflops", type=float, default=None,
                        help="the chip's fp16 peak (from the data files)")
    parser.add_argument("--matmul-size", type=int, default=None,
                        help="n of the n x n throughput matmul (default 4096, cpu 512)")
    parser.add_argument("--throughput-seconds", type=float, default=2.0)
    parser.add_argument("--parity", action="store_true",
                        help="also compare a fixed model's layers with float64 (forward only)")
    parser.add_argument("--parity-dtypes", default="fp32,fp16",
                        help="comma-separated fp32, fp16, bf16 (no bf16 matmul on the CPU)")
    args = parser.parse_args(argv)
    try:
        parity_rules.parity_dtypes(args.parity_dtypes, "")
    except ValueError as exc:
        parser.error(str(exc))
    doc = harness.new_document(SCHEMA, "mindspore", harness.training_request(args, "auto"))
    return harness.run_main(doc, args, lambda d, e: run(args, d, e))


def run(args: argparse.Namespace, doc: dict[str, Any], emitter: harness.Emitter) -> int:
    """Set MindSpore up for the requested device and train there."""
    device = harness.requested_device(doc, args.device)
    if device is None:
        return harness.EXIT_CANNOT_RUN
    kind, index = device
    if kind == "all" or (kind == "npu" and index is None):
        return run_each_npu(args, doc, emitter)
    env = doc["environment"]
    presence = harness.npu_presence() if kind == "npu" else {}
    env.update(presence)
    doc["phase"] = "import mindspore"
    try:
        ms = harness.load("mindspore")
        np = harness.load("numpy")
    except Exception as exc:
        doc.update(status="unavailable", missing=["mindspore"], reason=harness.describe(exc))
        return harness.EXIT_CANNOT_RUN
    env["mindspore"] = getattr(ms, "__version__", None)
    doc["phase"] = f"set device {TARGETS[kind]}"
    try:
        ms.set_context(mode=ms.GRAPH_MODE)
        if hasattr(ms, "set_device"):
            ms.set_device(TARGETS[kind], index or 0)
        else:  # MindSpore before 2.5
            ms.set_context(device_target=TARGETS[kind], device_id=index or 0)
    except Exception as exc:  # RuntimeError naming the Ascend plugin library that failed
        found = harness.import_failure("mindspore", exc) or ["device"]
        missing = harness.npu_missing(presence, found) if kind == "npu" else found
        doc.update(status="unavailable", reason=harness.describe(exc), missing=missing)
        return harness.EXIT_FAILED
    record: dict[str, Any] = {"device": kind if kind == "cpu" else f"{kind}:{index or 0}",
                              "status": "running"}
    doc["runs"] = [record]
    doc["fallbacks"] = {"cpu_ops": None, "aicpu_ops": None, "aicpu_error": None,
                        "cpu_ops_source": "not collected: MindSpore reports operator "
                                          "placement only through its profiler",
                        "aicpu_source": None}
    doc["phase"] = f"train on {args.device}"
    train(ms, np, args, record)
    doc["phase"] = f"matmul check on {args.device}"
    record["matmul_check"] = check_matmul(ms, np)
    doc["phase"] = f"throughput on {args.device}"
    budget = min(args.throughput_seconds, max(0.2, 0.2 * (args.timeout - emitter.elapsed())))
    record["throughput"] = throughput(ms, np, kind, args, budget)
    record["memory"] = memory(ms, kind)
    if kind in ("npu", "cuda"):
        doc["phase"] = f"process table for {args.device}"
        record["process_table"] = harness.process_table(kind, os.getpid())
    problems = harness.judge_training(record, record["device"])
    if args.parity:
        doc["phase"] = f"parity on {args.device}"
        doc["parity"] = mindspore_parity.section(
            ms, np, parity_rules.parity_dtypes(args.parity_dtypes, kind), args.seed,
            device=record["device"], rank=index or 0)
        if doc["parity"]["status"] != "ok":
            problems.append(f"parity: {doc['parity']['reason']}")
    record.update(status="failed" if problems else "ok", reason="; ".join(problems) or None)
    doc.update(phase="done", status=record["status"], reason=record["reason"])
    return harness.EXIT_FAILED if problems else harness.EXIT_OK


def run_each_npu(args: argparse.Namespace, doc: dict[str, Any], emitter: harness.Emitter) -> int:
    """`--device all`: this script once per NPU (a MindSpore process binds one device)."""
    presence = harness.npu_presence()
    doc["environment"].update(presence)
    nodes = presence["davinci_nodes"]
    if not nodes:
        doc.update(status="unavailable", missing=harness.npu_missing(presence, ["device"]),
                   reason="no /dev/davinciN device node is visible")
        return harness.EXIT_FAILED
    runs: list[dict[str, Any]] = []
    doc["runs"] = runs
    parity_ranks: list[dict[str, Any]] = []
    for index in range(len(nodes)):
        doc["phase"] = f"child process for npu:{index}"
        left = args.timeout - emitter.elapsed() - 5
        argv = [sys.executable, str(Path(__file__).resolve()), "--device", f"npu:{index}",
                "--steps", str(args.steps), "--timeout", str(max(left, 1.0)),
                "--seed", str(args.seed)]
        if args.peak_tflops:
            argv += ["--peak-tflops", str(args.peak_tflops)]
        if args.parity:
            argv += ["--parity", "--parity-dtypes", args.parity_dtypes]
        done = subprocess.run(argv, stdout=subprocess.PIPE, check=False)
        child = _last_json(done.stdout.decode("utf-8", "replace"))
        if child is None:
            runs.append({"device": f"npu:{index}", "status": "failed",
                         "reason": f"child exited {done.returncode} without evidence"})
            continue
        for key in ("missing", "fallbacks"):
            doc[key] = child.get(key) or doc.get(key)
        parity_ranks += (child.get("parity") or {}).get("ranks") or []
        runs.extend(child.get("runs") or [{"device": f"npu:{index}", "status": "failed",
                                           "reason": child.get("reason")}])
    if args.parity:  # every child's rank, judged together
        doc["parity"] = mindspore_parity.assemble(
            parity_ranks, parity_rules.parity_dtypes(args.parity_dtypes, "npu"), args.seed)
    return harness.finish(doc, [f"{r['device']}: {r.get('reason')}" for r in runs
                                if r.get("status") != "ok"])


def _last_json(text: str) -> dict[str, Any] | None:
    for line in reversed(text.splitlines()):
        try:
            found = json.loads(line)
        except ValueError:
            continue
        if isinstance(found, dict):
            return found
    return None


def device_name(raw: Any) -> str:
    """MindSpore's device spelling in the torch one: Ascend:0 -> npu:0, GPU:1 -> cuda:1."""
    kind, _, index = str(raw).partition(":")
    kind = {"ascend": "npu", "gpu": "cuda"}.get(kind.lower(), kind.lower())
    return kind if kind == "cpu" or not index else f"{kind}:{index}"


def current_device(ms: Any) -> str:
    """Where the context says computation goes (get_current_device, else the context)."""
    if hasattr(ms, "get_current_device"):
        target, index = ms.get_current_device()
    else:
        target, index = ms.get_context("device_target"), ms.get_context("device_id")
    return device_name(f"{target}:{index}")


def observed(ms: Any, tensors: list[Any]) -> tuple[list[str], str]:
    """Devices of the tensors (Tensor.device, MindSpore 2.6+) else of the context."""
    if tensors and all(hasattr(t, "device") for t in tensors):
        return sorted({device_name(t.device) for t in tensors}), "Tensor.device"
    return [current_device(ms)], "context (this MindSpore has no Tensor.device)"


def train(ms: Any, np: Any, args: argparse.Namespace, record: dict[str, Any]) -> None:
    """Fit a two-layer network to a noisy linear map with TrainOneStepCell in GRAPH_MODE."""
    nn = ms.nn
    rng = np.random.default_rng(args.seed)
    target = rng.standard_normal((FEATURES, 1)).astype(np.float32)
    net = nn.SequentialCell([nn.Dense(FEATURES, HIDDEN), nn.ReLU(), nn.Dense(HIDDEN, 1)])
    precision = "fp32"
    if ms.get_context("device_target") == "Ascend":
        net.to_float(ms.float16)  # Ascend's mixed precision: the cube units compute in fp16
        precision = "fp16"
    record["precision"] = precision
    optimizer = nn.Adam(net.trainable_params(), learning_rate=1e-2)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), optimizer)
    step.set_train()
    losses: list[float | None] = []
    training: dict[str, Any] = {"steps": 0, "loss": losses, "optimizer": "Adam(lr=0.01)",
                                "model": f"Dense({FEATURES},{HIDDEN})-ReLU-Dense({HIDDEN},1)",
                                "batch": BATCH, "mode": "GRAPH_MODE"}
    record["training"] = training
    outputs: set[str] = set()
    started = time.perf_counter()
    warm = started
    for number in range(args.steps):
        x = rng.standard_normal((BATCH, FEATURES)).astype(np.float32)
        y = (x @ target + 0.01 * rng.standard_normal((BATCH, 1))).astype(np.float32)
        loss = step(ms.Tensor(x), ms.Tensor(y))
        value = float(loss.asnumpy())
        losses.append(value if math.isfinite(value) else None)
        training["steps"] = number + 1
        if hasattr(loss, "device"):
            outputs.add(device_name(loss.device))
        if number == 0:
            warm = time.perf_counter()
            training["first_step_s"] = round(warm - started, 4)
    finished = time.perf_counter()
    training["seconds"] = round(finished - started, 4)
    # The first step compiles the graph; the rate is taken over the steps after it.
    training["steps_per_s"] = (args.steps - 1) / (finished - warm) if args.steps > 1 else None
    training["summary"] = harness.loss_summary(losses)
    parameters, source = observed(ms, list(net.trainable_params()))
    record["placement"] = {"parameters": parameters,
                           "batches": sorted(outputs) or [current_device(ms)],
                           "loss": sorted(outputs)[0] if outputs else None,
                           "context": current_device(ms), "source": source,
                           "note": "batches: the device of each step's loss, the graph's "
                                   "output (inputs are host arrays fed to the graph)"}


def check_matmul(ms: Any, np: Any) -> dict[str, Any]:
    """A float32 matmul on the device, every element checked against float64 on the host."""
    m, k, n = CHECK_SHAPE
    rng = np.random.default_rng(1)
    a = (rng.random((m, k)) * 2 - 1).astype(np.float32)
    b = (rng.random((k, n)) * 2 - 1).astype(np.float32)
    reference = a.astype(np.float64) @ b.astype(np.float64)
    out = ms.ops.matmul(ms.Tensor(a), ms.Tensor(b))
    devices, _ = observed(ms, [out])
    diff = np.abs(out.asnumpy().astype(np.float64) - reference)
    atol = CHECK_ATOL_PER_SQRT_K * math.sqrt(k)
    wrong = int(np.count_nonzero(~(diff <= atol + CHECK_RTOL * np.abs(reference))))
    return {"shape": [m, k, n], "dtype": "float32", "device": devices[0],
            "reference": "float64 on the host (numpy)", "atol": atol, "rtol": CHECK_RTOL,
            "max_abs_err": float(diff.max()), "elements": m * n, "mismatches": wrong,
            "ok": wrong == 0}


def synchronize(ms: Any, tensor: Any) -> None:
    """Wait for the device queue (runtime.synchronize, hal before 2.6, else a host copy)."""
    for owner in (getattr(ms, "runtime", None), getattr(ms, "hal", None)):
        if owner is not None and hasattr(owner, "synchronize"):
            owner.synchronize()
            return
    tensor.asnumpy()


def throughput(ms: Any, np: Any, kind: str, args: argparse.Namespace,
               budget_s: float) -> dict[str, Any]:
    """TFLOPS of repeated n x n matmuls: fp16 on an accelerator, fp32 on the CPU."""
    size = int(args.matmul_size or (512 if kind == "cpu" else 4096))
    name = "float32" if kind == "cpu" else "float16"
    rng = np.random.default_rng(2)
    a_host = (rng.random((size, size)) * 2 - 1).astype(name)
    b_host = (rng.random((size, size)) * 2 - 1).astype(name)
    a, b = ms.Tensor(a_host), ms.Tensor(b_host)
    out = ms.ops.matmul(a, b)  # warm-up: kernel selection and compilation happen here
    synchronize(ms, out)
    warm = time.perf_counter()
    out = ms.ops.matmul(a, b)
    synchronize(ms, out)
    # Check the clock after every call when one call is slow, else every fourth.
    every = 1 if time.perf_counter() - warm > budget_s / 20 else 4
    iterations = 0
    started = time.perf_counter()
    while True:
        out = ms.ops.matmul(a, b)
        iterations += 1
        if iterations % every == 0:
            synchronize(ms, out)
            if time.perf_counter() - started >= budget_s or iterations >= 1000:
                break
    synchronize(ms, out)
    seconds = time.perf_counter() - started
    tflops = 2.0 * size**3 * iterations / seconds / 1e12
    rows = out.asnumpy()[:4].astype(np.float64)
    reference = a_host[:4].astype(np.float64) @ b_host.astype(np.float64)
    error = float(np.abs(rows - reference).max() / np.abs(reference).max())
    peak = args.peak_tflops
    devices, _ = observed(ms, [out])
    return {"dtype": name, "n": size, "iterations": iterations, "seconds": seconds,
            "tflops": tflops, "device": devices[0], "peak_tflops": peak,
            "fraction_of_peak": tflops / peak if peak else None, "sample_rows": 4,
            "sample_rel_err": error, "sample_tolerance": SAMPLE_TOLERANCE[name],
            "sample_ok": error <= SAMPLE_TOLERANCE[name]}


def memory(ms: Any, kind: str) -> dict[str, Any]:
    """Peak device memory MindSpore allocated (runtime, or hal before 2.6)."""
    host = harness.host_max_rss_bytes()
    if kind == "cpu":
        return {"peak_allocated_bytes": None, "source": "cpu: no device allocator",
                "host_max_rss_bytes": host}
    for name in ("runtime", "hal"):
        owner = getattr(ms, name, None)
        if owner is not None and hasattr(owner, "max_memory_allocated"):
            return {"peak_allocated_bytes": int(owner.max_memory_allocated()),
                    "source": f"mindspore.{name}.max_memory_allocated",
                    "host_max_rss_bytes": host}
    return {"peak_allocated_bytes": None, "source": "this MindSpore reports no device memory",
            "host_max_rss_bytes": host}


if __name__ == "__main__":
    sys.exit(main())
