"""The package's layers, read from the source: every import counted (module level, inside
functions, under TYPE_CHECKING). A subpackage imports only its own modules and the layers
below it; no two files import each other, directly or round a loop.

The order is LAYERS below; docs/design.md says why each cut is where it is.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "ascend_env"

# Lowest first; packages on one line do not import each other. `remote` is shipped to targets
# and imports nothing of ascend_env, so any layer may read its constants.
LAYERS: tuple[frozenset[str], ...] = tuple(frozenset(names.split()) for names in (
    "remote",
    "core",
    "spec",
    "facts",
    "targets ansible repository",
    "explain",
    "doctor",
    "install smoke image cluster perf",
    "workflows",
    "cli",
))  # docs/design.md has the same table
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(source: str, package: str) -> Iterator[tuple[str, int]]:
    """Every module name an import statement of the source names, with its line; `package`
    anchors relative imports."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            yield base, node.lineno
            for alias in node.names:  # `from package import module`
                yield f"{base}.{alias.name}", node.lineno


def graph() -> dict[str, dict[str, int]]:
    """module -> {module of ours it imports: line}."""
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    edges: dict[str, dict[str, int]] = {name: {} for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for target, line in imported(path.read_text(encoding="utf-8"), package):
            if target in modules and target != name:
                edges[name].setdefault(target, line)
    return edges


def subpackage(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 else None


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Each strongly connected group of more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(edges.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def test_cycles_are_found() -> None:
    """The finder itself: a loop of three and a self-contained pair are reported, a chain not."""
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"e"}, "e": {"d"}, "f": {"a"}}
    assert sorted(cycles(edges)) == [["a", "b", "c"], ["d", "e"]]
    assert cycles({"a": {"b"}, "b": {"c"}}) == []


def test_imports_are_read_inside_functions_and_type_checking() -> None:
    source = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from x.y import Z\n"
              "def f():\n    import q.r\n    from . import s\n")
    names = {name for name, _ in imported(source, "ascend_env.doctor")}
    assert {"x.y", "x.y.Z", "q.r", "ascend_env.doctor", "ascend_env.doctor.s"} <= names


def test_no_file_imports_itself_round_a_loop() -> None:
    edges = graph()
    assert cycles({name: set(targets) for name, targets in edges.items()}) == []


def test_no_subpackages_import_each_other_round_a_loop() -> None:
    packages: dict[str, set[str]] = {}
    for name, targets in graph().items():
        for target in targets:
            a, b = subpackage(name), subpackage(target)
            if a and b and a != b:
                packages.setdefault(a, set()).add(b)
    assert cycles(packages) == []


def test_every_subpackage_has_a_layer() -> None:
    found = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert sorted(found - set(RANK)) == []


@pytest.mark.parametrize("layer", sorted(RANK))
def test_imports_go_down(layer: str) -> None:
    """A module imports from its own subpackage and from lower layers only."""
    wrong = []
    for name, targets in graph().items():
        if subpackage(name) != layer:
            continue
        for target, line in targets.items():
            other = subpackage(target)
            if other is not None and other != layer and RANK[other] >= RANK[layer]:
                wrong.append(f"{name}:{line} imports {target} ({other} is not below {layer})")
    assert wrong == []


def test_the_design_page_shows_these_layers() -> None:
    """docs/design.md's table lists the same packages on the same lines."""
    page = (PACKAGE.parent / "docs" / "design.md").read_text(encoding="utf-8")
    rows = [line.split("|")[2] for line in page.splitlines()
            if line.startswith("| ") and line.split("|")[1].strip().isdigit()]
    documented = tuple(frozenset(name.strip(" `") for name in row.split(",")) for row in rows)
    assert documented == LAYERS
