"""What every smoke workload shares: one JSON evidence document under a time limit, device
strings, and parsers for what the target prints (npu-smi, framework logs, profiler CSV).

Standard library only, Python 3.8+. The runner ships this file beside the workload script,
which imports it as its neighbour (`harness`); the unit tests exercise the parsers here.
"""

from __future__ import annotations

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

    from . import op_fallbacks
else:
    try:  # beside the workload on a target
        import op_fallbacks
    except ImportError:  # imported from the package
        from . import op_fallbacks

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


def training_request(args: argparse.Namespace, precision: str) -> dict[str, Any]:
    """What a training workload (torch, MindSpore) was asked to do, as its evidence says."""
    return {"device": args.device, "steps": args.steps, "timeout_s": args.timeout,
            "chip": args.chip, "precision": precision, "peak_tflops": args.peak_tflops,
            "matmul_size": args.matmul_size, "parity": args.parity}


def requested_device(doc: dict[str, Any], text: str) -> tuple[str, int | None] | None:
    """--device parsed; None, with the evidence saying why, when it cannot be."""
    try:
        return parse_device(text)
    except ValueError as exc:
        doc.update(status="error", reason=str(exc))
        return None


def judge_training(record: dict[str, Any], wanted: str) -> list[str]:
    """A training run's own reading of its evidence (the controller judges again): where it
    computed, whether the loss fell, whether the checked and sampled matmuls were right."""
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


def finish(doc: dict[str, Any], problems: list[str]) -> int:
    """The document's verdict: failed, naming every problem, or ok; its exit code."""
    doc["phase"] = "done"
    if problems:
        doc.update(status="failed", reason="; ".join(problems))
        return EXIT_FAILED
    doc["status"] = "ok"
    return EXIT_OK


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
    """Operators torch_npu reported as falling back to the CPU (op_fallbacks holds the rule)."""
    return op_fallbacks.cpu_fallback_ops(log)


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


# The workload scripts, and the modules the runner ships beside each of them.
WORKLOADS = ("torch_workload.py", "mindspore_workload.py", "hccl_workload.py")
COMPANIONS = ("harness.py", "op_fallbacks.py", "parity_rules.py", "parity_workers.py",
              "torch_parity.py", "mindspore_parity.py")
