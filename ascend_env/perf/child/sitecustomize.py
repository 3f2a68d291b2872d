"""Profiling switched on inside a job that `ascend-env perf -- CMD` starts (every Python process
of it, torchrun's workers included: this folder is put first on their PYTHONPATH).

Standard library only until the job imports torch itself; nothing happens when the job never
does. The profiler is torch_npu's (`torch_npu.profiler`, writing the `*_ascend_pt` tree)
where torch_npu is installed, else torch's own (CPU: a Chrome trace). Steps are counted at
each `optimizer.step()` (torch's global optimizer step hook), and the profiler records the
window its schedule names: ASCEND_ENV_PERF_SKIP steps waited, one warm-up step, then
ASCEND_ENV_PERF_STEPS steps recorded (0: the whole run, no schedule). A sitecustomize the
job had of its own is run after this one.
"""

from __future__ import annotations

import atexit
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

_OURS = Path(__file__).resolve().parent
_STATE: dict[str, Any] = {}


def _rank() -> str:
    return os.environ.get("RANK") or os.environ.get("LOCAL_RANK") or "0"


def _note(text: str) -> None:
    """A line for `ascend-env perf` to read back (why nothing was recorded, which profiler)."""
    folder = os.environ.get("ASCEND_ENV_PERF_DIR", "")
    if folder:
        try:
            with (Path(folder) / f"perf-notes-rank{_rank()}.txt").open("a") as handle:
                handle.write(text.rstrip("\n") + "\n")
        except OSError:
            pass


def _start(torch: Any) -> None:
    folder = os.environ.get("ASCEND_ENV_PERF_DIR", "")
    if not folder or _STATE:
        return
    _STATE["started"] = True
    skip = int(os.environ.get("ASCEND_ENV_PERF_SKIP", "1"))
    steps = int(os.environ.get("ASCEND_ENV_PERF_STEPS", "3"))
    # A run on a target names its host (ASCEND_ENV_PERF_LABEL), so ranks of several hosts
    # stay apart when their outputs are brought back together.
    label = os.environ.get("ASCEND_ENV_PERF_LABEL", "")
    worker = f"{label + '@' if label else ''}rank{_rank()}_pid{os.getpid()}"
    profiler = torch.profiler
    activities = [profiler.ProfilerActivity.CPU]
    extra: dict[str, Any] = {}
    handler = profiler.tensorboard_trace_handler(folder, worker_name=worker)
    used = "torch.profiler (host CPU only)"
    if importlib.util.find_spec("torch_npu") is not None:
        import torch_npu  # type: ignore[import-not-found]  # noqa: PLC0415

        profiler = torch_npu.profiler
        activities = [profiler.ProfilerActivity.CPU, profiler.ProfilerActivity.NPU]
        handler = profiler.tensorboard_trace_handler(folder, worker_name=worker)
        # Level1 adds communication.json and the HCCL lanes; PipeUtilization the per-kernel
        # pipe ratios (torch_npu profiler docs, experimental_config).
        extra["experimental_config"] = profiler._ExperimentalConfig(
            profiler_level=profiler.ProfilerLevel.Level1,
            aic_metrics=profiler.AiCMetrics.PipeUtilization)
        used = "torch_npu.profiler (CPU + NPU)"
    if steps > 0:
        extra["schedule"] = profiler.schedule(wait=skip, warmup=1, active=steps, repeat=1)
    prof = profiler.profile(activities=activities, on_trace_ready=handler, record_shapes=True,
                            **extra)
    hooks = importlib.import_module("torch.optim.optimizer")
    prof.start()
    _STATE["prof"] = prof
    _STATE["steps"] = 0
    atexit.register(_stop)
    _note(f"profiler: {used}; window: " + (f"skip {skip}, warm-up 1, record {steps} steps"
                                           if steps > 0 else "the whole run"))

    def counted(*_: Any) -> None:
        _STATE["steps"] += 1
        if steps > 0:
            prof.step()

    hooks.register_optimizer_step_post_hook(counted)


def _stop() -> None:
    prof = _STATE.pop("prof", None)
    if prof is None:
        return
    _note(f"optimizer steps seen: {_STATE.get('steps', 0)}")
    try:
        prof.stop()
    except Exception as exc:  # the job is ending: say why, never mask its exit
        _note(f"profiler stop failed: {type(exc).__name__}: {exc}")


class _AfterTorch(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Lets `import torch` run, then starts the profiler (once)."""

    _loader: Any = None

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "torch":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec("torch")
        if spec is None or spec.loader is None:
            return None
        self._loader = spec.loader
        spec.loader = self
        return spec

    def create_module(self, spec: Any) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self._loader.exec_module(module)
        try:
            _start(module)
        except Exception as exc:  # profiling must never break the job
            _note(f"profiler not started: {type(exc).__name__}: {exc}")


def _chain() -> None:
    """Run the sitecustomize this one shadows, if the job has one."""
    others = [p for p in sys.path if Path(p or ".").resolve() != _OURS]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", others)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


if os.environ.get("ASCEND_ENV_PERF_DIR"):
    sys.meta_path.insert(0, _AfterTorch())
_chain()
