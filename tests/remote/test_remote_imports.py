"""What ascend_env/remote/ ships to targets: Python 3.8 syntax and the standard library only."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

REMOTE = Path(__file__).resolve().parents[2] / "ascend_env" / "remote"
PROGRAMS = sorted(p for p in REMOTE.glob("*.py") if p.name != "__init__.py")
# Frameworks a smoke workload drives (imported inside functions, reported when missing).
FRAMEWORKS = {"torch", "torch_npu", "mindspore", "numpy"}
SIBLINGS = {p.stem for p in PROGRAMS}


def _imports(tree: ast.AST) -> list[tuple[str, int]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name.split(".")[0], node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.module.split(".")[0], node.lineno))
    return found


def test_remote_holds_the_programs() -> None:
    assert {"probe", "image_probe", "harness", "healthcheck", "torch_workload"} <= SIBLINGS


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_program_is_python38_and_stdlib_only(program: Path) -> None:
    tree = ast.parse(program.read_text(encoding="utf-8"), feature_version=(3, 8))
    foreign = [(name, line) for name, line in _imports(tree)
               if name not in sys.stdlib_module_names and name not in SIBLINGS | FRAMEWORKS]
    assert not foreign, f"{program.name} imports outside the standard library: {foreign}"


def test_the_check_catches_a_foreign_import() -> None:
    tree = ast.parse("import yaml\nfrom ascend_env.core import errors\nimport json\n")
    names = [name for name, _ in _imports(tree) if name not in sys.stdlib_module_names]
    assert names == ["yaml", "ascend_env"]
