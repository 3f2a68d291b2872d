"""The doctor starts its probes before its heavy imports, and loads them all while they run.

A doctor is meant to serve as a health check: what it imports before the probes start is
paid in full, what prepare_suite loads overlaps the probes' round trips. Run in fresh
interpreters, since this test session has imported everything already.
"""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("pydantic", "pytest", "ansible", "ascend_env.facts.model", "ascend_env.doctor.report",
         "ascend_env.spec.matrix", "ascend_env.facts.capture", "ascend_env.spec.envspec",
         "ascend_env.doctor.suite")


def fresh(code: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    names: list[str] = json.loads(done.stdout.splitlines()[-1])
    return names


def test_nothing_heavy_is_imported_before_the_probes_start() -> None:
    loaded = fresh("import json, sys; import ascend_env.cli.app, ascend_env.doctor.run, "
                   "ascend_env.cli.doctor_commands, ascend_env.cli.terminal; "
                   "print(json.dumps(sorted(sys.modules)))")
    assert [name for name in HEAVY if name in loaded] == []


def test_prepare_suite_loads_what_the_suite_imports() -> None:
    """SUITE_MODULES stays whole: evaluating a capture imports no module of ours beyond it."""
    new = fresh(
        "import json, sys\n"
        "from ascend_env.doctor.collect import ProbeOptions, capture_local\n"
        "from ascend_env.doctor.run import DoctorOptions, evaluate, prepare_suite\n"
        "prepare_suite()\n"
        "captured = [capture_local(ProbeOptions())]\n"
        "before = set(sys.modules)\n"
        "evaluate(captured, DoctorOptions())\n"
        "print(json.dumps(sorted(set(sys.modules) - before)))\n")
    assert [name for name in new if name.startswith(("ascend_env", "pydantic", "packaging"))
            ] == []
