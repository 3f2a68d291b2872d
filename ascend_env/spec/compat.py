"""Cross-validation of an EnvSpec against the compatibility matrix and the chip data.

Each rule returns Problems that name the key path, the value, the matrix row it breaks and
the values that would fit, so an operator can fix the spec without opening the tables.
"""

from __future__ import annotations

from packaging.utils import canonicalize_version

from ascend_env.core.errors import Problem
from ascend_env.core.versions import AscendVersion
from ascend_env.spec.envspec import EnvSpec
from ascend_env.spec.matrix import (
    CannRow,
    Chip,
    Matrix,
    MindSporeRow,
    TorchRow,
    load_chips,
    load_matrix,
)
from ascend_env.spec.wheels import check_wheels

# Operator packages were `kernels-<chip>` until 8.3.x and `<chip>-ops` from 8.5.0; nnae and
# nnrt were not released from 8.5.0 on (ascend-facts.md §5.2, §6).
OPS_RENAMED_IN = AscendVersion.parse("8.5.0")


def _sources(row: CannRow | TorchRow | MindSporeRow) -> str:
    return ", ".join(row.sources)


def _same_release(a: str, b: str) -> bool:
    """PEP 440 equality of framework versions (`2.6.0-rc1` == `2.6.0rc1`, `+cpu` ignored)."""
    def public(version: str) -> str:
        return canonicalize_version(version.split("+", maxsplit=1)[0])

    return public(a) == public(b)


def check_spec(spec: EnvSpec, matrix: Matrix | None = None) -> list[Problem]:
    """Every incompatibility and doubt in the spec; errors first, then warnings."""
    matrix = matrix or load_matrix()
    problems: list[Problem] = []
    chip = load_chips().get(spec.hardware.chip)
    assert chip is not None, "hardware.chip is validated against chips.yaml names"
    problems += _check_hardware(spec, chip)
    cann_row = matrix.cann_row(spec.cann.version)
    if cann_row is None:
        known = [row.cann.raw for row in matrix.cann]
        problems.append(Problem(path="cann.version", value=spec.cann.version.raw,
                                message="is not a CANN release ascend-env knows",
                                alternatives=known[-8:]))
    else:
        problems += _check_driver(spec, cann_row, matrix)
        problems += _check_python_for_cann(spec, cann_row)
    problems += _check_packages(spec)
    if spec.frameworks.torch is not None:
        problems += _check_torch(spec, matrix)
    if spec.frameworks.mindspore is not None:
        problems += _check_mindspore(spec, matrix)
    problems += check_wheels(spec)  # the real wheels' Pythons (spec/wheels.py)
    return sorted(problems, key=lambda p: p.severity != "error")


def _check_hardware(spec: EnvSpec, chip: Chip) -> list[Problem]:
    devices = spec.hardware.devices
    if devices is not None and devices not in chip.devices.allowed:
        return [Problem(path="hardware.devices", value=devices,
                        message=f"is not a device count of a {chip.family} host",
                        row=f"chips.yaml {chip.name}",
                        alternatives=[str(n) for n in chip.devices.allowed])]
    return []


def _check_driver(spec: EnvSpec, row: CannRow, matrix: Matrix) -> list[Problem]:
    # The spec may name the release (25.0.RC1) or its file version (25.0.rc1.1): one identity.
    hdk = matrix.hdk()
    driver = spec.driver.version
    release = hdk.release_of(driver)
    cann = spec.cann.version
    minimum = row.minimum_hdk()
    row_text = f"CANN {row.cann.raw} -> HDK {row.hdk.raw if row.hdk else 'not confirmed'}"
    if row.conflict is not None:
        row_text += f"; conflict #{row.conflict}"
    row_text += f" ({_sources(row)})"
    if minimum is not None and release < minimum:
        return [Problem(path="driver.version", value=driver.raw, row=row_text,
                        message=f"driver {driver.raw} is older than CANN {cann.raw} supports "
                                f"(needs HDK >= {minimum.raw})",
                        alternatives=_paired_hdks(row))]
    if row.hdk is None or row.accepts_hdk(driver, hdk):
        return []
    return [Problem(path="driver.version", value=driver.raw, row=row_text, severity="warning",
                    message=f"driver {driver.raw} is not a sourced pairing for CANN {cann.raw}; "
                            f"it was released with HDK {row.hdk.raw}",
                    alternatives=_paired_hdks(row))]


def _paired_hdks(row: CannRow) -> list[str]:
    lines = [f"{line}.x" for line in row.hdk_compatible]
    return ([row.hdk.raw] if row.hdk else []) + [x for x in lines if row.hdk is None
                                                 or not x.startswith(row.hdk.line + ".")]


def _check_python_for_cann(spec: EnvSpec, row: CannRow) -> list[Problem]:
    if row.python is None or spec.python.version in row.python:
        return []
    return [Problem(path="python.version", value=spec.python.version,
                    message=f"CANN {row.cann.raw} supports Python {row.python}",
                    row=f"CANN {row.cann.raw} ({_sources(row)})",
                    alternatives=row.python.minors())]


def _check_packages(spec: EnvSpec) -> list[Problem]:
    problems = []
    packages = spec.cann.packages
    renamed = spec.cann.version.release() >= OPS_RENAMED_IN
    if "kernels" in packages and renamed:
        problems.append(Problem(
            path="cann.packages", value="kernels",
            message="from CANN 8.5.0 the operator package is `<chip>-ops`, not kernels",
            alternatives=["ops"]))
    for runtime in ("nnae", "nnrt"):
        if runtime in packages and renamed:
            problems.append(Problem(
                path="cann.packages", value=runtime,
                message=f"{runtime} is not released from CANN 8.5.0; the toolkit replaces it",
                alternatives=["toolkit"]))
    if not {"toolkit", "nnae", "nnrt"} & set(packages):
        problems.append(Problem(path="cann.packages", value=list(packages),
                                message="needs a base package: toolkit (or nnae/nnrt up to 8.3)",
                                alternatives=["toolkit"]))
    if len(set(packages)) != len(packages):
        problems.append(Problem(path="cann.packages", value=list(packages),
                                message="lists a package twice", severity="warning"))
    return problems


def _unpaired(path: str, name: str, version: str, cann: AscendVersion, *,
              elsewhere: list[tuple[str, TorchRow | MindSporeRow]], choices: list[str]
              ) -> Problem:
    """A framework release with no row for this CANN: name the rows it does have."""
    where = "; ".join(f"{name} {release} <-> CANN {row.cann.raw} ({_sources(row)})"
                      for release, row in elsewhere)
    message = (f"{name} {version} does not pair with CANN {cann.raw}; for CANN {cann.raw} "
               "use one of the listed" if elsewhere else f"{name} {version} is not in the matrix")
    return Problem(path=path, value=version, message=message, row=where or None,
                   alternatives=choices)


def _alternative(matrix: Matrix, row: TorchRow | MindSporeRow, path: str, value: str, *,
                 row_text: str, choices: list[str]) -> Problem:
    """A pairing only the source ascend-env does not follow makes: allowed, with a warning."""
    conflict = matrix.conflict(row.conflict) if row.conflict is not None else None
    return Problem(path=path, value=value, severity="warning", row=row_text,
                   message="is paired with this CANN only by " + _sources(row)
                   + (f" (conflict #{conflict.id}: {conflict.topic})" if conflict else ""),
                   alternatives=choices)


def _check_torch(spec: EnvSpec, matrix: Matrix) -> list[Problem]:
    torch = spec.frameworks.torch
    assert torch is not None
    cann = spec.cann.version
    for_cann = matrix.torch_rows(cann)
    choices = [f"{r.torch_npu} (torch {r.torch})" for r in for_cann if r.status == "followed"]
    row = next((r for r in for_cann if _same_release(r.torch_npu, torch.torch_npu)), None)
    if row is None:
        elsewhere = [r for r in matrix.torch if _same_release(r.torch_npu, torch.torch_npu)]
        return [_unpaired("frameworks.torch.torch_npu", "torch_npu", torch.torch_npu, cann,
                          elsewhere=[(r.torch_npu, r) for r in elsewhere], choices=choices)]
    problems = []
    row_text = f"torch_npu {row.torch_npu} <-> torch {row.torch} <-> CANN {row.cann.raw} " \
               f"({_sources(row)})"
    if not _same_release(row.torch, torch.version):
        problems.append(Problem(path="frameworks.torch.version", value=torch.version,
                                message=f"torch_npu {row.torch_npu} extends torch {row.torch}, "
                                        f"not torch {torch.version}",
                                row=row_text, alternatives=[row.torch]))
    if row.status == "alternative":
        problems.append(_alternative(matrix, row, "frameworks.torch.torch_npu", torch.torch_npu,
                                     row_text=row_text, choices=choices))
    python = spec.python.version
    if python not in row.python:
        problems.append(Problem(path="python.version", value=python, row=row_text,
                                message=f"torch_npu {row.torch_npu} supports Python {row.python}",
                                alternatives=row.python.minors()))
    elif row.wheels is not None and python not in row.wheels:
        problems.append(Problem(path="python.version", value=python, row=row_text,
                                severity="warning",
                                message=f"the ascend-deployer mirror has torch_npu "
                                        f"{row.torch_npu} wheels only for Python {row.wheels}; "
                                        "fetch the wheel from PyPI",
                                alternatives=row.wheels.minors()))
    return problems


def _check_mindspore(spec: EnvSpec, matrix: Matrix) -> list[Problem]:
    mindspore = spec.frameworks.mindspore
    assert mindspore is not None
    cann = spec.cann.version
    for_cann = matrix.mindspore_rows(cann)
    choices = [r.mindspore for r in for_cann if r.status == "followed"]
    row = next((r for r in for_cann if _same_release(r.mindspore, mindspore.version)), None)
    if row is None:
        elsewhere = [r for r in matrix.mindspore if _same_release(r.mindspore, mindspore.version)]
        return [_unpaired("frameworks.mindspore.version", "MindSpore", mindspore.version, cann,
                          elsewhere=[(r.mindspore, r) for r in elsewhere], choices=choices)]
    problems = []
    row_text = f"MindSpore {row.mindspore} <-> CANN {row.cann.raw} ({_sources(row)})"
    if row.status == "alternative":
        problems.append(_alternative(matrix, row, "frameworks.mindspore.version",
                                     mindspore.version, row_text=row_text, choices=choices))
    python = spec.python.version
    if row.python is None:
        problems.append(Problem(path="python.version", value=python, severity="warning",
                                message=f"no source confirms which Pythons MindSpore "
                                        f"{row.mindspore} supports", row=row_text))
    elif python not in row.python:
        problems.append(Problem(path="python.version", value=python, row=row_text,
                                message=f"MindSpore {row.mindspore} supports Python {row.python}",
                                alternatives=row.python.minors()))
    return problems
