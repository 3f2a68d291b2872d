"""Frameworks: torch_npu and MindSpore pair with the installed CANN; the spec's versions."""

from __future__ import annotations

import shlex

import pytest

from ascend_env.core.versions import same_release
from ascend_env.doctor.findings import fail, failure, observe, warn
from ascend_env.facts.model import CannFacts, Facts
from ascend_env.spec.compat import ADD_RELEASE
from ascend_env.spec.envspec import EnvSpec
from ascend_env.spec.matrix import Matrix

pytestmark = [pytest.mark.category("frameworks"), pytest.mark.level(1)]


def _same(a: str, b: str) -> bool:
    # The one identity (`2.9.0+cpu` is torch 2.9.0; `.postN`/`.devN` builds are their own).
    return same_release(a, b)


def _pip(facts: Facts) -> str:
    python = facts.frameworks.python.executable if facts.frameworks.python else None
    return f"{shlex.quote(python or 'python3')} -m pip"  # a host's path, quoted to paste


def test_torch_npu_cann(facts: Facts, cann: CannFacts, matrix: Matrix) -> None:
    """frameworks.torch-npu-cann: the installed torch_npu is built for the installed CANN."""
    torch_npu = facts.frameworks.torch_npu
    if torch_npu is None:
        pytest.skip("torch_npu is not installed in the framework Python")
    if cann.version is None:
        pytest.skip("the CANN version could not be read")
    release = cann.version.release()
    rows = [r for r in matrix.torch if _same(r.torch_npu, torch_npu)]
    images = matrix.image_pairings(release, torch_npu=torch_npu)
    for_cann = [r for r in matrix.torch_rows(cann.version) if r.status == "followed"]
    choices = ", ".join(dict.fromkeys(
        [f"{r.torch_npu} (torch {r.torch})" for r in for_cann]
        + [f"{i.torch_npu} (torch {i.torch})" for i in matrix.image_pairings(release)
           if i.torch_npu])) or ", ".join(matrix.nearest_framework("torch_npu", torch_npu))
    if any(r.cann == release for r in rows):
        observe(f"torch_npu {torch_npu} for CANN {cann.version_raw} "
                f"({', '.join(sorted({s for r in rows if r.cann == release for s in r.sources}))})")
        return
    built_for = ", ".join(sorted({r.cann.raw for r in rows}))
    table = f"{', '.join(sorted({s for r in rows for s in r.sources}))}"
    if images:
        # An official image ships this pair: the vendor's word; a table that disagrees is named.
        image = images[0]
        shipped = f"the official image {image.image} {image.tag} ({image.url})"
        other_lines = sorted({r.cann.raw for r in rows if r.cann.line != release.line})
        if other_lines:  # what the table alone would fail, the image ships: both are named
            built_for = ", ".join(other_lines)
            warn(message=f"the sources disagree: {shipped} ships torch_npu {torch_npu} with "
                         f"CANN {cann.version_raw}, the version table ({table}) builds it for "
                         f"CANN {built_for}; the image is followed",
                 observed=f"torch_npu {torch_npu}, CANN {cann.version_raw}",
                 expected=f"the image and the table agree (for CANN {cann.version_raw}: "
                          f"{choices})",
                 why="the image serves models on this pair; the table is the release plan",
                 manual=f"{_pip(facts)} install torch_npu==<one of: {choices}> to follow the "
                        "table instead")
        observe(f"torch_npu {torch_npu} with CANN {cann.version_raw}: shipped together by "
                f"{shipped}")
        return
    if rows:
        same_line = [r for r in rows if r.cann.line == release.line]
        details = {"observed": f"torch_npu {torch_npu} (CANN {built_for}; {table})",
                   "expected": f"a torch_npu for CANN {cann.version_raw}: {choices}",
                   "why": "a torch_npu of another CANN fails with undefined symbols "
                          "(libtorch_npu.so: undefined symbol) or 'aclsysGetCANNVersion' "
                          "warnings and device init errors",
                   "manual": f"{_pip(facts)} install torch_npu==<one of: {choices}> with its "
                             "torch"}
        if same_line:
            warn(message=f"torch_npu {torch_npu} is built for CANN {built_for}, a release of "
                         f"the same {release.line} line as the installed {cann.version_raw}; no "
                         "source pairs them", **details)
        fail(message=f"torch_npu {torch_npu} is built for CANN {built_for}, CANN "
                     f"{cann.version_raw} is installed", **details)
    unpaired = matrix.unpaired_release("torch_npu", torch_npu)
    warn(message=(f"torch_npu {torch_npu} is a public release whose CANN pairing no source "
                  "publishes" if unpaired else
                  f"torch_npu {torch_npu} is not a build ascend-env knows (nearest: "
                  f"{', '.join(matrix.nearest_framework('torch_npu', torch_npu))}); "
                  + ADD_RELEASE) + "; its CANN cannot be checked",
         observed=f"torch_npu {torch_npu}",
         expected=f"for CANN {cann.version_raw}: {choices}",
         why="an unknown build may target another CANN",
         manual=f"{_pip(facts)} install torch_npu==<one of: {choices}>")


def test_torch_pair(facts: Facts, matrix: Matrix) -> None:
    """frameworks.torch-pair: torch is the release torch_npu extends."""
    torch_npu = facts.frameworks.torch_npu
    if torch_npu is None:
        pytest.skip("torch_npu is not installed in the framework Python")
    named = [r.torch for r in matrix.torch if _same(r.torch_npu, torch_npu)]
    named += [i.torch for i in matrix.image_pairings(torch_npu=torch_npu) if i.torch]
    if not named:
        pytest.skip(f"torch_npu {torch_npu} is not in the matrix")
    wanted = named[0]
    torch = facts.frameworks.torch
    assert torch is not None and _same(torch, wanted), failure(
        message=f"torch_npu {torch_npu} extends torch {wanted}, torch "
                f"{torch or 'is not installed'}" + (" is installed" if torch else ""),
        observed=f"torch {torch}", expected=f"torch {wanted}",
        why="torch_npu is compiled against one torch release; another fails at import",
        manual=f"{_pip(facts)} install torch=={wanted} (the CPU build on x86_64)")
    observe(f"torch {torch} with torch_npu {torch_npu}")


def test_mindspore_cann(facts: Facts, cann: CannFacts, matrix: Matrix) -> None:
    """frameworks.mindspore-cann: the installed MindSpore runs on the installed CANN."""
    mindspore = facts.frameworks.mindspore
    if mindspore is None:
        pytest.skip("MindSpore is not installed in the framework Python")
    if cann.version is None:
        pytest.skip("the CANN version could not be read")
    rows = [r for r in matrix.mindspore if _same(r.mindspore, mindspore)]
    choices = ", ".join(r.mindspore for r in matrix.mindspore_rows(cann.version)) or "none"
    if not rows:
        known = matrix.unpaired_release("mindspore", mindspore)
        warn(message=f"MindSpore {mindspore} is "
                     + ("a public release whose CANN pairing no source publishes" if known else
                        "not a release ascend-env knows (nearest: " + ", ".join(
                            matrix.nearest_framework("mindspore", mindspore)) + "); "
                        + ADD_RELEASE),
             observed=f"mindspore {mindspore}", expected=choices,
             why="its CANN pairing cannot be checked",
             manual=f"{_pip(facts)} install mindspore==<one of: {choices}>")
    release = cann.version.release()
    if not any(r.cann == release for r in rows) and any(
            r.cann.line == release.line for r in rows):
        warn(message=f"MindSpore {mindspore} is documented with CANN "
                     f"{', '.join(sorted({r.cann.raw for r in rows}))}, a release of the same "
                     f"{release.line} line as the installed {cann.version_raw}",
             observed=f"mindspore {mindspore}", expected=f"for CANN {cann.version_raw}: "
             + choices, why="MindSpore checks the CANN version at import and warns on another "
                            "release", manual=f"{_pip(facts)} install mindspore==<one of: "
                                              f"{choices}>")
    assert any(r.cann == release for r in rows), failure(
        message=f"MindSpore {mindspore} is documented with CANN "
                f"{', '.join(sorted({r.cann.raw for r in rows}))}, CANN {cann.version_raw} "
                "is installed",
        observed=f"mindspore {mindspore}", expected=f"for CANN {cann.version_raw}: {choices}",
        why="MindSpore checks the CANN version at import and fails on kernels of another "
            "release",
        manual=f"{_pip(facts)} install mindspore==<one of: {choices}>")
    observe(f"mindspore {mindspore} for CANN {cann.version_raw}")


def test_spec_versions(facts: Facts, with_spec: EnvSpec) -> None:
    """frameworks.versions: the framework versions are the spec's."""
    if facts.frameworks.python is None:
        pytest.skip("the framework Python could not be read")
    wanted: dict[str, str] = {}
    torch = with_spec.frameworks.torch
    if torch is not None:
        wanted |= {"torch": torch.version, "torch_npu": torch.torch_npu}
    if with_spec.frameworks.mindspore is not None:
        wanted["mindspore"] = with_spec.frameworks.mindspore.version
    if not wanted:
        pytest.skip("the spec names no framework")
    found = {"torch": facts.frameworks.torch, "torch_npu": facts.frameworks.torch_npu,
             "mindspore": facts.frameworks.mindspore}
    wrong = {k: found[k] for k, v in wanted.items() if found[k] is None or
             not _same(found[k] or "", v)}
    assert not wrong, failure(
        message="frameworks differ from the spec: " + ", ".join(
            f"{k} {v or 'missing'} (wants {wanted[k]})" for k, v in wrong.items()),
        observed=", ".join(f"{k} {found[k] or 'missing'}" for k in wanted) + " in "
                 + (facts.frameworks.python.executable or "?"),
        expected=", ".join(f"{k} {v}" for k, v in wanted.items()),
        why="the spec pins the framework versions that were paired with its CANN",
        manual="ascend-env install --spec <spec> --components python")
    observe(", ".join(f"{k} {found[k]}" for k in wanted))
