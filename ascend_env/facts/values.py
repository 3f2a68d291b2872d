"""Values as vendor files and tools write them: NA for unknown, numbers, KEY=VALUE lines."""

from __future__ import annotations


def none_if_na(value: str | None) -> str | None:
    """npu-smi and version files write NA (or nothing) for an unknown value."""
    if value is None:
        return None
    value = value.strip()
    return None if value in ("", "NA", "N/A", "-", "--") else value


def to_int(value: str | None) -> int | None:
    """A decimal or 0x-hex integer; None for NA or anything else."""
    value = none_if_na(value)
    if value is None:
        return None
    try:
        return int(value, 0) if value.lower().startswith("0x") else int(value)
    except ValueError:
        return None


def to_float(value: str | None) -> float | None:
    """A float; None for NA or anything else."""
    value = none_if_na(value)
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        return None


def parse_kv(text: str, sep: str = "=") -> dict[str, str]:
    """KEY<sep>VALUE lines; blank, comment and odd lines ignored; the first key wins."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        if sep not in line or line.lstrip().startswith("#"):
            continue
        key, value = line.split(sep, 1)
        key = key.strip()
        if key and key not in out:
            out[key] = value.strip()
    return out
