"""Choices and options that several command groups share, so each reads the same everywhere."""

from __future__ import annotations

import math
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer


class ArchChoice(str, Enum):
    """CPU architectures of Ascend hosts."""

    aarch64 = "aarch64"
    x86_64 = "x86_64"


JsonFlag = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]

# The words every command uses for the same thing (docs/cli.md lists them); the short forms
# are Ansible's own (ansible-playbook -i, -l, -e, -C), so operators type what they know.
InventoryOption = Annotated[Path | None, typer.Option(
    "--inventory", "-i", help="Ansible inventory; without it and --host, this machine.")]
LimitOption = Annotated[str | None, typer.Option(
    "--limit", "-l", help="Ansible host pattern (with --inventory).")]
HostOption = Annotated[str | None, typer.Option(
    "--host", help="One target: ssh://user@node[:port], user@node, node, local://, "
                   "docker://ctr or podman://ctr.")]
SshConfigOption = Annotated[Path | None, typer.Option("--ssh-config",
                                                      help="ssh config for --host.")]
CheckFlag = Annotated[bool, typer.Option(
    "--check", "-C", help="Show what would change, change nothing (Ansible's check mode).")]
RepoOption = Annotated[Path, typer.Option(
    "--repo", help="The repository folder of vendor files and wheels (`fetch` fills it).")]
DEFAULT_REPO = Path("ascend-repo")
ExtraVarsOption = Annotated[list[str] | None, typer.Option(
    "--extra-vars", "-e", help="Playbook variables as ansible-playbook's -e takes them: "
                               "key=value, @FILE or a YAML/JSON object (repeatable, a later "
                               "one wins); each is checked against the install's variables "
                               "and the roles' declared options before any host is touched.")]
ArchOption = Annotated[ArchChoice | None, typer.Option("--arch", help="Host architecture.")]
ProfileOption = Annotated[str | None, typer.Option("--profile", help="A shipped profile name.")]
SpecOption = Annotated[Path | None, typer.Option("--spec", help="A spec YAML file.")]


def arch_value(arch: ArchChoice | None) -> str | None:
    """The architecture as the spec loader takes it (None: the profile's own)."""
    return arch.value if arch else None


# The longest a command may be asked to wait: a week. Longer is a typo, and past ~49 days
# Python's thread and lock waits refuse the value (OverflowError).
MAX_TIMEOUT_S = 7 * 24 * 3600.0


def finite(value: float | None) -> float | None:
    """An option callback: click's FloatRange lets `nan` through (every comparison with it is
    false), so non-numbers are refused here as the usage errors they are (exit 2)."""
    if value is not None and not math.isfinite(value):
        raise typer.BadParameter(f"{value} is not a finite number")
    return value


def timeout_option(help_text: str, *, minimum: float = 1.0) -> typer.models.OptionInfo:
    """A `--timeout SECONDS` option: a finite number from `minimum` to a week."""
    info: typer.models.OptionInfo = typer.Option(
        "--timeout", min=minimum, max=MAX_TIMEOUT_S, callback=finite, help=help_text)
    return info
