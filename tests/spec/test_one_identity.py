"""One identity everywhere: the checks that compare versions (driver, firmware, CANN, ops, NNAL,
frameworks) and `spec validate` decide "same release" with core.versions.same_release only,
never with a comparison of their own (==, .release(), packaging's canonicalize_version)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
USERS = ["checks/test_driver.py", "checks/test_firmware.py", "checks/test_cann.py",
         "checks/test_frameworks.py", "ascend_env/spec/compat.py"]
# Names that hold versions in these modules; comparing two of them with == is a second identity.
VERSIONISH = ("version", "release", "wanted", "hdk", "shipped", "running", "installed",
              "torch_npu", "mindspore")


def _source(name: str) -> ast.Module:
    return ast.parse((ROOT / name).read_text(encoding="utf-8"))


def _named(node: ast.expr) -> str:
    return ast.unparse(node)


@pytest.mark.parametrize("name", USERS)
def test_module_uses_same_release(name: str) -> None:
    tree = _source(name)
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
             and _named(n.func).endswith("same_release")]
    assert calls, f"{name} never calls same_release"


@pytest.mark.parametrize("name", USERS)
def test_no_second_identity(name: str) -> None:
    tree = _source(name)
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                for alias in node.names}
    assert "canonicalize_version" not in imported, name
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and any(isinstance(op, ast.Eq | ast.NotEq)
                                                 for op in node.ops):
            sides = [_named(node.left), *(_named(c) for c in node.comparators)]
            versions = [s for s in sides if any(word in s for word in VERSIONISH)
                        and not s.startswith(("'", '"')) and ".line" not in s
                        and ".source" not in s and ".status" not in s and "layout" not in s]
            # A release compared with a release (cann rows by `.release()`) is the matrix
            # lookup, not an identity of two host strings; anything else is a second identity.
            if len(versions) == 2 and not all(".release()" in s or s.endswith(".cann")
                                              for s in versions):
                raise AssertionError(f"{name}:{node.lineno}: {ast.unparse(node)} compares "
                                     "versions outside same_release")
