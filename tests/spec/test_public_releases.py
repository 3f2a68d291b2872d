"""`spec validate` on every public release of 2024-2026 the matrix knows: exit 0 (warnings
allowed); a made-up version warns with alternatives, and only impossible versions are errors.

The cases come from the data (matrix.yaml), so a release added there is tested here too; each
spec pairs the release with what its own row pairs it with, where the row says.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from ascend_env.core.versions import AscendVersion, parse, same_release
from ascend_env.spec.matrix import PythonRange, load_matrix
from ascend_env.spec.validate import validate_file
from tests.cli_invoke import invoke

MATRIX = load_matrix()
FIRST_2024_CANN = parse("8.0.RC1")  # CANN 8.0.RC1, April 2024
FIRST_2024_HDK = parse("24.1.RC1")  # its HDK
PYTHONS = ["3.11", "3.10", "3.9", "3.12", "3.8", "3.13", "3.14"]


def _python(*ranges: PythonRange | None) -> str:
    """A Python every given range admits (the 910b profile's 3.11 first)."""
    for python in PYTHONS:
        if all(r is None or python in r for r in ranges):
            return python
    raise AssertionError(f"no Python fits {ranges}")


def _driver_for(cann: AscendVersion) -> str:
    row = MATRIX.cann_row(cann)
    if row is not None and row.hdk is not None:
        return row.hdk.raw
    if row is not None and row.hdk_compatible:
        return f"{row.hdk_compatible[-1]}.0"
    return "25.5.0"


def _spec(*, cann: str, driver: str | None = None, python: str = "3.11",
          torch: dict[str, str] | None = None, mindspore: str | None = None,
          firmware: str | None = None) -> dict[str, Any]:
    release = parse(cann).release()
    return {"extends": "910b", "name": "public-release",
            "firmware": {"version": firmware},
            "cann": {"version": cann,
                     "packages": ["toolkit", "ops" if release >= parse("8.5.0") else "kernels"]},
            "driver": {"version": driver or _driver_for(parse(cann))},
            "python": {"version": python},
            "frameworks": {"torch": torch, "mindspore": {"version": mindspore} if mindspore
                           else None}}


def _cases() -> list[tuple[str, dict[str, Any]]]:
    cases: list[tuple[str, dict[str, Any]]] = []
    for row in MATRIX.cann:
        if row.cann >= FIRST_2024_CANN:
            cases.append((f"CANN {row.cann.raw}", _spec(cann=row.cann.raw,
                                                         python=_python(row.python))))
    for build in MATRIX.cann_builds:
        if build.version.release() >= FIRST_2024_CANN:
            its_row = MATRIX.cann_row(build.version)
            cases.append((f"CANN build {build.version.raw}",
                          _spec(cann=build.version.raw,
                                python=_python(its_row.python if its_row else None))))
    for hdk in MATRIX.hdk_releases:
        if hdk.release >= FIRST_2024_HDK:
            # With a CANN that pairs it where one does, else 8.3.RC2 (whose HDK no source names).
            cann = next((row.cann.raw for row in MATRIX.cann
                         if row.hdk is not None and row.accepts_hdk(hdk.release, MATRIX.hdk())),
                        "8.3.RC2")
            cases.append((f"HDK {hdk.release.raw}", _spec(cann=cann, driver=hdk.release.raw)))
    for hdk in MATRIX.hdk_releases:
        for firmware in hdk.firmware:  # each firmware with its own HDK's driver
            cann = next((row.cann.raw for row in MATRIX.cann
                         if row.hdk is not None and row.accepts_hdk(hdk.release, MATRIX.hdk())),
                        "8.3.RC2")
            cases.append((f"firmware {firmware.raw} (HDK {hdk.release.raw})",
                          _spec(cann=cann, driver=hdk.release.raw, firmware=firmware.raw)))
    for torch_row in MATRIX.torch:
        if torch_row.cann >= FIRST_2024_CANN:
            cann_row = MATRIX.cann_row(torch_row.cann)
            python = _python(torch_row.python, torch_row.wheels,
                             cann_row.python if cann_row else None)
            cases.append((f"torch_npu {torch_row.torch_npu} on CANN {torch_row.cann.raw}",
                          _spec(cann=torch_row.cann.raw, python=python,
                                torch={"version": torch_row.torch,
                                       "torch_npu": torch_row.torch_npu})))
    for image in MATRIX.images:
        if image.torch_npu and image.torch:
            cases.append((f"{image.image} {image.tag}: torch_npu {image.torch_npu} on CANN "
                          f"{image.cann.raw}",
                          _spec(cann=image.cann.raw, python=image.python or "3.11",
                                torch={"version": image.torch, "torch_npu": image.torch_npu})))
    for unpaired in MATRIX.unpaired:
        if unpaired.framework == "torch_npu" and unpaired.torch:
            # On the newest CANN with a build of the same torch (a site's likeliest choice).
            cann = max((r.cann for r in MATRIX.torch if r.torch == unpaired.torch),
                       default=parse("9.1.0")).raw
            cases.append((f"torch_npu {unpaired.version} (pairing unpublished)",
                          _spec(cann=cann, python="3.11",
                                torch={"version": unpaired.torch,
                                       "torch_npu": unpaired.version})))
        elif unpaired.framework == "mindspore":
            cases.append((f"MindSpore {unpaired.version} (pairing unpublished)",
                          _spec(cann="9.0.0", mindspore=unpaired.version)))
    for ms_row in MATRIX.mindspore:
        if ms_row.cann >= FIRST_2024_CANN:
            cann_row = MATRIX.cann_row(ms_row.cann)
            cases.append((f"MindSpore {ms_row.mindspore} on CANN {ms_row.cann.raw}",
                          _spec(cann=ms_row.cann.raw, mindspore=ms_row.mindspore,
                                python=_python(ms_row.python,
                                               cann_row.python if cann_row else None))))
    return cases


CASES = _cases()


def test_the_cases_cover_every_kind_of_release() -> None:
    kinds = {name.split(" ")[0] for name, _ in CASES}
    assert {"CANN", "HDK", "torch_npu", "MindSpore", "vllm-ascend"} <= kinds
    assert len(CASES) > 150
    names = " ".join(name for name, _ in CASES)
    for release in ("CANN 8.3.RC2", "CANN 8.2.RC2", "HDK 24.1.0.3",
                    "torch_npu 2.5.1.dev20250320", "2.5.1.post1.dev20250619",
                    "torch_npu 2.14.0", "MindSpore 2.10.0", "CANN build 9.1.0-beta.3"):
        assert release in names, release


@pytest.mark.parametrize(("name", "document"), CASES, ids=[c[0] for c in CASES])
def test_spec_with_a_public_release_is_valid(name: str, document: dict[str, Any],
                                             tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(document))
    result = validate_file(path)
    errors = [p.render() for p in result.problems if p.severity == "error"]
    assert result.valid and not errors, f"{name}: " + "\n".join(errors)
    versions = ("cann.", "driver.", "firmware.", "frameworks.", "python.")
    empty = [p.render() for p in result.problems
             if p.path.startswith(versions) and not p.alternatives]
    assert not empty, f"{name}: a problem without alternatives: {empty}"


@pytest.mark.parametrize("version", ["8.3.RC2", "8.2.RC2", "9.1.0-beta.3", "8.3.RC1.alpha002"])
def test_spec_validate_command_exits_0_on_public_cann_releases(version: str,
                                                                tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(_spec(cann=version)))
    result = invoke("spec", "validate", str(path), "--json")
    assert result.code == 0, result.out + result.err


# -- made-up and impossible versions ---------------------------------------------------------------

MADE_UP = [
    ("cann.version", {"cann": "8.4.RC7"}),
    ("cann.version", {"cann": "10.3.0"}),
    ("cann.version", {"cann": "8.3.RC1.alpha009"}),
    ("driver.version", {"cann": "8.5.0", "driver": "25.4.0"}),
    ("frameworks.torch.torch_npu", {"cann": "8.5.0",
                                    "torch": {"version": "2.9.0", "torch_npu": "2.9.0.post77"}}),
    ("frameworks.torch.torch_npu",
     {"cann": "8.5.0", "torch": {"version": "2.9.0", "torch_npu": "2.9.0.dev20991231"}}),
    ("frameworks.mindspore.version", {"cann": "8.5.0", "mindspore": "2.7.9"}),
    ("firmware.version", {"cann": "8.1.RC1", "driver": "25.0.RC1", "firmware": "7.7.0.9.231"}),
]


@pytest.mark.parametrize(("path", "fields"), MADE_UP, ids=[str(f) for _, f in MADE_UP])
def test_a_made_up_version_warns_with_alternatives(path: str, fields: dict[str, Any],
                                                   tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(_spec(**fields)))
    result = invoke("spec", "validate", str(spec), "--json")
    assert result.code == 0, result.out + result.err
    found = [p for p in json.loads(result.out)["problems"] if p["path"] == path]
    assert found, result.out
    assert all(p["severity"] == "warning" for p in found), found
    assert all(p["alternatives"] for p in found), found  # never an empty list


@pytest.mark.parametrize("version", ["8.5", "8.5.0.0.0.0x", "eight", "8.RC1", "8.3.RC0",
                                     "8.3.RC1.alpha000", "9.0.0-beta.0"])
def test_an_impossible_version_is_an_error(version: str, tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(_spec(cann="8.5.0") | {"cann": {"version": version}}))
    result = invoke("spec", "validate", str(spec), "--json")
    assert result.code == 1, result.out + result.err
    assert any(p["path"] == "cann.version" and p["severity"] == "error"
               for p in json.loads(result.out)["problems"])


PYPI = Path(__file__).resolve().parent / "pypi_releases"


@pytest.mark.parametrize("framework", ["torch_npu", "mindspore"])
def test_every_release_on_pypi_is_known(framework: str) -> None:
    """Each release PyPI lists (tests/spec/pypi_releases, with its SOURCE) is a row, an image's
    build or an `unpaired` release of the matrix: none is "unknown"."""
    line = (PYPI / f"{framework.replace('_', '-')}.txt").read_text().strip()
    assert line.startswith("Available versions: ")
    released = line.removeprefix("Available versions: ").split(", ")
    assert len(released) >= 7
    known = MATRIX.framework_releases(framework)  # type: ignore[arg-type]
    missing = [v for v in released if not any(same_release(v, k) for k in known)]
    assert not missing, missing
