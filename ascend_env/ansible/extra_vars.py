"""`install -e/--extra-vars`: what ansible-playbook's own -e takes, checked before any host is
touched so a typo is a usage error (exit 2), not a failed run on every host."""

from __future__ import annotations

import json
from pathlib import Path

from ascend_env.core.errors import UsageError


def extra_vars_args(values: list[str]) -> list[str]:
    """Each -e value as ansible-playbook reads it: `key=value ...`, `@FILE` or a JSON object.

    `@FILE` becomes an absolute path, as ansible-playbook runs from this directory anyway but
    the run log should say which file it was."""
    checked = []
    for value in values:
        text = value.strip()
        if text.startswith("@"):
            path = Path(text[1:]).expanduser()
            if not path.is_file():
                raise UsageError(f"--extra-vars {value}: {path} is not a readable file")
            checked.append(f"@{path.resolve()}")
        elif text.startswith("{"):
            try:
                loaded = json.loads(text)
            except json.JSONDecodeError as exc:
                raise UsageError(f"--extra-vars {value!r}: not valid JSON ({exc.msg} at "
                                 f"character {exc.pos})") from exc
            if not isinstance(loaded, dict):
                raise UsageError(f"--extra-vars {value!r}: JSON must be an object")
            checked.append(text)
        else:
            pairs = text.split()
            bad = [pair for pair in pairs if "=" not in pair or pair.startswith("=")]
            if not pairs or bad:
                raise UsageError(f"--extra-vars {value!r}: expected key=value, @FILE or a "
                                 f"JSON object")
            checked.append(text)
    return checked
