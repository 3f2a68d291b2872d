#!/usr/bin/env python3
"""Image health check: what `ascend-env image build` validated still holds in this container.

Runs as the image's HEALTHCHECK with only the standard library (Python 3.8+). Validation
recorded its expectations in /etc/ascend-env/expect.json: the CANN environment variables, the
files of the CANN install and the framework versions. A container whose environment was
replaced (`-e LD_LIBRARY_PATH=...`) or whose frameworks were changed reports unhealthy, with
one line per difference. Exit 0 healthy, 1 unhealthy.
"""

# Runs inside images, like probe.py: plain os.path over a walk of the whole file system.
from __future__ import annotations

import json
import os
import subprocess
import sys

EXPECT = "/etc/ascend-env/expect.json"
VERSIONS = (
    "import json, sys\n"
    "from importlib import metadata\n"
    "out = {}\n"
    "for name in sys.argv[1:]:\n"
    "    try:\n"
    "        out[name] = metadata.version(name)\n"
    "    except metadata.PackageNotFoundError:\n"
    "        out[name] = None\n"
    "print(json.dumps(out))\n"
)


def _versions(python: str, names: list[str]) -> dict[str, str | None]:
    result = subprocess.run([python, "-c", VERSIONS, *names], capture_output=True, text=True,
                            timeout=20, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"{python} could not list its distributions: "
                           f"{result.stderr.strip()[-200:]}")
    found: dict[str, str | None] = json.loads(result.stdout)
    return found


def problems(expect: dict[str, object]) -> list[str]:
    """Every difference between the container and what validation recorded."""
    found: list[str] = []
    env = expect.get("env") or {}
    assert isinstance(env, dict)
    for name, value in sorted(env.items()):
        actual = os.environ.get(name)
        if actual != value:
            found.append(f"{name} is {actual!r}, validated as {value!r}")
    paths = expect.get("paths") or []
    assert isinstance(paths, list)
    for path in paths:
        if not os.path.exists(path):
            found.append(f"{path} is missing")
    wanted = expect.get("distributions") or {}
    assert isinstance(wanted, dict)
    python = str(expect.get("python") or sys.executable)
    if wanted:
        try:
            have = _versions(python, sorted(wanted))
        except (OSError, RuntimeError, subprocess.SubprocessError, ValueError) as exc:
            return [*found, str(exc)]
        for name, version in sorted(wanted.items()):
            if have.get(name) != version:
                found.append(f"{name} {have.get(name) or 'is not installed'}, validated as "
                             f"{version}")
    return found


def main() -> int:
    try:
        with open(EXPECT, encoding="utf-8") as handle:
            expect = json.load(handle)
    except (OSError, ValueError) as exc:
        print(f"unhealthy: this image was not validated by ascend-env ({exc})")
        return 1
    found = problems(expect)
    for line in found:
        print(f"unhealthy: {line}")
    if not found:
        print(f"healthy: {expect.get('summary', 'as validated')}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
