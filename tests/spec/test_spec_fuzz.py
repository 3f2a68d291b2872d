"""Random and mutated specs never make `spec validate` crash: a message and 0, 1 or 2."""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ascend_env.spec.envspec import profile_document
from tests.cli_invoke import invoke

BASE = profile_document("910b")

scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 10**6), st.floats(allow_nan=False),
                    st.text(max_size=12), st.sampled_from(
                        ["8.5.0", "8.0.RC3", "25.0.rc1.1", "2.9.0", "3.11", "910b", "x86_64",
                         "9.0.0-beta.2", "7.0.T10", "2.6.0-rc1", "", "-1"]))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=6)


def _paths(document: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [prefix] if prefix else []
    if isinstance(document, dict):
        for key, value in document.items():
            found += _paths(value, (*prefix, str(key)))
    return found


@st.composite
def mutated_specs(draw: st.DrawFn) -> Any:
    document = copy.deepcopy(BASE)
    if draw(st.booleans()):
        document = {"extends": draw(st.sampled_from(["910b", "a3", "nope", 3])),
                    **{k: v for k, v in document.items() if draw(st.booleans())}}
    for _ in range(draw(st.integers(1, 4))):
        if not _paths(document):
            break
        path = draw(st.sampled_from(_paths(document)))
        parent = document
        for key in path[:-1]:
            parent = parent[key]
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        if action == "replace":
            parent[path[-1]] = draw(values)
        elif action == "delete":
            parent.pop(path[-1], None)
        elif isinstance(parent, dict):
            parent[draw(st.text(min_size=1, max_size=8))] = draw(values)
        if not isinstance(document, dict):
            break
    return document


def _check(text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "spec.yaml"
        path.write_text(text)
        result = invoke("spec", "validate", str(path), "--json")
    assert "Traceback" not in result.err + result.out
    assert result.code in (0, 1), (result.code, result.err)
    document = json.loads(result.out)
    assert document["schema"] == "ascend-env/validation/v1"
    assert document["valid"] is (result.code == 0)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_specs())
def test_mutated_specs_never_crash(document: Any) -> None:
    _check(yaml.safe_dump(document))


@settings(max_examples=100, deadline=None)
@given(st.one_of(st.text(max_size=200), values.map(yaml.safe_dump)))
def test_random_text_never_crashes(text: str) -> None:
    _check(text)
