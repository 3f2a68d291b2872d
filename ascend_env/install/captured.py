"""What the roles after preflight read from preflight's capture instead of asking the host again.

preflight's probe records, in the one pass it makes anyway, the boot id and the pending-reboot
marker (`--read`), the managed files with their owner and mode, and the distributions of the
frameworks' venv (`--python`): a run with nothing to change decides from these without a
round trip per file (ascend_env/install/actions.py decides the vendor software the same way).
"""

from __future__ import annotations

from typing import Any

from ascend_env.facts.capture import Capture
from ascend_env.facts.frameworks import parse_python_distributions
from ascend_env.remote import probe


def captured_extras(capture: Capture) -> dict[str, Any]:
    """`files`: each regular file the capture both read and stat'ed (text, mode, owner,
    group); `distributions`: name -> version of the framework interpreter, None where it
    could not be asked (no venv yet)."""
    files: dict[str, Any] = {}
    for path, text in capture.files.items():
        info = capture.paths.get(path)
        # A file the probe cut short or filtered is not known whole: never "the same".
        if info is None or info.type != "file" or path in capture.filters:
            continue
        files[path] = {"text": text, "mode": info.mode, "owner": info.owner,
                       "group": info.group}
    result = capture.commands.get(probe.FRAMEWORK_PYTHON)
    distributions = None
    if result is not None and result.ok:
        env = parse_python_distributions(result.stdout)
        distributions = env.distributions if env.executable else None
    return {"files": files, "distributions": distributions}


def first_line(files: dict[str, Any], path: str) -> str | None:
    """The first non-blank line of a captured file, None where the file was not there."""
    entry = files.get(path)
    text = entry.get("text") if isinstance(entry, dict) else None
    if not isinstance(text, str):
        return None
    return next((line.strip() for line in text.splitlines() if line.strip()), None)


def file_current(entry: object, content: str, mode: str, owner: str = "root",
                 group: str = "root") -> bool:
    """Whether a captured file already is what a role would write: the same text, owner, group
    and mode (the template or copy task would report "ok" and change nothing)."""
    if not isinstance(entry, dict):
        return False
    return (entry.get("text") == content and entry.get("mode") == mode
            and entry.get("owner") == owner and entry.get("group") == group)
