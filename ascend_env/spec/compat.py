"""Cross-validation of an EnvSpec against the compatibility matrix and the chip data.

Each rule returns Problems that name the key path, the value, the matrix row it breaks and
the values that would fit, so an operator can fix the spec without opening the tables.
"""

from __future__ import annotations

from typing import Literal

from ascend_env.core.errors import Problem
from ascend_env.core.versions import AscendVersion, impossible, nearest, parse, same_release
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
from ascend_env.spec.releases import ImagePairing
from ascend_env.spec.wheels import check_wheels

# Operator packages were `kernels-<chip>` until 8.3.x and `<chip>-ops` from 8.5.0; nnae and
# nnrt were not released from 8.5.0 on (CANN 8.5.0 release notes, https://www.hiascend.com/document/detail/zh/canncommercial/850/releasenote;
# the 8.5.0 install guide, https://www.hiascend.com/document/detail/zh/canncommercial/850/softwareinst/instg/instg_0008.html).
OPS_RENAMED_IN = AscendVersion.parse("8.5.0")
# How a site makes a release known without a new ascend-env (spec/overlay.py, docs/spec.md).
ADD_RELEASE = ("To add it: a matrix overlay in /etc/ascend-env/matrix.d/*.yaml or "
               "$ASCEND_ENV_MATRIX_D (docs/spec.md, 'Adding a release')")


def _sources(row: CannRow | TorchRow | MindSporeRow) -> str:
    return ", ".join(row.sources)


def check_spec(spec: EnvSpec, matrix: Matrix | None = None) -> list[Problem]:
    """Every incompatibility and doubt in the spec; errors first, then warnings."""
    matrix = matrix or load_matrix()
    problems: list[Problem] = []
    chip = load_chips().get(spec.hardware.chip)
    assert chip is not None, "hardware.chip is validated against chips.yaml names"
    problems += _check_hardware(spec, chip)
    cann = spec.cann.version
    problems += _impossible(spec, matrix)
    cann_row = matrix.cann_row(cann)
    if cann_row is None:
        # Unknown is not wrong: a release newer than this ascend-env, or a site's own build.
        problems.append(Problem(
            path="cann.version", value=cann.raw, severity="warning",
            message=f"is not a CANN release ascend-env knows; its pairings cannot be checked "
                    f"(the nearest known are listed). {ADD_RELEASE}",
            alternatives=matrix.nearest_cann(cann)))
    else:
        if not matrix.cann_known(cann):
            problems.append(Problem(
                path="cann.version", value=cann.raw, severity="warning",
                message=f"is not a build ascend-env knows; the pairings of CANN "
                        f"{cann_row.cann.raw} are used for it. {ADD_RELEASE}",
                alternatives=[cann_row.cann.raw]))
        problems += _check_driver(spec, cann_row, matrix)
        problems += _check_python_for_cann(spec, cann_row)
    problems += _check_driver_known(spec, matrix)
    problems += _check_firmware_known(spec, matrix)
    problems += _check_packages(spec)
    if spec.frameworks.torch is not None:
        problems += _check_torch(spec, matrix)
    if spec.frameworks.mindspore is not None:
        problems += _check_mindspore(spec, matrix)
    problems += check_wheels(spec)  # the real wheels' Pythons (spec/wheels.py)
    return sorted(problems, key=lambda p: p.severity != "error")


def _impossible(spec: EnvSpec, matrix: Matrix) -> list[Problem]:
    """Versions in a vendor form that still cannot be a release: typos, errors."""
    problems = []
    named = {"cann.version": spec.cann.version, "driver.version": spec.driver.version,
             "firmware.version": spec.firmware.version}
    for path, version in named.items():
        reason = impossible(version) if version is not None else None
        if version is None or reason is None:
            continue
        alternatives = (matrix.nearest_cann(version) if path == "cann.version" else
                        matrix.nearest_hdk(version) if path == "driver.version" else [])
        problems.append(Problem(path=path, value=version.raw, message=reason,
                                alternatives=alternatives))
    return problems


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
    row_text = f"CANN {row.cann.raw} -> HDK {row.hdk.raw if row.hdk else 'not confirmed'}"
    if row.conflict is not None:
        row_text += f"; conflict #{row.conflict}"
    row_text += f" ({_sources(row)})"
    refusal = row.refuses_hdk(driver, hdk)
    if refusal is not None:
        # Only a source that says the pair does not work makes an error.
        return [Problem(path="driver.version", value=driver.raw, row=row_text,
                        message=f"driver {driver.raw}: {refusal}",
                        alternatives=_paired_hdks(row) or matrix.nearest_hdk(driver))]
    if row.hdk is None and not row.accepts_hdk(driver, hdk):
        return [Problem(path="driver.version", value=driver.raw, row=row_text,
                        severity="warning",
                        message=f"no source read by ascend-env publishes the HDK of CANN "
                                f"{cann.raw}; on the host, CANN's own compatible_version list "
                                "decides (doctor driver.supports-cann)",
                        alternatives=matrix.nearest_hdk(driver))]
    if row.hdk is None:
        return []
    if release < row.hdk and not row.accepts_hdk(driver, hdk):
        return [Problem(path="driver.version", value=driver.raw, row=row_text,
                        severity="warning",
                        message=f"driver {driver.raw} is older than HDK {row.hdk.raw}, which "
                                f"CANN {cann.raw} was released with; no source says the pair "
                                "fails, and on the host CANN's own compatible_version list "
                                "decides",
                        alternatives=_paired_hdks(row))]
    if row.accepts_hdk(driver, hdk):
        return []
    return [Problem(path="driver.version", value=driver.raw, row=row_text, severity="warning",
                    message=f"driver {driver.raw} is not a sourced pairing for CANN {cann.raw}; "
                            f"it was released with HDK {row.hdk.raw}",
                    alternatives=_paired_hdks(row))]


def _check_driver_known(spec: EnvSpec, matrix: Matrix) -> list[Problem]:
    driver = spec.driver.version
    if matrix.hdk_release(driver) is not None or any(
            same_release(driver.raw, known.raw, matrix.hdk()) for known in matrix.known_hdk()):
        return []
    return [Problem(path="driver.version", value=driver.raw, severity="warning",
                    message=f"is not an HDK release ascend-env knows (the nearest known are "
                            f"listed). {ADD_RELEASE}",
                    alternatives=matrix.nearest_hdk(driver))]


def _check_firmware_known(spec: EnvSpec, matrix: Matrix) -> list[Problem]:
    firmware = spec.firmware.version
    if firmware is None:
        return []
    shipped = {f.raw: r.release for r in matrix.hdk_releases for f in r.firmware}
    hdk = next((release for raw, release in shipped.items()
                if same_release(raw, firmware.raw)), None)
    if hdk is None:
        known = [parse(raw) for raw in shipped]
        return [Problem(path="firmware.version", value=firmware.raw, severity="warning",
                        message="is not a firmware ascend-env knows an HDK for (the nearest "
                                f"known are listed). {ADD_RELEASE}",
                        alternatives=[v.raw for v in nearest(firmware, known)])]
    if same_release(hdk.raw, spec.driver.version.raw, matrix.hdk()):
        return []
    return [Problem(path="firmware.version", value=firmware.raw, severity="warning",
                    message=f"firmware {firmware.raw} ships with HDK {hdk.raw}, the spec's "
                            f"driver is HDK {spec.driver.version.raw}; the driver's "
                            "compatible_version_fw range decides on the host (firmware.compatible)",
                    alternatives=[f.raw for r in matrix.hdk_releases for f in r.firmware
                                  if same_release(r.release.raw, spec.driver.version.raw,
                                                  matrix.hdk())] or [firmware.raw])]


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
                                message="lists a package twice", severity="warning",
                                alternatives=list(dict.fromkeys(packages))))
    return problems


def _unpaired(path: str, name: str, version: str, cann: AscendVersion, *,
              elsewhere: list[tuple[str, TorchRow | MindSporeRow]], choices: list[str]
              ) -> Problem:
    """A framework release the sources pair with other CANN lines only: an error, because its
    table (Ascend/pytorch COMPATIBILITY.md, MindSpore's install pages) pins each build to one
    CANN."""
    where = "; ".join(f"{name} {release} <-> CANN {row.cann.raw} ({_sources(row)})"
                      for release, row in elsewhere)
    return Problem(path=path, value=version, row=where or None,
                   message=f"{name} {version} does not pair with CANN {cann.raw}: its sources "
                           f"build it for another CANN line; for CANN {cann.raw} use one of "
                           "the listed", alternatives=choices)


def _framework_doubt(matrix: Matrix, framework: Literal["torch_npu", "mindspore"], *,
                     path: str, name: str, version: str, cann: AscendVersion,
                     elsewhere: list[tuple[str, TorchRow | MindSporeRow]], choices: list[str]
                     ) -> Problem:
    """No source pairs this build with this CANN: an error only where its sources pin it to
    another CANN line; a warning for the same line, an unpublished pairing or an unknown build."""
    fallback = choices or matrix.nearest_framework(framework, version)
    same_line = [(v, r) for v, r in elsewhere if r.cann.line == cann.line]
    if elsewhere and not same_line:
        return _unpaired(path, name, version, cann, elsewhere=elsewhere, choices=fallback)
    if same_line:
        built = ", ".join(sorted({r.cann.raw for _, r in same_line}))
        return Problem(path=path, value=version, severity="warning",
                       row="; ".join(f"{name} {v} <-> CANN {r.cann.raw} ({_sources(r)})"
                                     for v, r in same_line),
                       message=f"{name} {version} is built for CANN {built}, a release of the "
                               f"same {cann.line} line; no source pairs it with {cann.raw}",
                       alternatives=fallback)
    unpaired = matrix.unpaired_release(framework, version)
    if unpaired is not None:
        return Problem(path=path, value=version, severity="warning",
                       row=f"{name} {unpaired.version} ({_sources_of(unpaired.sources)})",
                       message=f"{name} {version} is a public release whose CANN pairing no "
                               "source publishes", alternatives=fallback)
    return Problem(path=path, value=version, severity="warning",
                   message=f"{name} {version} is not a build ascend-env knows; its CANN cannot "
                           f"be checked (the nearest known are listed). {ADD_RELEASE}",
                   alternatives=matrix.nearest_framework(framework, version))


def _sources_of(labels: list[str]) -> str:
    return ", ".join(labels)


def _alternative(matrix: Matrix, row: TorchRow | MindSporeRow, path: str, value: str, *,
                 row_text: str, choices: list[str]) -> Problem:
    """A pairing only the source ascend-env does not follow makes: allowed, with a warning."""
    conflict = matrix.conflict(row.conflict) if row.conflict is not None else None
    return Problem(path=path, value=value, severity="warning", row=row_text,
                   message="is paired with this CANN only by " + _sources(row)
                   + (f" (conflict #{conflict.id}: {conflict.topic})" if conflict else ""),
                   alternatives=choices or [value])


def _check_torch(spec: EnvSpec, matrix: Matrix) -> list[Problem]:
    torch = spec.frameworks.torch
    assert torch is not None
    cann = spec.cann.version
    for_cann = matrix.torch_rows(cann)
    images = matrix.image_pairings(cann.release())
    choices = [f"{r.torch_npu} (torch {r.torch})" for r in for_cann if r.status == "followed"]
    listed = [r.torch_npu for r in for_cann]
    for shipped in images:  # builds only an official image pairs with this CANN
        if shipped.torch_npu and not any(same_release(shipped.torch_npu, v) for v in listed):
            listed.append(shipped.torch_npu)
            choices.append(f"{shipped.torch_npu} (torch {shipped.torch}; {shipped.image} "
                           f"{shipped.tag})")
    row = next((r for r in for_cann if same_release(r.torch_npu, torch.torch_npu)), None)
    if row is None:
        image = next((i for i in images if i.torch_npu
                      and same_release(i.torch_npu, torch.torch_npu)), None)
        elsewhere = [r for r in matrix.torch if same_release(r.torch_npu, torch.torch_npu)]
        if image is not None:  # an official image ships this pair: the vendor's own word
            return _image_pair(matrix, image, torch.version, cann, elsewhere)
        return [_framework_doubt(matrix, "torch_npu", path="frameworks.torch.torch_npu",
                                 name="torch_npu", version=torch.torch_npu, cann=cann,
                                 elsewhere=[(r.torch_npu, r) for r in elsewhere],
                                 choices=choices)]
    problems = []
    row_text = f"torch_npu {row.torch_npu} <-> torch {row.torch} <-> CANN {row.cann.raw} " \
               f"({_sources(row)})"
    if not same_release(row.torch, torch.version):
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


def _image_pair(matrix: Matrix, image: ImagePairing, torch: str, cann: AscendVersion,
                elsewhere: list[TorchRow]) -> list[Problem]:
    """An official image pairs the build with this CANN: accepted; a table that builds it for
    another CANN is named beside it in a warning (the image, the vendor's own word, wins)."""
    where = f"{image.image} {image.tag} ({image.url})"
    if image.torch and not same_release(image.torch, torch):
        return [Problem(path="frameworks.torch.version", value=torch, row=where,
                        message=f"torch_npu {image.torch_npu} extends torch {image.torch}, "
                                f"not torch {torch}", alternatives=[image.torch])]
    # The table builds it for another release of the same line: no disagreement, the image
    # only confirms what the table leaves open. Another line is what the table would refuse.
    elsewhere = [r for r in elsewhere if r.cann.line != cann.line]
    if not elsewhere:
        return []
    table = "; ".join(f"torch_npu {r.torch_npu} <-> CANN {r.cann.raw} ({matrix.cite(r.sources)})"
                      for r in elsewhere)
    return [Problem(path="frameworks.torch.torch_npu", value=image.torch_npu,
                    severity="warning", row=f"{where}; {table}",
                    message=f"the sources disagree: the official image {image.image} "
                            f"{image.tag} ships torch_npu {image.torch_npu} with CANN "
                            f"{cann.raw}, the version table builds it for CANN "
                            f"{', '.join(sorted({r.cann.raw for r in elsewhere}))}; the image "
                            "is followed", alternatives=[image.torch_npu or ""])]


def _check_mindspore(spec: EnvSpec, matrix: Matrix) -> list[Problem]:
    mindspore = spec.frameworks.mindspore
    assert mindspore is not None
    cann = spec.cann.version
    for_cann = matrix.mindspore_rows(cann)
    choices = [r.mindspore for r in for_cann if r.status == "followed"]
    row = next((r for r in for_cann if same_release(r.mindspore, mindspore.version)), None)
    if row is None:
        if matrix.image_pairings(cann.release(), mindspore=mindspore.version):
            return []
        elsewhere = [r for r in matrix.mindspore if same_release(r.mindspore, mindspore.version)]
        return [_framework_doubt(matrix, "mindspore", path="frameworks.mindspore.version",
                                 name="MindSpore", version=mindspore.version, cann=cann,
                                 elsewhere=[(r.mindspore, r) for r in elsewhere],
                                 choices=choices)]
    problems = []
    row_text = f"MindSpore {row.mindspore} <-> CANN {row.cann.raw} ({_sources(row)})"
    if row.status == "alternative":
        problems.append(_alternative(matrix, row, "frameworks.mindspore.version",
                                     mindspore.version, row_text=row_text, choices=choices))
    python = spec.python.version
    if row.python is None:
        problems.append(Problem(path="python.version", value=python, severity="warning",
                                message=f"no source confirms which Pythons MindSpore "
                                        f"{row.mindspore} supports", row=row_text,
                                alternatives=[python]))
    elif python not in row.python:
        problems.append(Problem(path="python.version", value=python, row=row_text,
                                message=f"MindSpore {row.mindspore} supports Python {row.python}",
                                alternatives=row.python.minors()))
    return problems
