"""Find the files ascend-env ships: data tables, playbooks, checks, container templates, and
the programs of ascend_env/remote that targets run.

In a source checkout `playbooks/`, `checks/` and `containers/` sit beside the package; an
installed wheel carries them in `ascend_env/_shipped/` (pyproject's force-include).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml

# libyaml's parser (PyYAML's C binding) reads matrix.yaml ~8x faster than the pure-Python one,
# with the same safe constructor; the pure one stays the fallback where libyaml is absent.
_SafeLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

Shipped = Literal["playbooks", "checks", "containers"]

_PACKAGE_DIR = Path(__file__).resolve().parents[1]


def data_text(name: str) -> str:
    """The text of a file under ascend_env/data/."""
    return resources.files("ascend_env").joinpath("data").joinpath(name).read_text(encoding="utf-8")


def load_yaml(name: str) -> Any:
    """A YAML file under ascend_env/data/, parsed."""
    return yaml.load(data_text(name), Loader=_SafeLoader)


def data_names(folder: str) -> list[str]:
    """File names in a folder under ascend_env/data/ (e.g. the profiles)."""
    root = resources.files("ascend_env").joinpath("data").joinpath(folder)
    return sorted(entry.name for entry in root.iterdir() if entry.is_file())


def shipped_dir(name: Shipped) -> Path:
    """The directory of playbooks, checks or container templates, wherever installed."""
    for candidate in (_PACKAGE_DIR / "_shipped" / name, _PACKAGE_DIR.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(
        f"ascend-env is missing its {name}/ directory (looked in {_PACKAGE_DIR / '_shipped'} "
        f"and {_PACKAGE_DIR.parent}); reinstall the package"
    )


# Remote programs made of several modules, in the order their sources run as one text: each
# imports the ones before it only when imported itself (probe.py says how).
_MODULES = {"probe": ("probe_io", "probe")}
_PARTS = {m for modules in _MODULES.values() for m in modules} - set(_MODULES)


def remote_source(name: str) -> str:
    """The source of one of ascend_env/remote's programs (`probe`, `image_probe`...), exactly
    as a target runs it: plain text, for `python3 -c` on a host or in an image; a program of
    several modules is their sources one after the other, each as it is in the package."""
    if not name.isidentifier() or name == "__init__" or name in _PARTS:
        raise ValueError(f"no remote program {name!r} in ascend_env/remote")
    texts = []
    for module in _MODULES.get(name, (name,)):
        program = resources.files("ascend_env.remote").joinpath(f"{module}.py")
        if not program.is_file():
            raise ValueError(f"no remote program {name!r} in ascend_env/remote")
        texts.append(program.read_text(encoding="utf-8"))
    return "\n".join(texts)
