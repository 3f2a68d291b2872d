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
`ascend-env/smoke/hccl/v1` (README.md, "Smoke workloads"). Exit 0 ok, 1 failed or NPU stack
missing, 2 torch cannot run, 3 time limit.
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

SCHEMA = "ascend-env/smoke/hccl/v1"
WORKER_SCHEMA = "ascend-env/smoke/hccl-rank/v1"
BACKENDS = {"npu": "hccl", "cuda": "nccl", "cpu": "gloo"}
DEFAULT_SIZES = {"cpu": "64K,1M,4M", "npu": "1M,16M,128M", "cuda": "1M,16M,128M"}
UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}
WARMUP = 3
FAILED_RANK_GRACE_S = 10.0


def main(argv: list[str] | None = None) -> int:
    """Coordinator or worker, by --worker."""
    parser = base_parser("All-reduce over the host's devices (one process each) and print "
                         "JSON evidence.", "all")
    parser.add_argument("--nprocs", type=int, default=None,
                        help="processes (devices) to use; default every device, cpu 2")
    parser.add_argument("--sizes", default=None,
                        help="comma-separated buffer sizes, e.g. 1M,16M,128M (cpu 64K,1M,4M)")
    parser.add_argument("--busbw-floor", type=float, default=None,
                        help="GB/s the largest size's bus bandwidth must reach (recorded)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--rank", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--world-size", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--init", default="", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        doc = new_document(WORKER_SCHEMA, "hccl", {"rank": args.rank, "device": args.device})
        return run_main(doc, args, lambda d, e: work(args, d))
    requested = {"device": args.device, "steps": args.steps, "timeout_s": args.timeout,
                 "chip": args.chip, "nprocs": args.nprocs, "sizes": args.sizes,
                 "busbw_floor_gbps": args.busbw_floor}
    doc = new_document(SCHEMA, "hccl", requested)
    return run_main(doc, args, lambda d, e: coordinate(args, d, e))


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


def coordinate(args: argparse.Namespace, doc: dict[str, Any], emitter: Emitter) -> int:
    """Find the devices, start one worker per device, gather their evidence."""
    try:
        kind, index = parse_device(args.device)
        if index is not None:
            raise ValueError(f"device {args.device!r}: an all-reduce spans devices; use "
                             "--device all (npu), cuda or cpu, with --nprocs to take fewer")
        kind = "npu" if kind == "all" else kind
        sizes = parse_sizes(args.sizes or DEFAULT_SIZES[kind])
    except ValueError as exc:
        doc.update(status="error", reason=str(exc))
        return EXIT_CANNOT_RUN
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
        return EXIT_FAILED if kind != "cpu" else EXIT_CANNOT_RUN
    doc["world_size"] = nprocs
    doc["phase"] = f"all-reduce over {nprocs} {backend} rank(s)"
    workers = start_workers(args, kind, nprocs, sizes, emitter)
    wait_for(workers, args.timeout - emitter.elapsed() + 5)
    ranks = [collect(worker, rank) for rank, worker in enumerate(workers)]
    doc["ranks"] = [{key: r.get(key) for key in ("rank", "device", "pid", "status", "reason")
                     + (("log_tail",) if r.get("status") != "ok" else ())}
                    for r in ranks]
    doc["results"] = merge_results(ranks, nprocs)
    doc["phase"] = "done"
    problems = [f"rank {r['rank']}: {r.get('reason') or r.get('status')}"
                for r in ranks if r.get("status") != "ok"]
    problems += [f"{res['bytes']} bytes: {res['wrong_elements']} wrong element(s)"
                 for res in doc["results"] if not res["correct"]]
    if problems:
        doc.update(status="failed", reason="; ".join(problems))
        return EXIT_FAILED
    doc["status"] = "ok"
    return EXIT_OK


def device_count(kind: str, doc: dict[str, Any]) -> tuple[int, int | None]:
    """How many devices of the kind this process sees; on failure the exit code beside."""
    env = doc["environment"]
    doc["phase"] = "import torch"
    os.environ["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"  # torch_npu is imported explicitly
    env["autoload_disabled"] = True
    try:
        import torch  # noqa: PLC0415
    except Exception as exc:
        doc.update(status="unavailable", missing=["torch"], reason=describe(exc))
        return 0, EXIT_CANNOT_RUN
    env["torch"] = torch.__version__
    if kind == "cpu":
        return 1, None
    if kind == "cuda":
        return torch.cuda.device_count(), None
    presence = npu_presence()
    env.update(presence)
    doc["phase"] = "import torch_npu"
    try:
        env["torch_npu"] = getattr(load("torch_npu"), "__version__", None)
    except Exception as exc:  # ImportError, OSError or RuntimeError from CANN's libraries
        doc.update(status="unavailable", reason=describe(exc),
                   missing=npu_missing(presence, import_failure("torch_npu", exc)))
        return 0, EXIT_FAILED
    npu = getattr(torch, "npu", None)
    count = int(npu.device_count()) if npu is not None and npu.is_available() else 0
    if count == 0:
        doc.update(status="unavailable", missing=npu_missing(presence, ["device"]),
                   reason="torch_npu sees no NPU")
        return 0, EXIT_FAILED
    return count, None


def start_workers(args: argparse.Namespace, kind: str, nprocs: int, sizes: list[int],
                  emitter: Emitter) -> list[subprocess.Popen[bytes]]:
    """This script once per rank, rendezvous on a free local port."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    left = max(args.timeout - emitter.elapsed() - 3, 1.0)
    workers = []
    for rank in range(nprocs):
        device = "cpu" if kind == "cpu" else f"{kind}:{rank}"
        argv = [sys.executable, str(Path(__file__).resolve()), "--worker", "--rank", str(rank),
                "--world-size", str(nprocs), "--init", f"tcp://127.0.0.1:{port}",
                "--device", device, "--steps", str(args.steps), "--timeout", str(left),
                "--sizes", ",".join(str(size) for size in sizes)]
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


def merge_results(ranks: list[dict[str, Any]], nprocs: int) -> list[dict[str, Any]]:
    """Per size: correct on every rank, the slowest rank's time, algbw and busbw (GB/s)."""
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
                       "correct": len(rows) == nprocs and all(row["correct"] for row in rows),
                       "wrong_elements": sum(int(row["wrong_elements"]) for row in rows),
                       "time_s": seconds, "algbw_gbps": algbw,
                       "busbw_gbps": algbw * 2 * (nprocs - 1) / nprocs})
    return merged


def work(args: argparse.Namespace, doc: dict[str, Any]) -> int:
    """One rank: join the group, all-reduce every size, check and time it."""
    os.environ["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    import torch  # noqa: PLC0415
    import torch.distributed as dist  # noqa: PLC0415

    kind, index = parse_device(args.device)
    backend = BACKENDS[kind]
    if kind == "npu":
        load("torch_npu")
    if kind in ("npu", "cuda"):
        getattr(torch, kind).set_device(index)
    device = torch.device(args.device)
    doc.update(rank=args.rank, backend=backend, phase="init_process_group")
    dist.init_process_group(backend, init_method=args.init, rank=args.rank,
                            world_size=args.world_size,
                            timeout=datetime.timedelta(seconds=max(args.timeout, 30.0)))
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
    return EXIT_FAILED if wrong else EXIT_OK


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
