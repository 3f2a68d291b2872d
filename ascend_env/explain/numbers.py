"""Numbers read from a matched line: what the entry's pattern names (an OOM's asked, free and
total; an npu-smi code's NPU), and the rank and device that torch_npu, HCCL and launchers
print on their lines."""

from __future__ import annotations

import re
from functools import lru_cache

from ascend_env.core.resources import load_yaml
from ascend_env.explain.signatures import Signature

LEVELS_FILE = "npu_fault_levels.yaml"  # MindCluster's handling level of each NPU fault code
LEVEL_ORDER = ("not-handled", "sub-health", "restart-request", "restart-business",
               "free-restart-npu", "restart-npu", "pre-separate-npu", "separate-npu")
FAULT_CODE = re.compile(r"\b(?:0x)?([0-9A-Fa-f]{8})\b")

# torch_npu's error tail "(PID:1, Device:0, RankID:3)" (torch_npu/utils/_error_code.py in
# https://github.com/Ascend/pytorch), torchrun's "[rank3]:" prefix, HCCL's "rankId[3]"/"rank 3"
# and npu-smi's "NPU 3"/"device id 3": the first reading of each wins.
_GENERIC: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("rank", re.compile(r"RankID:(\d+)|^\[rank(\d+)\]:|\[Rank (\d+)\]"
                        r"|\brank[_ ]?[iI][dD]\s*[\[:=]\s*(\d+)|\blocal[_ ]rank\s*[:=]\s*(\d+)"
                        r"|\brank\s*[:=]\s*(\d+)")),
    ("npu", re.compile(r"npu-smi info\b[^\n]*?-i (\d+)|\bNPU ID\s*:\s*(\d+)")),
    ("device", re.compile(r"\bDevice:(\d+)|\bdevice[_ ]?[iI][dD]\s*[\[:=]\s*(\d+)"
                          r"|\bdevice\s+(\d+)\b|\bdeviceId\s*[:=]\s*(\d+)|\bdev_?[iI]d\s*[:=]\s*(\d+)"
                          r"|\bchipId:(\d+)|\bnpu:(\d+)")),
)
LABELS = {"asked": "asked", "total": "total", "free": "free", "allocated": "allocated",
          "reserved": "reserved", "npu": "NPU", "rank": "rank", "device": "device",
          "code": "code", "codes": "codes", "level": "level"}


def read_numbers(signature: Signature, text: str, record: str = "") -> dict[str, str]:
    """The entry's named groups found in `text`, then the rank, NPU and device where the line
    (or else the record it belongs to) gives them (-1, torch_npu's 'none', is not a
    reading), and the handling level of NPU fault codes."""
    out: dict[str, str] = {}
    for where in (text, record):
        found = signature.pattern.search(where) if where else None
        if found is not None:
            for key, value in found.groupdict().items():
                if value and key not in out:
                    out[key] = value.strip()
    for name, pattern in _GENERIC:
        if name in out:
            continue
        seen = pattern.search(text) or (pattern.search(record) if record else None)
        if seen is not None:
            out[name] = next(g for g in seen.groups() if g is not None)
    codes = [c for key in ("codes", "code") if key in out
             for c in FAULT_CODE.findall(out[key])]
    levels = [fault_levels().get(c.upper()) for c in codes]
    known = [level for level in levels if level is not None]
    if known:
        out["level"] = max(known, key=LEVEL_ORDER.index)
    return out


@lru_cache(maxsize=1)
def fault_levels() -> dict[str, str]:
    """Fault code -> its most severe handling level in the shipped table."""
    raw = load_yaml(LEVELS_FILE)
    table: dict[str, str] = {}
    for level in LEVEL_ORDER:
        for row in raw.get(level, []) if isinstance(raw, dict) else []:
            for code in row:
                table[str(code).upper()] = level
    return table


def describe(numbers: dict[str, str]) -> str:
    """'asked 20.00 MiB, free 1.2 GiB, total 60.96 GiB, device 0' for a terminal."""
    order = [k for k in LABELS if k in numbers] + sorted(k for k in numbers if k not in LABELS)
    return ", ".join(f"{LABELS.get(k, k)} {numbers[k]}" for k in order)
