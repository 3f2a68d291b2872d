"""Run the real `ascend-env` entry point in-process, capturing its exit code and output."""

from __future__ import annotations

import contextlib
import io
import sys
from dataclasses import dataclass

from ascend_env.cli.app import main


@dataclass(frozen=True)
class CliResult:
    """What one command run printed and how it ended."""

    code: int
    out: str
    err: str


def invoke(*args: str) -> CliResult:
    """`ascend-env ARGS...` through main(), so user errors go through the same handler."""
    out, err = io.StringIO(), io.StringIO()
    code: int = 0
    argv = sys.argv
    sys.argv = ["ascend-env", *args]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main()
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 2)
    finally:
        sys.argv = argv
    return CliResult(code, out.getvalue(), err.getvalue())
