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


def remote_source(name: str) -> str:
    """The source of one of ascend_env/remote's programs (`probe`, `image_probe`...), exactly
    as a target runs it: plain text, for `python3 -c` on a host or in an image."""
    program = resources.files("ascend_env.remote").joinpath(f"{name}.py")
    if not name.isidentifier() or name == "__init__" or not program.is_file():
        raise ValueError(f"no remote program {name!r} in ascend_env/remote")
    return program.read_text(encoding="utf-8")
