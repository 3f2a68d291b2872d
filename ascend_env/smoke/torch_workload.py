#!/usr/bin/env python3
"""PyTorch smoke workload: train a small model on one device (or each NPU) and print evidence.

Runs ON the target with the target's framework Python, standard library + torch (+ torch_npu
for npu devices) only; it never imports ascend_env. Usage:

    python torch_workload.py --device npu:0 --steps 50 --timeout 600 [--peak-tflops 256]

Prints one JSON document, schema `ascend-env/smoke/torch/v1` (README.md, "Smoke workloads"):
where the parameters and batches really were, the loss curve, steps/s, peak device memory,
a float32 matmul checked element-wise against float64 on the CPU, the TFLOPS of a large
fp16/bf16 matmul, and on an NPU the pid in `npu-smi info` and the operators that fell back
to the CPU or ran on the AI CPU. Exit 0 ok, 1 failed or NPU stack missing, 2 torch itself
cannot run, 3 time limit.
"""

from __future__ import annotations

# --- harness: begin ------------------------------------------------------------------------
# (Verbatim copy of ascend_env/smoke/harness.py; edit there, then copy into each workload.)
import argparse
import contextlib
import csv
import datetime
import importlib
import io
import json
import math
import os
import platform
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path
from types import ModuleType
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

# Workload exit codes. The controller judges the evidence, these only summarise it.
EXIT_OK = 0
EXIT_FAILED = 1  # ran (or tried to) and the evidence shows something wrong or missing
EXIT_CANNOT_RUN = 2  # the framework itself cannot run, or bad arguments
EXIT_TIMEOUT = 3  # the watchdog ended the run; the evidence says in which phase

DEVICE_KINDS = ("cpu", "npu", "cuda", "all")
LOG_TAIL_CHARS = 4000
MAX_LOG_BYTES = 4 * 1024 * 1024
LOSS_MIN_DROP = 0.1  # the last fifth of the curve must sit at least 10% below the first fifth
DRIVER_LIBS = ("libascend_hal.so", "libdrvdsmi_host.so", "libdcmi.so")
FALLBACK_RE = re.compile(
    r"operator '([^']+)' is not currently supported on the NPU backend and will fall back "
    r"to run on the CPU")


class Emitter:
    """Prints exactly one JSON evidence document on stdout, also when the time limit strikes.

    While the workload runs, file descriptors 1 and 2 point into an unlinked temporary file,
    so that framework chatter (CANN logs, C++ warnings) cannot corrupt the JSON; the log's
    tail goes into the evidence and its text is searched for CPU fallbacks.
    """

    def __init__(self, doc: dict[str, Any], *, capture: bool = True) -> None:
        self.doc = doc
        self._lock = threading.Lock()
        self._done = False
        self._started = time.monotonic()
        self._timer: threading.Timer | None = None
        self._reader: IO[bytes] | None = None
        self._saved: tuple[int, int] | None = None
        if capture:
            sys.stdout.flush()
            sys.stderr.flush()
            handle, path = tempfile.mkstemp(prefix="ascend-env-smoke-", suffix=".log")
            os.close(handle)
            # O_APPEND: the framework writes through fds 1 and 2 while we read the same file.
            writer = os.open(path, os.O_WRONLY | os.O_APPEND)
            self._reader = Path(path).open("rb")  # noqa: SIM115 - lives as long as the run
            Path(path).unlink()
            self._saved = (os.dup(1), os.dup(2))
            os.dup2(writer, 1)
            os.dup2(writer, 2)
            os.close(writer)

    def elapsed(self) -> float:
        """Seconds since the workload started."""
        return time.monotonic() - self._started

    def arm(self, timeout_s: float) -> None:
        """Start the watchdog: at the limit, print what was gathered and exit 3. SIGTERM
        (a transport's own time limit, a coordinator stopping a rank) prints it too."""
        self._timer = threading.Timer(max(timeout_s - self.elapsed(), 0.0), self._finish,
                                      args=("timeout", f"time limit of {timeout_s:g} s reached",
                                            EXIT_TIMEOUT))
        self._timer.daemon = True
        self._timer.start()
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, self._terminated)

    def _terminated(self, signum: int, frame: Any) -> None:
        self._finish("error", f"terminated by signal {signum}", EXIT_FAILED)

    def _finish(self, status: str, why: str, code: int) -> None:
        if self._done:
            return
        self.doc["status"] = status
        self.doc["reason"] = "{} during {}".format(why, self.doc.get("phase") or "start-up")
        try:
            self.emit(code)
        finally:  # even if stdout is gone, the run must end now
            os._exit(code)

    def log_text(self) -> str:
        """What the framework printed so far (the last few MiB)."""
        if self._reader is None:
            return ""
        sys.stdout.flush()
        sys.stderr.flush()
        size = os.fstat(self._reader.fileno()).st_size
        self._reader.seek(max(0, size - MAX_LOG_BYTES))
        return self._reader.read().decode("utf-8", "replace")

    def emit(self, code: int) -> int:
        """Print the evidence once (later calls do nothing) and return the exit code."""
        with self._lock:
            if self._done:
                return code
            self._done = True
            if self._timer is not None:
                self._timer.cancel()
            self.doc["duration_s"] = round(self.elapsed(), 3)
            log = self.log_text()
            if log:
                self.doc["log_tail"] = log[-LOG_TAIL_CHARS:]
            text = dumps(self.doc)
            if self._saved is not None:
                with contextlib.suppress(OSError, ValueError):  # a closed stream: nothing to keep
                    sys.stdout.flush()
                    sys.stderr.flush()
                os.dup2(self._saved[0], 1)
                os.dup2(self._saved[1], 2)
            data = (text + "\n").encode("utf-8")
            while data:
                data = data[os.write(1, data):]
        return code


def dumps(doc: dict[str, Any]) -> str:
    """JSON text of a document another thread may still be filling (non-finite -> null)."""
    for _ in range(5):
        try:
            return json.dumps(_finite(doc), allow_nan=False, default=str)
        except RuntimeError:  # "changed size during iteration": the main thread wrote
            time.sleep(0.01)
    return json.dumps({"schema": doc.get("schema"), "status": "error",
                       "reason": "evidence could not be serialised"})


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _finite(v) for k, v in list(value.items())}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in list(value)]
    return value


def base_parser(description: str, default_device: str) -> argparse.ArgumentParser:
    """The options every workload takes."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--device", default=default_device,
                        help="cpu, npu:N, cuda:N, or all (every NPU); default %(default)s")
    parser.add_argument("--steps", type=int, default=50, help="training steps or iterations")
    parser.add_argument("--timeout", type=float, default=600.0,
                        help="seconds; at the limit the evidence so far is printed (exit 3)")
    parser.add_argument("--chip", default=None, help="chip family, recorded in the evidence")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-capture", action="store_true",
                        help="leave the framework's own output on stdout/stderr")
    return parser


def run_main(doc: dict[str, Any], args: argparse.Namespace,
             body: Callable[[dict[str, Any], Emitter], int]) -> int:
    """Run a workload body under the watchdog; whatever happens, print the evidence."""
    emitter = Emitter(doc, capture=not args.no_capture)
    emitter.arm(args.timeout)
    try:
        code = body(doc, emitter)
    except Exception as exc:  # any crash is evidence too, never a bare traceback
        doc["status"] = "error"
        doc["reason"] = describe(exc)
        doc["traceback"] = traceback.format_exc()[-4000:]
        code = EXIT_FAILED
    return emitter.emit(code)


def load(name: str) -> ModuleType:
    """Import a module by name (frameworks are imported late: a failure is evidence)."""
    return importlib.import_module(name)


def new_document(schema: str, framework: str, requested: dict[str, Any]) -> dict[str, Any]:
    """The skeleton every workload fills in."""
    return {"schema": schema, "framework": framework, "status": "running", "reason": None,
            "missing": [], "requested": requested, "environment": environment(),
            "phase": "start-up"}


def environment() -> dict[str, Any]:
    """Which interpreter, process and host produced the evidence."""
    return {"python": platform.python_version(), "executable": sys.executable,
            "pid": os.getpid(), "hostname": socket.gethostname(),
            "platform": platform.platform(),
            "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}


def parse_device(text: str) -> tuple[str, int | None]:
    """'npu:0' -> ('npu', 0), 'cpu' -> ('cpu', None), 'all' -> ('all', None)."""
    kind, _, index = text.strip().lower().partition(":")
    if kind not in DEVICE_KINDS:
        raise ValueError(f"device {text!r}: expected cpu, npu[:N], cuda[:N] or all")
    if index == "":
        return kind, None
    if not index.isdigit() or kind in ("cpu", "all"):
        raise ValueError(f"device {text!r}: the index must be a number after npu: or cuda:")
    return kind, int(index)


def describe(exc: BaseException) -> str:
    """One line naming an exception (C++ call stacks cut off)."""
    text = str(exc).strip().split("\n\n")[0].strip()
    return f"{type(exc).__name__}: {text[:1500]}"


def import_failure(module: str, exc: BaseException) -> list[str]:
    """What an import failure says is missing: the module itself, CANN or the driver."""
    if isinstance(exc, ModuleNotFoundError) and (exc.name or "").split(".")[0] == module:
        return [module]
    text = str(exc)
    # The library that failed to open, else the first one named (MindSpore names its own
    # plugin first and the CANN library it could not load after it).
    found = (re.search(r"(lib[\w+-]+\.so)[\w.]*: cannot open shared object", text)
             or re.search(r"(lib[\w+-]+\.so)", text))
    if found:
        return ["driver"] if found.group(1) in DRIVER_LIBS else ["cann"]
    return []


def npu_presence() -> dict[str, Any]:
    """What the host shows of an NPU stack without importing anything."""
    cann = None
    candidates = [os.environ.get("ASCEND_HOME_PATH"), os.environ.get("ASCEND_TOOLKIT_HOME"),
                  "/usr/local/Ascend/cann", "/usr/local/Ascend/ascend-toolkit/latest",
                  "~/Ascend/cann", "~/Ascend/ascend-toolkit/latest"]
    for path in candidates:
        if path and Path(path).expanduser().is_dir():
            cann = str(Path(path).expanduser())
            break
    nodes = sorted(str(node) for node in Path("/dev").glob("davinci[0-9]*"))
    return {"cann_home": cann, "davinci_nodes": nodes, "npu_smi": shutil.which("npu-smi")}


def npu_missing(presence: dict[str, Any], found: list[str]) -> list[str]:
    """`found` (from an import failure) plus what the host itself lacks, in a fixed order."""
    missing = set(found)
    if presence.get("cann_home") is None:
        missing.add("cann")
    if not presence.get("davinci_nodes"):
        missing.add("device")
    order = ("torch", "mindspore", "torch_npu", "cann", "driver", "device")
    return [name for name in order if name in missing]


def host_max_rss_bytes() -> int:
    """The process's peak resident memory on the host (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def run_command(argv: list[str], timeout_s: float = 20.0) -> dict[str, Any]:
    """Run a tool; its exit code and combined output, or why it could not run."""
    record: dict[str, Any] = {"argv": argv, "rc": None, "output": "", "error": None}
    if shutil.which(argv[0]) is None:
        record["error"] = f"{argv[0]} not found on PATH"
        return record
    try:
        done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              timeout=timeout_s, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        record["error"] = describe(exc)
        return record
    record["rc"] = done.returncode
    record["output"] = done.stdout.decode("utf-8", "replace")[-20000:]
    return record


def npu_smi_processes(text: str) -> list[dict[str, Any]]:
    """Rows of `npu-smi info`'s process table: NPU id, chip, pid, name, memory (MB)."""
    rows: list[dict[str, Any]] = []
    in_table = False
    for line in text.splitlines():
        if "Process id" in line:
            in_table = True
            continue
        if not in_table or not line.startswith("|"):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 4 or not cells[1].isdigit():
            continue
        head = cells[0].split()
        rows.append({
            "npu": int(head[0]) if head and head[0].isdigit() else None,
            "chip": int(head[1]) if len(head) > 1 and head[1].isdigit() else None,
            "pid": int(cells[1]), "name": cells[2],
            "memory_mb": int(cells[3]) if cells[3].isdigit() else None})
    return rows


def nvidia_smi_processes(text: str) -> list[dict[str, Any]]:
    """Rows of `nvidia-smi --query-compute-apps=pid,process_name,used_memory` (csv, no units)."""
    rows: list[dict[str, Any]] = []
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.split(",")]
        if len(cells) >= 3 and cells[0].isdigit():
            rows.append({"npu": None, "chip": None, "pid": int(cells[0]), "name": cells[1],
                         "memory_mb": int(cells[2]) if cells[2].isdigit() else None})
    return rows


def process_table(kind: str, pid: int) -> dict[str, Any]:
    """Whether the device's management tool lists this process (npu-smi; nvidia-smi)."""
    if kind == "npu":
        argv = ["npu-smi", "info"]
        parse = npu_smi_processes
    else:
        argv = ["nvidia-smi", "--query-compute-apps=pid,process_name,used_memory",
                "--format=csv,noheader,nounits"]
        parse = nvidia_smi_processes
    record = run_command(argv)
    rows = parse(record["output"]) if record["rc"] == 0 else []
    mine = [row for row in rows if row["pid"] == pid]
    return {"tool": " ".join(argv[:2]), "rc": record["rc"], "error": record["error"],
            "pid": pid, "seen": bool(mine) if record["rc"] == 0 else None,
            "rows": len(rows), "npus": sorted({row["npu"] for row in mine
                                                if row["npu"] is not None}),
            "output_tail": record["output"][-3000:] if record["rc"] != 0 or not mine else ""}


def cpu_fallback_ops(log: str) -> list[str]:
    """Operators torch_npu reported as falling back to the CPU (its CAUTION warning)."""
    return sorted(set(FALLBACK_RE.findall(log)))


def aicpu_ops(csv_text: str) -> list[str]:
    """Operator types the NPU ran on its AI CPU, from a profiler kernel_details.csv."""
    found = set()
    for row in csv.DictReader(io.StringIO(csv_text)):
        core = (row.get("Accelerator Core") or row.get("Task Type") or "").strip().upper()
        if core.startswith("AI_CPU"):
            name = row.get("Type") or row.get("OP Type") or row.get("Name") or "?"
            found.add(name.strip())
    return sorted(found)


def loss_summary(losses: list[float | None]) -> dict[str, Any]:
    """Did the loss fall: the mean of the curve's last fifth against its first fifth."""
    values = [v for v in losses if v is not None and math.isfinite(v)]
    summary: dict[str, Any] = {"fell": False, "first": None, "last": None, "drop": None,
                               "window": 0, "non_finite": len(losses) - len(values)}
    if len(values) < 2 or summary["non_finite"]:
        return summary
    window = max(1, len(values) // 5)
    first = sum(values[:window]) / window
    last = sum(values[-window:]) / window
    drop = 1.0 - last / first if first > 0 else 0.0
    summary.update(first=first, last=last, window=window, drop=drop,
                   fell=bool(first > 0 and drop >= LOSS_MIN_DROP))
    return summary
# --- harness: end --------------------------------------------------------------------------

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
    parser = base_parser("Train a small PyTorch model on a device and print JSON evidence.",
                         "npu:0")
    parser.add_argument("--peak-tflops", type=float, default=None,
                        help="the chip's peak for the throughput dtype (from the data files)")
    parser.add_argument("--precision", choices=("auto", "fp32", "fp16", "bf16"),
                        default="auto", help="auto: fp16 on npu, bf16/fp16 on cuda, fp32 on cpu")
    parser.add_argument("--matmul-size", type=int, default=None,
                        help="n of the n x n throughput matmul (default 4096, cpu 512)")
    parser.add_argument("--throughput-seconds", type=float, default=2.0)
    parser.add_argument("--profile-ops", choices=("auto", "on", "off"), default="auto",
                        help="profile two steps for AI CPU operators (auto: on for npu)")
    args = parser.parse_args(argv)
    requested = {"device": args.device, "steps": args.steps, "timeout_s": args.timeout,
                 "chip": args.chip, "precision": args.precision,
                 "peak_tflops": args.peak_tflops, "matmul_size": args.matmul_size}
    doc = new_document(SCHEMA, "torch", requested)
    return run_main(doc, args, lambda d, e: run(args, d, e))


def run(args: argparse.Namespace, doc: dict[str, Any], emitter: Emitter) -> int:
    """Prepare torch for the requested device, then train on each device asked for."""
    try:
        kind, index = parse_device(args.device)
    except ValueError as exc:
        doc.update(status="error", reason=str(exc))
        return EXIT_CANNOT_RUN
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
        doc.update(status="unavailable", missing=["torch"], reason=describe(exc))
        return EXIT_CANNOT_RUN
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
                doc["missing"] = npu_missing(env, ["device"])
            return EXIT_FAILED
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
            record.update(status="error", reason=f"{describe(exc)} (during {doc['phase']})",
                          traceback=traceback.format_exc()[-4000:])
    if kind == "npu":
        doc["fallbacks"]["cpu_ops"] = cpu_fallback_ops(emitter.log_text())
    failed = [r for r in runs if r["status"] != "ok"]
    doc["phase"] = "done"
    if failed:
        doc.update(status="failed", reason="; ".join(f"{r['device']}: {r['reason']}"
                                                     for r in failed))
        return EXIT_FAILED
    doc["status"] = "ok"
    return EXIT_OK


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
    presence = npu_presence()
    env.update(presence)
    doc["fallbacks"] = {"cpu_ops": [], "aicpu_ops": None, "aicpu_error": None,
                        "cpu_ops_source": "torch_npu's CAUTION warnings (npu_cpu_fallback) "
                                          "in the run's own output",
                        "aicpu_source": None}
    doc["phase"] = "import torch_npu"
    try:
        env["torch_npu"] = getattr(load("torch_npu"), "__version__", None)
    except Exception as exc:  # ImportError, OSError or RuntimeError from CANN's libraries
        doc.update(status="unavailable", reason=describe(exc),
                   missing=npu_missing(presence, import_failure("torch_npu", exc)))
        return None, EXIT_FAILED
    backend = getattr(torch, "npu", None)
    if backend is None:
        doc.update(status="unavailable", missing=["torch_npu"],
                   reason="torch_npu imported but registered no torch.npu module")
        return None, EXIT_FAILED
    return backend, None


def run_on_device(record: dict[str, Any], *, backend: Any, index: int | None,
                  args: argparse.Namespace, doc: dict[str, Any], emitter: Emitter,
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
        record["process_table"] = process_table(device.type, os.getpid())
    wanted = args.profile_ops == "on" or (args.profile_ops == "auto"
                                          and args.timeout - emitter.elapsed() > 90)
    if device.type == "npu" and profile and wanted:
        doc["phase"] = f"profile two steps on {device}"
        profile_aicpu(step, doc["fallbacks"])
    problems = judge_run(record, device)
    record["status"] = "failed" if problems else "ok"
    record["reason"] = "; ".join(problems) or None


def judge_run(record: dict[str, Any], device: torch.device) -> list[str]:
    """The workload's own reading of its evidence (the controller judges again)."""
    problems = []
    where = record["placement"]
    observed = sorted(set(where["parameters"]) | set(where["batches"]))
    if observed != [str(device)]:
        problems.append(f"computed on {', '.join(observed)} although {device} was requested")
    if not record["training"]["summary"]["fell"]:
        problems.append("the loss did not fall")
    if not record["matmul_check"]["ok"]:
        problems.append("the checked matmul is wrong")
    if not record["throughput"]["sample_ok"]:
        problems.append("the throughput matmul's sampled rows are wrong")
    return problems


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
    training["summary"] = loss_summary(losses)
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
    host = host_max_rss_bytes()
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
        npu = load("torch_npu")
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
            found.update(aicpu_ops(table.read_text(encoding="utf-8", errors="replace")))
        fallbacks["aicpu_ops"] = sorted(found)
    except Exception as exc:  # profiling is extra evidence; its failure must not end the run
        fallbacks["aicpu_error"] = describe(exc)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
