"""Choices and options that several command groups share, so each reads the same everywhere."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer


class ArchChoice(str, Enum):
    """CPU architectures of Ascend hosts."""

    aarch64 = "aarch64"
    x86_64 = "x86_64"


JsonFlag = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]
ArchOption = Annotated[ArchChoice | None, typer.Option("--arch", help="Host architecture.")]
ProfileOption = Annotated[str | None, typer.Option("--profile", help="A shipped profile name.")]
SpecOption = Annotated[Path | None, typer.Option("--spec", help="A spec YAML file.")]


def arch_value(arch: ArchChoice | None) -> str | None:
    """The architecture as the spec loader takes it (None: the profile's own)."""
    return arch.value if arch else None
