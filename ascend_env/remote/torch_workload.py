#!/usr/bin/env python3
"""PyTorch smoke workload: train a small model on one device (or each NPU) and print evidence.

Runs ON the target with the target's framework Python, standard library + torch (+ torch_npu
for npu devices) only; it never imports ascend_env. Usage:

    python torch_workload.py --device npu:0 --steps 50 --timeout 600 [--peak-tflops 256]

Prints one JSON document, schema `ascend-env/smoke/torch/v1` (docs/smoke.md):
where the parameters and batches really were, the loss curve, steps/s, peak device memory,
a float32 matmul checked element-wise against float64 on the CPU, the TFLOPS of a large
fp16/bf16 matmul, and on an NPU the pid in `npu-smi info` and the operators that fell back
to the CPU or ran on the AI CPU. Exit 0 ok, 1 failed or NPU stack missing, 2 torch itself
cannot run, 3 time limit.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any

# The harness ships beside every workload (the runner copies both); the workload runs as
# a plain script there, so it imports its neighbour rather than the ascend_env package.
if TYPE_CHECKING:
    from collections.abc import Callable

    from . import harness, op_fallbacks, parity_rules, parity_workers, torch_parity
else:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import harness
    import op_fallbacks
    import parity_rules
    import parity_workers
    import torch_parity


if TYPE_CHECKING:
    import torch

# torch is imported inside the functions (noqa PLC0415): the module must load, and report,
# on a host where torch is missing, and only after TORCH_DEVICE_BACKEND_AUTOLOAD is set.

SCHEMA = "ascend-env/smoke/torch/v1"
FEATURES, HIDDEN, BATCH = 32, 64, 64
CHECK_SHAPE = (128, 256, 96)  # m, k, n of the element-wise checked matmul
# |device - float64 reference| <= atol + rtol * |reference|, atol growing with sqrt(k): inputs
# are uniform in [-1, 1]; this admits fp32 and HF32 rounding and rejects a wrong result.
CHECK_RTOL = 1e-3
CHECK_ATOL_PER_SQRT_K = 1e-3
# Sampled rows of the throughput matmul against float64: max error / max |reference|.
SAMPLE_TOLERANCE = {"float16": 1e-2, "bfloat16": 2e-2, "float32": 1e-4}


def main(argv: list[str] | None = None) -> int:
    """Parse the options, run under the watchdog, print the evidence."""
    parser = harness.base_parser(
        "Train a small PyTorch model on a device and print JSON evidence.", "npu:0")
    parser.add_argument("--peak-tflops", type=float, default=None,
                        help="the chip's peak for the throughput dtype (from the data files)")
    parser.add_argument("--precision", choices=("auto", "fp32", "fp16", "bf16"),
                        default="auto", help="auto: fp16 on npu, bf16/fp16 on cuda, fp32 on cpu")
    parser.add_argument("--matmul-size", type=int, default=None,
                        help="n of the n x n throughput matmul (default 4096, cpu 512)")
    parser.add_argument("--throughput-seconds", type=float, default=2.0)
    parser.add_argument("--profile-ops", choices=("auto", "on", "off"), default="auto",
                        help="profile two steps for AI CPU operators (auto: on for npu)")
    parser.add_argument("--parity", action="store_true",
                        help="also compare a fixed model layer by layer with float64 on the CPU")
    parser.add_argument("--parity-dtypes", default="auto",
                        help="comma-separated fp32, fp16, bf16 (auto: fp32,fp16 on npu, "
                             "fp32,bf16 elsewhere)")
    parser.add_argument("--parity-ranks", type=int, default=1,
                        help="cpu: parity worker processes (npu/cuda: one per device)")
    parser.add_argument("--parity-worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--rank", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        parity_rules.parity_dtypes(args.parity_dtypes, "cpu")
    except ValueError as exc:
        parser.error(str(exc))
    if args.parity_worker:
        worker = harness.new_document(parity_workers.WORKER_SCHEMA, "torch",
                                      {"device": args.device, "rank": args.rank,
                                       "dtypes": args.parity_dtypes, "seed": args.seed})
        return harness.run_main(worker, args, lambda d, e: torch_parity.worker(args, d, e))
    doc = harness.new_document(SCHEMA, "torch", harness.training_request(args, args.precision))
    return harness.run_main(doc, args, lambda d, e: run(args, d, e))


def run(args: argparse.Namespace, doc: dict[str, Any], emitter: harness.Emitter) -> int:
    """Prepare torch for the requested device, then train on each device asked for."""
    device = harness.requested_device(doc, args.device)
    if device is None:
        return harness.EXIT_CANNOT_RUN
    kind, index = device
    kind = "npu" if kind == "all" else kind
    env = doc["environment"]
    doc["phase"] = "import torch"
    # torch_npu registers itself through a torch.backends entry point when torch is imported;
    # without CANN that import fails. Autoload off, torch_npu imported explicitly below.
    os.environ["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    env["autoload_disabled"] = True
    try:
        import torch  # noqa: PLC0415
    except Exception as exc:
        doc.update(status="unavailable", missing=["torch"], reason=harness.describe(exc))
        return harness.EXIT_CANNOT_RUN
    env["torch"] = torch.__version__
    backend, code = device_backend(kind, doc)
    if code is not None:
        return code
    indices: list[int | None] = [None]
    if backend is not None:
        count = int(backend.device_count()) if backend.is_available() else 0
        env["device_count"] = count
        if count == 0 or (index is not None and index >= count):
            doc.update(status="unavailable", missing=["device"],
                       reason=f"{args.device} requested, {count} {kind} device(s) visible")
            if kind == "npu":
                doc["missing"] = harness.npu_missing(env, ["device"])
            return harness.EXIT_FAILED
        indices = [index] if index is not None else list(range(count))
    runs: list[dict[str, Any]] = []
    doc["runs"] = runs
    for number, device_index in enumerate(indices):
        record: dict[str, Any] = {"device": kind if device_index is None
                                  else f"{kind}:{device_index}", "status": "running"}
        runs.append(record)
        try:
            run_on_device(record, backend=backend, index=device_index, args=args, doc=doc,
                          emitter=emitter, profile=number == 0)
        except Exception as exc:  # a faulty device must not hide the evidence of the others
            record.update(status="error", reason=f"{harness.describe(exc)} (during {doc['phase']})",
                          traceback=traceback.format_exc()[-4000:])
    if kind == "npu":
        doc["fallbacks"]["cpu_ops"] = op_fallbacks.cpu_fallback_ops(emitter.log_text())
    if args.parity:
        doc["phase"] = "parity"
        devices = [r["device"] for r in runs] * (args.parity_ranks if kind == "cpu" else 1)
        doc["parity"] = torch_parity.parity(args, devices, emitter)
    reasons = [f"{r['device']}: {r['reason']}" for r in runs if r["status"] != "ok"]
    if args.parity and doc["parity"]["status"] != "ok":
        reasons.append(f"parity: {doc['parity']['reason']}")
    return harness.finish(doc, reasons)


def device_backend(kind: str, doc: dict[str, Any]) -> tuple[Any, int | None]:
    """torch.npu (after importing torch_npu) or torch.cuda; None for the CPU. On failure the
    evidence says what is missing and the exit code is returned beside."""
    import torch  # noqa: PLC0415

    env = doc["environment"]
    if kind == "cuda":
        env["cuda"] = torch.version.cuda
        return torch.cuda, None
    if kind != "npu":
        return None, None
    presence = harness.npu_presence()
    env.update(presence)
    doc["fallbacks"] = {"cpu_ops": [], "aicpu_ops": None, "aicpu_error": None,
                        "cpu_ops_source": "torch_npu's CAUTION warnings (npu_cpu_fallback) "
                                          "in the run's own output",
                        "aicpu_source": None}
    doc["phase"] = "import torch_npu"
    try:
        env["torch_npu"] = getattr(harness.load("torch_npu"), "__version__", None)
    except Exception as exc:  # ImportError, OSError or RuntimeError from CANN's libraries
        doc.update(status="unavailable", reason=harness.describe(exc),
                   missing=harness.npu_missing(presence, harness.import_failure("torch_npu", exc)))
        return None, harness.EXIT_FAILED
    backend = getattr(torch, "npu", None)
    if backend is None:
        doc.update(status="unavailable", missing=["torch_npu"],
                   reason="torch_npu imported but registered no torch.npu module")
        return None, harness.EXIT_FAILED
    return backend, None


def run_on_device(record: dict[str, Any], *, backend: Any, index: int | None,
                  args: argparse.Namespace, doc: dict[str, Any], emitter: harness.Emitter,
                  profile: bool) -> None:
    """Train, check a matmul, measure throughput and memory on one device."""
    import torch  # noqa: PLC0415

    device = torch.device(record["device"])
    if backend is not None:
        backend.set_device(index)
        record["device_name"] = str(backend.get_device_name(index))
        backend.reset_peak_memory_stats(index)
    doc["phase"] = f"train on {device}"
    step = train(device, args, record)
    doc["phase"] = f"matmul check on {device}"
    record["matmul_check"] = check_matmul(device)
    doc["phase"] = f"throughput on {device}"
    budget = min(args.throughput_seconds, max(0.2, 0.2 * (args.timeout - emitter.elapsed())))
    record["throughput"] = throughput(device, args, record["precision"], budget)
    record["memory"] = memory(backend, index)
    if device.type in ("npu", "cuda"):
        doc["phase"] = f"process table for {device}"
        record["process_table"] = harness.process_table(device.type, os.getpid())
    wanted = args.profile_ops == "on" or (args.profile_ops == "auto"
                                          and args.timeout - emitter.elapsed() > 90)
    if device.type == "npu" and profile and wanted:
        doc["phase"] = f"profile two steps on {device}"
        profile_aicpu(step, doc["fallbacks"])
    problems = harness.judge_training(record, str(device))
    record["status"] = "failed" if problems else "ok"
    record["reason"] = "; ".join(problems) or None


def precision_for(device_type: str, wanted: str) -> str:
    """The mixed precision a device trains with: fp16 on NPU, bf16 where CUDA has it."""
    import torch  # noqa: PLC0415

    if wanted != "auto":
        return wanted
    if device_type == "npu":
        return "fp16"
    if device_type == "cuda":
        return "bf16" if torch.cuda.is_bf16_supported() else "fp16"
    return "fp32"  # the CPU has no mixed-precision units worth proving here


def train(device: torch.device, args: argparse.Namespace,
          record: dict[str, Any]) -> Callable[[], float]:
    """Fit a two-layer MLP to a noisy linear map; returns one training step for profiling."""
    import torch  # noqa: PLC0415

    generator = torch.Generator().manual_seed(args.seed)
    target = torch.randn(FEATURES, 1, generator=generator)
    model = torch.nn.Sequential(torch.nn.Linear(FEATURES, HIDDEN), torch.nn.ReLU(),
                                torch.nn.Linear(HIDDEN, 1)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    # Autocast follows where the parameters really are: a framework that silently kept them
    # on the CPU still trains, and the evidence says where.
    observed = next(model.parameters()).device.type
    precision = precision_for(device.type, args.precision)
    record["precision"] = precision
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(precision)
    scaler = grad_scaler(observed) if precision == "fp16" else None
    batches: set[str] = set()
    losses: list[float | None] = []
    training: dict[str, Any] = {"steps": 0, "loss": losses, "optimizer": "Adam(lr=0.01)",
                                "model": f"Linear({FEATURES},{HIDDEN})-ReLU-Linear({HIDDEN},1)",
                                "batch": BATCH}
    record["training"] = training
    placement: dict[str, Any] = {"parameters": sorted({str(p.device)
                                                       for p in model.parameters()}),
                                 "batches": [], "loss": None}
    record["placement"] = placement

    def step() -> float:
        x = torch.randn(BATCH, FEATURES, generator=generator)
        y = x @ target + 0.01 * torch.randn(BATCH, 1, generator=generator)
        x, y = x.to(device), y.to(device)
        batches.update((str(x.device), str(y.device)))
        optimizer.zero_grad(set_to_none=True)
        with autocast(observed, dtype):
            prediction = model(x)
        loss = torch.nn.functional.mse_loss(prediction.float(), y)
        placement["loss"] = str(loss.device)
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            torch.autograd.backward(loss)
            optimizer.step()
        return float(loss.detach().float().cpu())

    started = time.perf_counter()
    warm = started
    for number in range(args.steps):
        value = step()
        losses.append(value if math.isfinite(value) else None)
        training["steps"] = number + 1
        placement["batches"] = sorted(batches)
        if number == 0:
            warm = time.perf_counter()
            training["first_step_s"] = round(warm - started, 4)
    finished = time.perf_counter()
    training["seconds"] = round(finished - started, 4)
    # The first step compiles kernels; the rate is taken over the steps after it.
    training["steps_per_s"] = (args.steps - 1) / (finished - warm) if args.steps > 1 else None
    training["summary"] = harness.loss_summary(losses)
    placement["parameters"] = sorted({str(p.device) for p in model.parameters()})
    return step


def autocast(device_type: str, dtype: torch.dtype | None) -> contextlib.AbstractContextManager[Any]:
    """torch.autocast for the device the tensors are on; a no-op for fp32."""
    import torch  # noqa: PLC0415

    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device_type, dtype=dtype)


def grad_scaler(device_type: str) -> Any:
    """A loss scaler for fp16 training (torch.amp, or the backend's own on old releases)."""
    import torch  # noqa: PLC0415

    try:
        return torch.amp.GradScaler(device_type)
    except (AttributeError, TypeError, RuntimeError):
        return getattr(torch, device_type).amp.GradScaler()


def synchronize(tensor: torch.Tensor) -> None:
    """Wait for the device the tensor lives on (kernels run asynchronously)."""
    import torch  # noqa: PLC0415

    if tensor.device.type in ("npu", "cuda"):
        getattr(torch, tensor.device.type).synchronize()


def check_matmul(device: torch.device) -> dict[str, Any]:
    """A float32 matmul on the device, every element checked against float64 on the CPU."""
    import torch  # noqa: PLC0415

    m, k, n = CHECK_SHAPE
    generator = torch.Generator().manual_seed(1)
    a = torch.rand(m, k, generator=generator) * 2 - 1
    b = torch.rand(k, n, generator=generator) * 2 - 1
    reference = a.double() @ b.double()
    out = a.to(device) @ b.to(device)
    result = out.cpu().double()
    atol = CHECK_ATOL_PER_SQRT_K * math.sqrt(k)
    diff = (result - reference).abs()
    wrong = int((~(diff <= atol + CHECK_RTOL * reference.abs())).sum())
    return {"shape": [m, k, n], "dtype": "float32", "device": str(out.device),
            "reference": "float64 on cpu", "atol": atol, "rtol": CHECK_RTOL,
            "max_abs_err": float(diff.max()), "elements": m * n, "mismatches": wrong,
            "ok": wrong == 0}


def throughput(device: torch.device, args: argparse.Namespace, precision: str,
               budget_s: float) -> dict[str, Any]:
    """TFLOPS of repeated n x n matmuls in the training precision (fp32 on the CPU)."""
    import torch  # noqa: PLC0415

    # Sized for where the tensors really land: a framework that silently keeps them on the
    # host must not spend the run in a 4096^3 half-precision CPU matmul.
    on_host = torch.zeros(1).to(device).device.type == "cpu"
    size = int(args.matmul_size or (512 if on_host else 4096))
    name = "float32" if on_host else {"fp16": "float16", "bf16": "bfloat16"}.get(precision,
                                                                                 "float32")
    dtype = getattr(torch, name)
    generator = torch.Generator().manual_seed(2)
    a = (torch.rand(size, size, generator=generator) * 2 - 1).to(device).to(dtype)
    b = (torch.rand(size, size, generator=generator) * 2 - 1).to(device).to(dtype)
    out = a @ b  # warm-up: kernel selection and compilation happen here
    synchronize(out)
    warm = time.perf_counter()
    out = a @ b
    synchronize(out)
    # Check the clock after every call when one call is slow, else every fourth.
    every = 1 if time.perf_counter() - warm > budget_s / 20 else 4
    iterations = 0
    started = time.perf_counter()
    while True:
        out = a @ b
        iterations += 1
        if iterations % every == 0:
            synchronize(out)
            if time.perf_counter() - started >= budget_s or iterations >= 1000:
                break
    synchronize(out)
    seconds = time.perf_counter() - started
    tflops = 2.0 * size**3 * iterations / seconds / 1e12
    rows = out[:4].float().cpu().double()
    reference = a[:4].cpu().double() @ b.cpu().double()
    error = float((rows - reference).abs().max() / reference.abs().max())
    peak = args.peak_tflops
    return {"dtype": name, "n": size, "iterations": iterations, "seconds": seconds,
            "tflops": tflops, "device": str(out.device), "peak_tflops": peak,
            "fraction_of_peak": tflops / peak if peak else None,
            "sample_rows": 4, "sample_rel_err": error,
            "sample_tolerance": SAMPLE_TOLERANCE[name],
            "sample_ok": error <= SAMPLE_TOLERANCE[name]}


def memory(backend: Any, index: int | None) -> dict[str, Any]:
    """Peak memory the framework allocated on the device (the host's peak RSS beside it)."""
    host = harness.host_max_rss_bytes()
    if backend is None:
        return {"peak_allocated_bytes": None, "source": "cpu: no device allocator",
                "host_max_rss_bytes": host}
    name = "torch.npu" if str(backend.__name__).endswith("npu") else "torch.cuda"
    return {"peak_allocated_bytes": int(backend.max_memory_allocated(index)),
            "source": f"{name}.max_memory_allocated", "host_max_rss_bytes": host}


def profile_aicpu(step: Callable[[], float], fallbacks: dict[str, Any]) -> None:
    """Profile two training steps with torch_npu's profiler; list AI CPU operators."""
    fallbacks["aicpu_source"] = ("torch_npu.profiler (ProfilerActivity.NPU): kernel_details.csv "
                                 "rows whose Accelerator Core is AI_CPU")
    folder = tempfile.mkdtemp(prefix="ascend-env-profile-")
    try:
        npu = harness.load("torch_npu")
        profiler = npu.profiler
        session = profiler.profile(activities=[profiler.ProfilerActivity.NPU],
                                   on_trace_ready=profiler.tensorboard_trace_handler(folder))
        with session:
            step()
            step()
            npu.npu.synchronize()
        tables = sorted(Path(folder).rglob("kernel_details.csv"))
        if not tables:
            fallbacks["aicpu_error"] = "the profiler wrote no kernel_details.csv"
            return
        found: set[str] = set()
        for table in tables:
            found.update(harness.aicpu_ops(table.read_text(encoding="utf-8", errors="replace")))
        fallbacks["aicpu_ops"] = sorted(found)
    except Exception as exc:  # profiling is extra evidence; its failure must not end the run
        fallbacks["aicpu_error"] = harness.describe(exc)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
