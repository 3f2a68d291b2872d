"""Run the parity model once per device, each in its own worker process, and merge what the
workers report: per-layer comparisons, the first divergence, and every CPU fallback any rank
printed.

Standard library only, Python 3.8+; shipped beside the workloads. A worker is the workload
script itself with `--parity-worker`; it runs under `op_fallbacks.reporting_env`, so torch_npu
prints its fallback warnings on every rank, and its output (its own evidence and whatever it
wrote before its evidence capture began) is searched for them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from typing import IO, TYPE_CHECKING, Any, Dict, List, Optional

if TYPE_CHECKING:
    from . import op_fallbacks
else:
    try:  # beside the workload on a target
        import op_fallbacks
    except ImportError:  # imported from the package
        from . import op_fallbacks

WORKER_SCHEMA = "ascend-env/smoke/parity-worker/v1"
MAX_OUTPUT_BYTES = 8 * 1024 * 1024
STOP_GRACE_S = 5.0


def start(script: str, devices: List[str], extra: List[str],
          limit_s: float) -> List[Dict[str, Any]]:
    """One worker per device, all at once; their output goes to unlinked temporary files."""
    workers = []
    for rank, device in enumerate(devices):
        out: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - closed in collect
        err: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115
        argv = [sys.executable, script, "--parity-worker", "--rank", str(rank),
                "--device", device, "--timeout", f"{max(limit_s, 1.0):.1f}", *extra]
        process = subprocess.Popen(argv, stdout=out, stderr=err,
                                   env=op_fallbacks.reporting_env(os.environ, rank))
        workers.append({"rank": rank, "device": device, "process": process, "out": out,
                        "err": err})
    return workers


def wait(workers: List[Dict[str, Any]], limit_s: float) -> None:
    """Until every worker ends; past the limit (plus their own watchdog's grace) they stop."""
    deadline = time.monotonic() + limit_s + STOP_GRACE_S
    for worker in workers:
        process = worker["process"]
        try:
            process.wait(timeout=max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _read(handle: IO[bytes]) -> str:
    handle.seek(0, os.SEEK_END)
    size = handle.tell()
    handle.seek(max(0, size - MAX_OUTPUT_BYTES))
    text = handle.read().decode("utf-8", "replace")
    handle.close()
    return text


def collect(worker: Dict[str, Any]) -> Dict[str, Any]:
    """A worker's record: its evidence, and the fallbacks its whole output reports."""
    stdout, stderr = _read(worker["out"]), _read(worker["err"])
    process = worker["process"]
    document = _last_document(stdout)
    record: Dict[str, Any] = {"rank": worker["rank"], "device": worker["device"],
                              "pid": process.pid, "exit_code": process.returncode}
    own = list((document or {}).get("cpu_fallback_ops") or [])
    # Everything the worker printed, its evidence's captured log included.
    loose = "\n".join(line for line in stdout.splitlines() if not line.startswith("{"))
    seen = op_fallbacks.cpu_fallback_ops("\n".join([loose, stderr,
                                                    str((document or {}).get("log_tail"))]))
    record["cpu_fallback_ops"] = sorted(set(own) | set(seen))
    if document is None:
        record.update(status="error", runs=[], log_tail=(stderr or stdout)[-2000:],
                      reason=f"worker exited {process.returncode} without evidence")
        return record
    record.update(status=document.get("status"), reason=document.get("reason"),
                  runs=document.get("runs") or [], device=document.get("device") or
                  worker["device"])
    if document.get("status") != "ok":
        record["log_tail"] = str(document.get("log_tail") or "")[-2000:]
    return record


def _last_document(text: str) -> Optional[Dict[str, Any]]:
    for line in reversed(text.splitlines()):
        if not line.startswith("{"):
            continue
        try:
            found = json.loads(line)
        except ValueError:
            continue
        if isinstance(found, dict) and found.get("schema") == WORKER_SCHEMA:
            return found
    return None


def merge(ranks: List[Dict[str, Any]]) -> Dict[str, Any]:
    """The parity section's verdict fields: first divergence, fallbacks, status, reason."""
    per_rank = {str(r["rank"]): list(r.get("cpu_fallback_ops") or []) for r in ranks}
    ops = op_fallbacks.union(per_rank)
    first = None
    for rank in ranks:
        for run in rank.get("runs") or []:
            found = run.get("first_divergence")
            if found and first is None:
                first = dict(found, rank=rank["rank"], device=run.get("device"))
    problems = []
    broken = [r for r in ranks if r.get("status") != "ok"]
    problems += [f"rank {r['rank']} ({r['device']}): {r.get('reason') or r.get('status')}"
                 for r in broken]
    if first is not None:
        problems.append(f"first divergence: {first['name']} ({first['op']}, {first['dtype']}) "
                        f"{first['phase']} {first['tensor']} on rank {first['rank']}")
    if ops:
        where = ", ".join(f"rank {k}: {', '.join(v)}" for k, v in per_rank.items() if v)
        problems.append(f"operators fell back to the CPU ({where})")
    if not ranks:
        problems.append("no parity worker ran")
    return {"first_divergence": first,
            "fallbacks": {"per_rank": per_rank, "ops": ops, "source": op_fallbacks.SOURCE,
                          "environment": "each worker without "
                                         + " and ".join(op_fallbacks.SILENCING_VARIABLES)},
            "status": "ok" if not problems else "failed",
            "reason": "; ".join(problems) or None}


def run(script: str, devices: List[str], extra: List[str], limit_s: float) -> Dict[str, Any]:
    """Start, wait, collect and merge: the `parity` section of the evidence."""
    workers = start(script, devices, extra, limit_s)
    wait(workers, limit_s)
    ranks = [collect(worker) for worker in workers]
    return dict(merge(ranks), ranks=ranks)
