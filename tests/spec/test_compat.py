"""Cross-validation against the real tables: incompatible mixes are rejected by name."""

from __future__ import annotations

from typing import Any

import pytest

from ascend_env.core.errors import Problem
from ascend_env.spec.compat import check_spec
from ascend_env.spec.envspec import build_spec, profile_names


def spec_from(**sections: Any) -> list[Problem]:
    """Problems of the 910b profile with some sections replaced (frameworks reset)."""
    frameworks = {"torch": None, "mindspore": None, **sections.pop("frameworks", {})}
    document: dict[str, Any] = {"extends": "910b", "frameworks": frameworks, **sections}
    return check_spec(build_spec(document, "test"))


def errors(problems: list[Problem]) -> list[Problem]:
    return [p for p in problems if p.severity == "error"]


def warnings(problems: list[Problem]) -> list[Problem]:
    return [p for p in problems if p.severity == "warning"]


def text(problems: list[Problem]) -> str:
    return "\n".join(p.render() for p in problems)


# Each case: spec sections, the key path that must be blamed, and the two versions the
# message must name (the rows of ascend_env/data/matrix.yaml and their sources).
INCOMPATIBLE: list[tuple[str, dict[str, Any], str, tuple[str, str]]] = [
    ("torch_npu of CANN 8.0.0 on CANN 8.5.0",
     {"frameworks": {"torch": {"version": "2.1.0", "torch_npu": "2.1.0.post10"}}},
     "frameworks.torch.torch_npu", ("2.1.0.post10", "8.5.0")),
    ("torch_npu 2.9.0 on torch 2.8.0",
     {"frameworks": {"torch": {"version": "2.8.0", "torch_npu": "2.9.0"}}},
     "frameworks.torch.version", ("2.9.0", "2.8.0")),
    ("torch_npu 2.9.0 on Python 3.9",
     {"python": {"version": "3.9"}, "frameworks": {"torch": {"version": "2.9.0",
                                                            "torch_npu": "2.9.0"}}},
     "python.version", ("2.9.0", "3.9")),
    # torch_npu 2.5.1 is built for CANN 8.1.RC1 (PT-COMPAT); no source pairs it with the 8.5
    # line. (On 8.0.0 the vllm-ascend v0.8.4rc2 image ships it: a warning, test below.)
    ("torch_npu 2.5.1 on CANN 8.5.0",
     {"cann": {"version": "8.5.0", "packages": ["toolkit", "ops"]},
      "frameworks": {"torch": {"version": "2.5.1", "torch_npu": "2.5.1"}}},
     "frameworks.torch.torch_npu", ("2.5.1", "8.5.0")),
    ("torch_npu 2.2.0 on Python 3.11",
     {"cann": {"version": "8.0.RC1"}, "driver": {"version": "24.1.RC1"},
      "python": {"version": "3.11"},
      "frameworks": {"torch": {"version": "2.2.0", "torch_npu": "2.2.0"}}},
     "python.version", ("2.2.0", "3.11")),
    ("MindSpore 2.7.2 on CANN 8.3.RC1",
     {"cann": {"version": "8.3.RC1"}, "driver": {"version": "25.3.RC1"},
      "frameworks": {"mindspore": {"version": "2.7.2"}}},
     "frameworks.mindspore.version", ("2.7.2", "8.3.RC1")),
    # MindSpore 2.3.0 is documented with CANN 8.0.RC2 (the 8.0 line); 8.1.RC1 is another line.
    ("MindSpore 2.3.0 on CANN 8.1.RC1",
     {"cann": {"version": "8.1.RC1"}, "driver": {"version": "25.0.RC1"},
      "frameworks": {"mindspore": {"version": "2.3.0"}}},
     "frameworks.mindspore.version", ("2.3.0", "8.1.RC1")),
    ("MindSpore 2.4.0 on Python 3.8",
     {"cann": {"version": "8.0.RC3"}, "driver": {"version": "24.1.RC3"},
      "python": {"version": "3.8"}, "frameworks": {"mindspore": {"version": "2.4.0"}}},
     "python.version", ("2.4.0", "3.8")),
    ("driver 24.1.0 under CANN 8.5.0",
     {"driver": {"version": "24.1.0"}},
     "driver.version", ("24.1.0", "8.5.0")),
    ("driver 25.0.RC1 under CANN 9.1.0",
     {"cann": {"version": "9.1.0"}, "driver": {"version": "25.0.RC1"}},
     "driver.version", ("25.0.RC1", "9.1.0")),
    ("driver 23.0.RC3 under CANN 8.1.RC1",
     {"cann": {"version": "8.1.RC1"}, "driver": {"version": "23.0.RC3"}},
     "driver.version", ("23.0.RC3", "8.1.RC1")),
    ("kernels package name on CANN 8.5.0",
     {"cann": {"version": "8.5.0", "packages": ["toolkit", "kernels"]}},
     "cann.packages", ("kernels", "8.5.0")),
    ("nnae on CANN 8.5.0",
     {"cann": {"version": "8.5.0", "packages": ["nnae"]}},
     "cann.packages", ("nnae", "8.5.0")),
    ("3 devices on an Atlas A2 host",
     {"hardware": {"devices": 3}},
     "hardware.devices", ("3", "910B")),
]


@pytest.mark.parametrize(("sections", "path", "names"),
                         [case[1:] for case in INCOMPATIBLE], ids=[c[0] for c in INCOMPATIBLE])
def test_incompatible_mix_is_rejected_naming_both(sections: dict[str, Any], path: str,
                                                  names: tuple[str, str]) -> None:
    found = errors(spec_from(**sections))
    blamed = [p for p in found if p.path == path]
    assert blamed, f"expected an error at {path}, got:\n{text(found)}"
    message = text(blamed)
    for name in names:
        assert name in message, f"{name!r} missing from: {message}"


def test_rejected_torch_npu_lists_the_compatible_ones() -> None:
    found = errors(spec_from(frameworks={"torch": {"version": "2.1.0",
                                                   "torch_npu": "2.1.0.post10"}}))
    alternatives = next(p.alternatives for p in found if p.path == "frameworks.torch.torch_npu")
    assert any(a.startswith("2.9.0") for a in alternatives)
    assert any(a.startswith("2.6.0.post5") for a in alternatives)


COMPATIBLE: list[tuple[str, dict[str, Any]]] = [
    ("torch_npu 2.1.0.post17 on CANN 8.3.RC1",
     {"cann": {"version": "8.3.RC1"}, "driver": {"version": "25.3.RC1"},
      "python": {"version": "3.10"},
      "frameworks": {"torch": {"version": "2.1.0", "torch_npu": "2.1.0.post17"}}}),
    ("MindSpore 2.4.0 on CANN 8.0.RC3",
     {"cann": {"version": "8.0.RC3"}, "driver": {"version": "24.1.RC3"},
      "python": {"version": "3.10"}, "frameworks": {"mindspore": {"version": "2.4.0"}}}),
    ("torch_npu 2.7.1.post4 on CANN 9.0.0",
     {"cann": {"version": "9.0.0"}, "driver": {"version": "26.0.RC1"},
      "frameworks": {"torch": {"version": "2.7.1", "torch_npu": "2.7.1.post4"}}}),
    ("community build of 8.0.RC1 with torch_npu 2.1.0.post4",
     {"cann": {"version": "8.0.RC1.beta1"}, "driver": {"version": "24.1.RC1"},
      "python": {"version": "3.10"},
      "frameworks": {"torch": {"version": "2.1.0", "torch_npu": "2.1.0.post4"}}}),
    ("x86_64 torch local version", {"frameworks": {"torch": {"version": "2.9.0+cpu",
                                                             "torch_npu": "2.9.0"}}}),
]


@pytest.mark.parametrize("sections", [c[1] for c in COMPATIBLE], ids=[c[0] for c in COMPATIBLE])
def test_compatible_mix_is_accepted(sections: dict[str, Any]) -> None:
    found = errors(spec_from(**sections))
    assert not found, text(found)


@pytest.mark.parametrize("name", profile_names())
def test_every_profile_is_compatible(name: str) -> None:
    found = errors(check_spec(build_spec({"extends": name}, name)))
    assert not found, text(found)


def test_a_pairing_only_one_source_makes_is_a_warning() -> None:
    # MindSpore 2.6.0: MS-DOCS pairs it with 8.1.RC1, ascend-deployer with 8.2.RC1 (conflict #1).
    found = spec_from(cann={"version": "8.2.RC1"}, driver={"version": "25.2.0"},
                      python={"version": "3.10"}, frameworks={"mindspore": {"version": "2.6.0"}})
    assert not errors(found), text(found)
    assert any("conflict #1" in p.message for p in warnings(found)), text(found)


def test_driver_inside_a_compatible_line_is_accepted() -> None:
    # CANN 8.5.0 release notes: HDK 25.0.X-25.5.X work (conflict #11 follows them).
    assert not errors(spec_from(driver={"version": "25.2.0"}))


def test_unknown_cann_warns_naming_the_nearest_releases_and_how_to_add_one() -> None:
    # Unknown is not wrong: no error, a warning with the releases around it (never empty).
    problems = spec_from(cann={"version": "8.4.0"})
    assert not [p for p in errors(problems) if p.path == "cann.version"]
    found = next(p for p in problems if p.path == "cann.version")
    assert found.severity == "warning"
    assert found.alternatives[:2] == ["8.3.RC2", "8.3.RC1"] and "8.5.0" in found.alternatives
    assert "matrix.d" in found.message


def test_same_line_framework_build_warns_and_other_line_fails() -> None:
    # MindSpore 2.3.0 is documented with 8.0.RC2: 8.0.RC3 is the same line (warning, naming
    # the documented CANN), 8.1.RC1 is not (error, above).
    problems = spec_from(cann={"version": "8.0.RC3"}, driver={"version": "24.1.RC3"},
                         frameworks={"mindspore": {"version": "2.3.0"}})
    found = [p for p in problems if p.path == "frameworks.mindspore.version"]
    assert [p.severity for p in found] == ["warning"] and "8.0.RC2" in found[0].message


def test_official_image_pairing_wins_over_the_table_with_a_warning_naming_both() -> None:
    # PT-COMPAT builds torch_npu 2.5.1 for CANN 8.1.RC1; vllm-ascend v0.8.4rc2's image ships
    # it on CANN 8.0.0 (FROM quay.io/ascend/cann:8.0.0-910b..., torch-npu==2.5.1).
    problems = spec_from(cann={"version": "8.0.0", "packages": ["toolkit", "ops"]},
                         driver={"version": "24.1.0"}, python={"version": "3.10"},
                         frameworks={"torch": {"version": "2.5.1", "torch_npu": "2.5.1"}})
    assert not errors(problems), text(problems)
    found = next(p for p in problems if p.path == "frameworks.torch.torch_npu")
    assert found.severity == "warning" and "v0.8.4rc2" in (found.row or "")
    assert "8.1.RC1" in found.message and "PT-COMPAT" in (found.row or "")


def test_daily_build_shipped_by_an_image_passes_and_an_unknown_one_warns() -> None:
    base = {"cann": {"version": "8.0.0", "packages": ["toolkit", "ops"]},
            "driver": {"version": "24.1.0"}, "python": {"version": "3.10"}}
    shipped = spec_from(**base, frameworks={"torch": {"version": "2.5.1",
                                                      "torch_npu": "2.5.1.dev20250320"}})
    assert not [p for p in shipped if p.path.startswith("frameworks")], text(shipped)
    unknown = spec_from(**base, frameworks={"torch": {"version": "2.5.1",
                                                      "torch_npu": "2.5.1.dev20250401"}})
    found = next(p for p in unknown if p.path == "frameworks.torch.torch_npu")
    assert found.severity == "warning" and found.alternatives
    assert "2.5.1.dev20250320" in found.alternatives
