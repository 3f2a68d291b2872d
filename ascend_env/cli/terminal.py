"""The console every terminal rendering prints to, and JSON documents on stdout."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console

console = Console(highlight=False, soft_wrap=True)


def print_json(document: dict[str, Any]) -> None:
    """A JSON document on stdout, indented, non-ASCII kept as is."""
    print(json.dumps(document, indent=2, ensure_ascii=False))
