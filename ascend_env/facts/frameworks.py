"""Python frameworks: the distributions the framework interpreter has installed."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from ascend_env.facts.model import FrameworkFacts, PythonEnv
from ascend_env.facts.reader import CaptureReader
from ascend_env.remote import probe


def normalize_dist(name: str) -> str:
    """A distribution name as PEP 503 compares it: `Torch_NPU` -> `torch-npu`."""
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_python_distributions(text: str) -> PythonEnv:
    """The JSON the probe's distributions snippet prints."""
    try:
        doc = json.loads(text)
    except ValueError:
        return PythonEnv(notes=[f"unparsed distributions output: {text.strip()[:120]}"])
    if not isinstance(doc, dict):
        return PythonEnv(notes=["distributions output is not an object"])
    dists: dict[str, str] = {}
    for item in doc.get("distributions") or []:
        if isinstance(item, list) and len(item) >= 2 and item[0] and item[1]:
            # The first entry on sys.path wins, as it does for an import.
            dists.setdefault(normalize_dist(str(item[0])), str(item[1]))
    return PythonEnv(executable=_str_or_none(doc.get("executable")),
                     version=_str_or_none(doc.get("version")),
                     prefix=_str_or_none(doc.get("prefix")), distributions=dict(sorted(
                         dists.items())))


def _str_or_none(value: object) -> str | None:
    return str(value) if isinstance(value, str | int | float) and str(value) else None


def read_frameworks(r: CaptureReader) -> FrameworkFacts:
    """torch, torch_npu and MindSpore as the framework interpreter has them."""
    result = r.capture.commands.get(probe.FRAMEWORK_PYTHON)
    if result is None:
        return FrameworkFacts()
    if not result.ok:
        return FrameworkFacts(error=(result.stderr.strip() or f"exit status {result.rc}")
                              .splitlines()[-1])
    env = parse_python_distributions(result.stdout)
    r.notes += env.notes
    dists = env.distributions
    ms_name = next((n for n in ("mindspore", "mindspore-ascend") if n in dists), None)
    return FrameworkFacts(python=env, torch=dists.get("torch"),
                          torch_npu=dists.get("torch-npu"),
                          mindspore=dists.get(ms_name) if ms_name else None,
                          mindspore_dist=ms_name)


# Parsers by the folder name of their samples under tests/data/.
PARSERS: dict[str, Callable[[Any], Any]] = {
    "python_distributions": parse_python_distributions,
}
