"""Numbers read from a matched line: what the entry's pattern names (an OOM's asked, free and
total; an npu-smi code's NPU), and the rank and device that torch_npu, HCCL and launchers
print on their lines."""

from __future__ import annotations

import re

from ascend_env.explain.signatures import Signature

# torch_npu's error tail "(PID:1, Device:0, RankID:3)" (torch_npu/utils/_error_code.py in
# https://github.com/Ascend/pytorch), torchrun's "[rank3]:" prefix, HCCL's "rankId[3]"/"rank 3"
# and npu-smi's "NPU 3"/"device id 3": the first reading of each wins.
_GENERIC: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("rank", re.compile(r"RankID:(\d+)|^\[rank(\d+)\]:|\brank[_ ]?[iI][dD]\s*[\[:=]\s*(\d+)"
                        r"|\blocal[_ ]rank\s*[:=]\s*(\d+)|\brank\s*[:=]\s*(\d+)")),
    ("device", re.compile(r"\bDevice:(\d+)|\bdevice[_ ]?[iI][dD]\s*[\[:=]\s*(\d+)"
                          r"|\bdevice\s+(\d+)\b|\bdeviceId\s*[:=]\s*(\d+)|\bdev_?[iI]d\s*[:=]\s*(\d+)"
                          r"|\bchipId:(\d+)|\bnpu:(\d+)")),
)
LABELS = {"asked": "asked", "total": "total", "free": "free", "allocated": "allocated",
          "reserved": "reserved", "npu": "NPU", "rank": "rank", "device": "device",
          "code": "code"}


def read_numbers(signature: Signature, text: str) -> dict[str, str]:
    """The entry's named groups found in `text`, then the rank and device where the line
    gives them (a rank or device of -1, torch_npu's 'none', is not a reading)."""
    out: dict[str, str] = {}
    found = signature.pattern.search(text)
    if found is not None:
        out.update({k: v.strip() for k, v in found.groupdict().items() if v})
    for name, pattern in _GENERIC:
        if name in out:
            continue
        seen = pattern.search(text)
        if seen is not None:
            out[name] = next(g for g in seen.groups() if g is not None)
    return out


def describe(numbers: dict[str, str]) -> str:
    """'asked 20.00 MiB, free 1.2 GiB, total 60.96 GiB, device 0' for a terminal."""
    order = [k for k in LABELS if k in numbers] + sorted(k for k in numbers if k not in LABELS)
    return ", ".join(f"{LABELS.get(k, k)} {numbers[k]}" for k in order)
