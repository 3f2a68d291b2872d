#!/usr/bin/env python3
"""MindSpore smoke workload: train a small network in GRAPH_MODE on one device and print
evidence.

Runs ON the target with the target's framework Python, standard library + MindSpore (and the
numpy it depends on) only; it never imports ascend_env. Usage:

    python mindspore_workload.py --device npu:0 --steps 50 --timeout 600 [--peak-tflops 256]

Prints one JSON document, schema `ascend-env/smoke/mindspore/v1` (README.md, "Smoke workloads"),
with the torch workload's fields where MindSpore exposes them: device_target Ascend (npu),
GPU (cuda) or CPU; where the parameters and outputs really were (Tensor.device, else the
context); the loss curve; steps/s; peak device memory; a float32 matmul checked element-wise
against float64; fp16 matmul TFLOPS; on an NPU the pid in `npu-smi info`. `--device all`
runs one child process per NPU, because MindSpore binds a process to one device.
Exit 0 ok, 1 failed or NPU stack missing, 2 MindSpore cannot run, 3 time limit.
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

SCHEMA = "ascend-env/smoke/mindspore/v1"
FEATURES, HIDDEN, BATCH = 32, 64, 64
CHECK_SHAPE = (128, 256, 96)  # m, k, n of the element-wise checked matmul
CHECK_RTOL = 1e-3  # same tolerance rule as the torch workload (README)
CHECK_ATOL_PER_SQRT_K = 1e-3
SAMPLE_TOLERANCE = {"float16": 1e-2, "float32": 1e-4}
TARGETS = {"npu": "Ascend", "cuda": "GPU", "cpu": "CPU"}
# MindSpore (ms) and numpy (np) are loaded with importlib: MindSpore ships no type
# information, and a missing framework must become evidence rather than an ImportError.


def main(argv: list[str] | None = None) -> int:
    """Parse the options, run under the watchdog, print the evidence."""
    parser = base_parser("Train a small MindSpore network in GRAPH_MODE and print JSON "
                         "evidence.", "npu:0")
    parser.add_argument("--peak-tflops", type=float, default=None,
                        help="the chip's fp16 peak (from the data files)")
    parser.add_argument("--matmul-size", type=int, default=None,
                        help="n of the n x n throughput matmul (default 4096, cpu 512)")
    parser.add_argument("--throughput-seconds", type=float, default=2.0)
    args = parser.parse_args(argv)
    requested = {"device": args.device, "steps": args.steps, "timeout_s": args.timeout,
                 "chip": args.chip, "precision": "auto", "peak_tflops": args.peak_tflops,
                 "matmul_size": args.matmul_size}
    doc = new_document(SCHEMA, "mindspore", requested)
    return run_main(doc, args, lambda d, e: run(args, d, e))


def run(args: argparse.Namespace, doc: dict[str, Any], emitter: Emitter) -> int:
    """Set MindSpore up for the requested device and train there."""
    try:
        kind, index = parse_device(args.device)
    except ValueError as exc:
        doc.update(status="error", reason=str(exc))
        return EXIT_CANNOT_RUN
    if kind == "all" or (kind == "npu" and index is None):
        return run_each_npu(args, doc, emitter)
    env = doc["environment"]
    presence = npu_presence() if kind == "npu" else {}
    env.update(presence)
    doc["phase"] = "import mindspore"
    try:
        ms = load("mindspore")
        np = load("numpy")
    except Exception as exc:
        doc.update(status="unavailable", missing=["mindspore"], reason=describe(exc))
        return EXIT_CANNOT_RUN
    env["mindspore"] = getattr(ms, "__version__", None)
    doc["phase"] = f"set device {TARGETS[kind]}"
    try:
        ms.set_context(mode=ms.GRAPH_MODE)
        if hasattr(ms, "set_device"):
            ms.set_device(TARGETS[kind], index or 0)
        else:  # MindSpore before 2.5
            ms.set_context(device_target=TARGETS[kind], device_id=index or 0)
    except Exception as exc:  # RuntimeError naming the Ascend plugin library that failed
        found = import_failure("mindspore", exc) or ["device"]
        missing = npu_missing(presence, found) if kind == "npu" else found
        doc.update(status="unavailable", reason=describe(exc), missing=missing)
        return EXIT_FAILED
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
        record["process_table"] = process_table(kind, os.getpid())
    problems = judge_run(record)
    record.update(status="failed" if problems else "ok", reason="; ".join(problems) or None)
    doc.update(phase="done", status=record["status"], reason=record["reason"])
    return EXIT_FAILED if problems else EXIT_OK


def run_each_npu(args: argparse.Namespace, doc: dict[str, Any], emitter: Emitter) -> int:
    """`--device all`: this script once per NPU (a MindSpore process binds one device)."""
    presence = npu_presence()
    doc["environment"].update(presence)
    nodes = presence["davinci_nodes"]
    if not nodes:
        doc.update(status="unavailable", missing=npu_missing(presence, ["device"]),
                   reason="no /dev/davinciN device node is visible")
        return EXIT_FAILED
    runs: list[dict[str, Any]] = []
    doc["runs"] = runs
    for index in range(len(nodes)):
        doc["phase"] = f"child process for npu:{index}"
        left = args.timeout - emitter.elapsed() - 5
        argv = [sys.executable, str(Path(__file__).resolve()), "--device", f"npu:{index}",
                "--steps", str(args.steps), "--timeout", str(max(left, 1.0)),
                "--seed", str(args.seed)]
        if args.peak_tflops:
            argv += ["--peak-tflops", str(args.peak_tflops)]
        done = subprocess.run(argv, stdout=subprocess.PIPE, check=False)
        child = _last_json(done.stdout.decode("utf-8", "replace"))
        if child is None:
            runs.append({"device": f"npu:{index}", "status": "failed",
                         "reason": f"child exited {done.returncode} without evidence"})
            continue
        for key in ("missing", "fallbacks"):
            doc[key] = child.get(key) or doc.get(key)
        runs.extend(child.get("runs") or [{"device": f"npu:{index}", "status": "failed",
                                           "reason": child.get("reason")}])
    failed = [r for r in runs if r.get("status") != "ok"]
    doc["phase"] = "done"
    if failed:
        doc.update(status="failed", reason="; ".join(f"{r['device']}: {r.get('reason')}"
                                                     for r in failed))
        return EXIT_FAILED
    doc["status"] = "ok"
    return EXIT_OK


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
    training["summary"] = loss_summary(losses)
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
    host = host_max_rss_bytes()
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


def judge_run(record: dict[str, Any]) -> list[str]:
    """The workload's own reading of its evidence (the controller judges again)."""
    wanted = record["device"]
    problems = []
    where = record["placement"]
    seen = sorted(set(where["parameters"]) | set(where["batches"]))
    if seen != [wanted]:
        problems.append(f"computed on {', '.join(seen)} although {wanted} was requested")
    if not record["training"]["summary"]["fell"]:
        problems.append("the loss did not fall")
    if not record["matmul_check"]["ok"]:
        problems.append("the checked matmul is wrong")
    if not record["throughput"]["sample_ok"]:
        problems.append("the throughput matmul's sampled rows are wrong")
    return problems


if __name__ == "__main__":
    sys.exit(main())
