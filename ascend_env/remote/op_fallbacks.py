"""Which operators left the device: torch_npu's CPU-fallback warnings, read from a process's
output, and the environment under which every rank prints them.

Standard library only, Python 3.8+: shipped beside the workloads (and importable by the
controller as `ascend_env.remote.op_fallbacks`, e.g. by `perf` for a job's own logs).

torch_npu registers a boxed fallback for every operator without an NPU kernel; it warns once
per operator and process with "CAUTION: The operator '<schema>' is not currently supported on
the NPU backend and will fall back to run on the CPU" (Ascend/pytorch,
torch_npu/csrc/aten/common/VariableFallbackKernel.cpp, `npu_cpu_fallback`). The warning goes
through torch_npu's own handler, which drops it unless `OptionsManager::ShouldPrintWarning()`:
false when TORCH_NPU_DISABLED_WARNING=1, else true only when the RANK variable is unset or 0
(Ascend/pytorch torch_npu/csrc/core/npu/register/OptionsManager.cpp, `GetRankId` reads RANK).
So a worker started with RANK=3 never says which operators fell back; `reporting_env` gives
each rank an environment in which it does.
"""

from __future__ import annotations

import re
from typing import Dict, List, Mapping

# Both forms: the C++ warning line and the same text as a Python UserWarning.
TORCH_NPU_FALLBACK_RE = re.compile(
    r"operator '([^']+)' is not currently supported on the NPU backend and will fall back "
    r"to run on the CPU")
SOURCE = "torch_npu's CAUTION warnings (npu_cpu_fallback) in the process's own output"
# Variables that silence the warning on a rank (see the module docstring).
SILENCING_VARIABLES = ("RANK", "TORCH_NPU_DISABLED_WARNING")


def cpu_fallback_ops(log: str) -> List[str]:
    """Operators torch_npu reported as falling back to the CPU, sorted, each once."""
    return sorted(set(TORCH_NPU_FALLBACK_RE.findall(log)))


def reporting_env(environ: Mapping[str, str], rank: int | None = None) -> Dict[str, str]:
    """A copy of `environ` in which torch_npu prints its fallback warnings whatever the rank.

    RANK is dropped (a rank passes its number to torch.distributed explicitly instead) and
    TORCH_NPU_DISABLED_WARNING with it; ASCEND_ENV_RANK keeps the number for the evidence."""
    env = {k: v for k, v in environ.items() if k not in SILENCING_VARIABLES}
    if rank is not None:
        env["ASCEND_ENV_RANK"] = str(rank)
    return env


def by_rank(logs: Mapping[str, str]) -> Dict[str, List[str]]:
    """Per rank (or device) name, the operators its output reports as fallen back."""
    return {name: cpu_fallback_ops(text) for name, text in logs.items()}


def union(per_rank: Mapping[str, List[str]]) -> List[str]:
    """Every operator that fell back on any rank."""
    return sorted({op for ops in per_rank.values() for op in ops})
