"""A fake torch_npu: one broken Ascend stack, chosen by ASCEND_ENV_FAKE_NPU, for the smoke tests.

- "no-cann": the import fails the way the real one does without CANN
  (https://github.com/vllm-project/vllm-ascend/issues/262).
- "no-device": it imports and registers torch.npu, which sees no NPU.
- "silent-cpu": it imports, claims one healthy NPU, accepts `.to("npu:0")` without error and
  keeps every tensor on the host CPU: training "works", and only evidence read from the
  tensors shows where it ran. This is the failure the smoke verdict exists to catch.
- "broken-device": it sees one NPU that fails when selected, with torch_npu's message for a
  device that cannot be opened.
"""

from __future__ import annotations

import os
import types
from typing import Any

import torch
from torch.utils.backend_registration import rename_privateuse1_backend

MODE = os.environ.get("ASCEND_ENV_FAKE_NPU", "silent-cpu")
if MODE == "no-cann":
    raise ImportError("libhccl.so: cannot open shared object file: No such file or directory")

__version__ = f"0.0.0+fake.{MODE}"

# The real torch_npu names PrivateUse1 "npu", so torch.device("npu:0") parses.
rename_privateuse1_backend("npu")


def _is_npu(value: object) -> bool:
    return str(value).startswith("npu")


def _keep_on_cpu(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    if _is_npu(kwargs.get("device")):
        del kwargs["device"]
    return tuple(arg for arg in args if not _is_npu(arg))


_tensor_to = torch.Tensor.to
_module_to = torch.nn.Module.to


def _tensor_to_cpu(self: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
    return _tensor_to(self, *_keep_on_cpu(args, kwargs), **kwargs)


def _module_to_cpu(self: torch.nn.Module, *args: Any, **kwargs: Any) -> Any:
    return _module_to(self, *_keep_on_cpu(args, kwargs), **kwargs)


if MODE == "silent-cpu":
    torch.Tensor.to = _tensor_to_cpu  # type: ignore[method-assign,assignment]
    torch.nn.Module.to = _module_to_cpu  # type: ignore[method-assign]

_visible = 1 if MODE in ("silent-cpu", "broken-device") else 0


def _set_device(index: int) -> None:
    if MODE == "broken-device":
        raise RuntimeError("NPU function error: c10_npu::SetDevice(device_id_), error code is "
                           "507033")

npu = types.ModuleType("torch.npu")
npu.is_available = lambda: _visible > 0  # type: ignore[attr-defined]
npu.device_count = lambda: _visible  # type: ignore[attr-defined]
npu.set_device = _set_device  # type: ignore[attr-defined]
npu.get_device_name = lambda index=None: "Ascend910B3"  # type: ignore[attr-defined]
npu.reset_peak_memory_stats = lambda index=None: None  # type: ignore[attr-defined]
npu.max_memory_allocated = lambda index=None: 0  # type: ignore[attr-defined]
npu.synchronize = lambda index=None: None  # type: ignore[attr-defined]
torch.npu = npu  # type: ignore[attr-defined]
