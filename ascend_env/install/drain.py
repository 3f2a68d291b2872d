"""`--drain-cmd` / `--undrain-cmd`: the operator's commands that take a batch's hosts out of
their scheduler before it changes and give them back after its gate passed (`kubectl drain
{host}`, `scontrol update nodename={host} state=drain ...`).

A template is split as a shell would split it, then `{host}` is replaced inside each word:
the host's name is always one argument, never shell text. The command runs on the controller,
tethered (core/children.py): a stop of ascend-env stops it too.
"""

from __future__ import annotations

import shlex
import tempfile
import threading
from dataclasses import dataclass

from ascend_env.core import children
from ascend_env.core.errors import UsageError

PLACEHOLDER = "{host}"
TIMEOUT_S = 3600.0  # a drain waits for the jobs it evicts (--drain-timeout)
TAIL = 2000


@dataclass(frozen=True)
class HostCommand:
    """One template, checked when the command line is read."""

    option: str
    words: tuple[str, ...]
    timeout_s: float = TIMEOUT_S

    def argv(self, host: str) -> list[str]:
        return [word.replace(PLACEHOLDER, host) for word in self.words]


def parse_template(option: str, template: str | None,
                   timeout_s: float = TIMEOUT_S) -> HostCommand | None:
    """The template split into words; a usage error when it does not split or names no host."""
    if template is None:
        return None
    if not timeout_s > 0:
        raise UsageError(f"{option}: the timeout must be a positive number of seconds")
    try:
        words = tuple(shlex.split(template))
    except ValueError as exc:
        raise UsageError(f"{option} {template!r}: {exc}") from exc
    if not words or not any(PLACEHOLDER in word for word in words):
        raise UsageError(f"{option} {template!r}: name the host with {PLACEHOLDER}, e.g. "
                         f"{option} 'kubectl drain {PLACEHOLDER} --ignore-daemonsets'")
    return HostCommand(option, words, timeout_s)


def run_for(command: HostCommand, host: str) -> str | None:
    """Run the command for `host`; None when it succeeded, else why not (exit or timeout, and
    output)."""
    argv = command.argv(host)
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        children.stop(process)

    with tempfile.TemporaryFile() as output:
        try:
            process = children.spawn(argv, stdout=output, stderr=output)
        except FileNotFoundError:
            return f"{command.option} for {host}: {argv[0]} was not found"
        timer = threading.Timer(command.timeout_s, expire)
        timer.start()
        try:
            rc = children.wait(process)
        finally:
            timer.cancel()
        children.raise_if_interrupted()
        if rc == 0 and not expired.is_set():
            return None
        output.seek(0)
        said = output.read()[-TAIL:].decode("utf-8", "replace").strip()
    ran = shlex.join(argv)
    how = (f"did not finish in {command.timeout_s:g} s" if expired.is_set()
           else f"failed (exit {rc})")
    return f"{command.option} for {host} {how}: {ran}" + (f": {said}" if said else "")
