"""Running the OS's own package tools (dnf, apt-get, createrepo_c, apt-ftparchive) for fetch.

Each runs with its arguments as argv, a time limit and a bounded error text; a tool that is
missing or fails is an OsToolError naming the command and what it said.
"""

from __future__ import annotations

import subprocess
import urllib.parse
from pathlib import Path

from ascend_env.core.errors import AscendEnvError
from ascend_env.core.urls import check_url

# A mirror's metadata is large (openEuler's OS repository: tens of MB); downloads of the
# whole closure take minutes on a slow link. Beyond this a tool is hung.
TOOL_TIMEOUT_S = 3600
SAID = 1500  # characters of a failing tool's output kept in the message


class OsToolError(AscendEnvError):
    """A package tool is missing, or failed: the OS packages could not be gathered."""

    exit_code = 1


def run_tool(argv: list[str], what: str, cwd: Path | None = None) -> str:
    """The tool's standard output; its failure (or time-out) as an OsToolError."""
    try:
        res = subprocess.run(argv, capture_output=True, text=True, errors="replace", cwd=cwd,
                             timeout=TOOL_TIMEOUT_S, check=False)
    except FileNotFoundError:
        raise OsToolError(f"{argv[0]} is not installed on this machine ({what})") from None
    except subprocess.TimeoutExpired:
        raise OsToolError(f"{what} did not finish in {TOOL_TIMEOUT_S} s") from None
    if res.returncode != 0:
        said = (res.stderr.strip() or res.stdout.strip())[-SAID:]
        raise OsToolError(f"{what} failed (exit {res.returncode}): {said}")
    return res.stdout


def file_url(mirror: str) -> str:
    """A mirror as a URL: http(s) as given (checked), a folder as file:// of its absolute path."""
    if "://" in mirror:
        if mirror.startswith("file://"):
            return mirror
        return check_url(mirror, "--os-mirror")
    folder = Path(mirror)
    if not folder.is_dir():
        raise OsToolError(f"--os-mirror {mirror}: no such folder (a URL, or a folder copied "
                          "from a mirror)")
    return "file://" + urllib.parse.quote(str(folder.resolve()))
