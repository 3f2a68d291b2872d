"""Image scope: a container image carries CANN and the frameworks, never the driver.

These checks run only when `ascend-env image build|validate` evaluates an image (an
ImageContext); the doctor does not collect them for hosts. An image has no driver and no
NPU, so they check what an image can promise: CANN as the spec says, ENV lines equal to
what set_env.sh exports, CANN's libraries resolvable without the driver's, frameworks that
load as far as they can without a device, and nothing left behind that must not ship
(installers, driver files).
"""

from __future__ import annotations

import pytest

from ascend_env.core.versions import try_parse
from ascend_env.doctor.findings import failure, observe
from ascend_env.doctor.suite import DoctorPlugin, Target
from ascend_env.facts.model import CannFacts, Facts
from ascend_env.image.inspection import DRIVER_SONAMES, ImageContext, ImageScope
from ascend_env.spec.cann_layout import NEW_LAYOUT
from ascend_env.spec.envspec import EnvSpec

pytestmark = [pytest.mark.category("image"), pytest.mark.level(1), pytest.mark.scope("image")]

CANN_LIBS = ("libascendcl.so", "libhccl.so", "libge_runner.so", "libgraph.so",
             "libacl_op_compiler.so")
REBUILD = "ascend-env image build --spec <spec> (re-render; do not edit the Containerfile)"


@pytest.fixture
def scope(request: pytest.FixtureRequest, target: Target) -> ImageScope:
    """The image under check (the doctor parametrises by target); skips on hosts."""
    del target
    for plugin in request.config.pluginmanager.get_plugins():
        if isinstance(plugin, DoctorPlugin) and isinstance(plugin.context, ImageContext) \
                and plugin.context.scope is not None:
            return plugin.context.scope
    pytest.skip("image scope only (ascend-env image build or image validate)")


@pytest.fixture
def image_cann(facts: Facts, scope: ImageScope) -> CannFacts:
    del scope
    if facts.cann is None:
        pytest.skip("CANN is not installed in the image (see image.cann)")
    return facts.cann


def test_cann(facts: Facts, scope: ImageScope, spec: EnvSpec | None) -> None:
    """image.cann: the image holds the CANN toolkit, the spec's release, in its era's layout."""
    cann = facts.cann
    assert cann is not None, failure(
        message=f"{scope.image} holds no CANN toolkit",
        observed=f"no toolkit with a version record under {scope.facts.install_path}",
        expected="the CANN toolkit installed by the image's cann stage",
        why="the image exists to carry CANN; the host provides only the driver",
        manual=REBUILD)
    if spec is not None:
        wanted = spec.cann.version
        assert cann.version is not None and cann.version == wanted, failure(
            message=f"the image holds CANN {cann.version_raw}, the spec wants {wanted.raw}",
            observed=f"CANN {cann.version_raw} in {cann.home}",
            expected=f"CANN {wanted.raw}", why="torch_npu and MindSpore are built against "
            "one CANN release", manual=REBUILD)
        layout = "new" if wanted.release() >= NEW_LAYOUT else "old"
        assert cann.layout == layout, failure(
            message=f"CANN {wanted.raw} is in the {cann.layout} layout, its era uses the "
                    f"{layout} one",
            observed=f"{cann.home} ({cann.layout} layout)",
            expected="cann-<version>/ with cann -> cann-<version>" if layout == "new"
            else "ascend-toolkit/<version> with ascend-toolkit/latest",
            why="set_env.sh, the ENV lines and every tool expect the era's paths",
            manual=REBUILD)
    observe(f"CANN {cann.version_raw} ({cann.layout} layout) in {cann.home}",
            spec.cann.version.raw if spec else None)


def test_cann_packages(image_cann: CannFacts, spec: EnvSpec | None) -> None:
    """image.cann-packages: the operator package and NNAL, where wanted, are the toolkit's."""
    wanted = set(spec.cann.packages) if spec else set(image_cann.packages)
    problems = []
    for kind in ("ops", "nnal"):
        aliases = ("ops", "kernels") if kind == "ops" else ("nnal",)
        if not wanted & set(aliases):
            continue
        package = next((image_cann.packages[a] for a in aliases if a in image_cann.packages),
                       None)
        if package is None:
            problems.append(f"{kind} is not installed")
        elif try_parse(package.version or "") != try_parse(image_cann.version_raw or "?"):
            problems.append(f"{package.name} {package.version} differs from the toolkit "
                            f"{image_cann.version_raw}")
    assert not problems, failure(
        message="; ".join(problems), observed="; ".join(problems),
        expected=f"toolkit, {', '.join(sorted(wanted - {'toolkit'}))} of CANN "
                 f"{image_cann.version_raw}",
        why="operators or ATB of another release fail to load or give wrong results",
        manual=REBUILD)
    observe(", ".join(f"{p.name} {p.version}" for p in image_cann.packages.values()))


def test_env(scope: ImageScope, image_cann: CannFacts) -> None:
    """image.env: the image's ENV carries everything CANN's set_env.sh exports."""
    reference = scope.facts.set_env
    assert reference.scripts and not reference.error, failure(
        message="set_env.sh could not be sourced in the image" + (
            f": {reference.error}" if reference.error else " (no script found)"),
        observed=reference.error or f"no set_env.sh under {image_cann.install_path}",
        expected=image_cann.set_env or "set_env.sh beside the toolkit",
        why="the reference for the ENV lines is what the vendor's script exports",
        manual=REBUILD)
    differences = scope.facts.env_differences()
    assert not differences, failure(
        message=f"the image's environment differs from set_env.sh: {differences[0]}"
                + (f" (and {len(differences) - 1} more)" if len(differences) > 1 else ""),
        observed="; ".join(differences),
        expected=f"every variable exported by {', '.join(reference.scripts)}",
        why="jobs do not source set_env.sh: a missing variable is 'ASCEND_OPP_PATH "
            "environment variable is not set' or 'libhccl.so: cannot open shared object file'",
        manual=REBUILD)
    observe(f"{len(reference.exported)} variables as {', '.join(reference.scripts)} export them")


def test_cann_libraries(facts: Facts, scope: ImageScope, image_cann: CannFacts,
                        spec: EnvSpec | None) -> None:
    """image.cann-libraries: CANN's libraries resolve in the image, without the driver's."""
    wanted = list(CANN_LIBS)
    if (spec and "nnal" in spec.cann.packages) or "nnal" in image_cann.packages:
        wanted.append("libatb.so")
    missing = [s for s in wanted if s not in facts.libraries
               or not facts.libraries[s].resolvable]
    assert not missing, failure(
        message=", ".join(missing) + " do(es) not resolve in the image",
        observed="; ".join(f"{s}: on disk at {facts.libraries[s].on_disk or 'nowhere'}"
                           if s in facts.libraries else f"{s}: not found" for s in missing),
        expected=f"{image_cann.home}/lib64 (and NNAL's lib) on the image's LD_LIBRARY_PATH",
        why="torch_npu needs them at import: 'libhccl.so: cannot open shared object file'",
        manual=REBUILD)
    del scope
    observe(f"{len(wanted)} CANN libraries resolve through the image's LD_LIBRARY_PATH")


def test_no_driver(scope: ImageScope) -> None:
    """image.no-driver: no part of an NPU driver is baked into the image."""
    found = scope.facts.walk.driver
    assert not found, failure(
        message=f"driver files are baked into the image: {', '.join(found[:5])}",
        observed="; ".join(found[:20]),
        expected="no driver, npu-smi, dcmi or ascend_install.info in the image",
        why="the driver must match the host's kernel module; a baked copy shadows the "
            "host's mount and fails on any other driver version",
        manual="mount the driver at run time (ascend-env image run-args); " + REBUILD)
    observe(f"no driver files among {scope.facts.walk.files} files")


def test_no_installers(scope: ImageScope) -> None:
    """image.no-installers: no vendor installer (.run/.zip) is left in the image."""
    found = scope.facts.walk.installers
    assert not found, failure(
        message=f"installers are left in the image: {', '.join(found[:5])}",
        observed="; ".join(found), expected="none: the cann stage bind-mounts them",
        why="each is gigabytes in every pull, and a licensed file in a shared image",
        manual=REBUILD)
    observe(f"none among {scope.facts.walk.files} files"
            + (" (walk truncated)" if scope.facts.walk.truncated else ""))


def test_frameworks_load(scope: ImageScope) -> None:
    """image.frameworks-load: the frameworks load as far as they can without an NPU."""
    load = scope.facts.frameworks
    if not load.available:
        pytest.skip("no framework interpreter in the image")
    problems = []
    torch = load.imports.get("torch")
    installed = {name for name, where in load.packages.items() if where}
    if "torch" in installed and torch is not None and torch.rc != 0:
        last = (torch.err.strip().splitlines() or ["?"])[-1]
        problems.append(f"import torch (TORCH_DEVICE_BACKEND_AUTOLOAD=0) fails: {last}")
    for so, sonames in sorted(load.missing_libraries.items()):
        beyond = [s for s in sonames if s.split(".so")[0] + ".so" not in DRIVER_SONAMES]
        if beyond:
            problems.append(f"{so} needs {', '.join(beyond)}, found nowhere in the image")
    assert not problems, failure(
        message=problems[0] + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""),
        observed="; ".join(problems),
        expected="import torch works; every library of torch_npu/MindSpore resolves except "
                 "the driver's (" + ", ".join(DRIVER_SONAMES) + ")",
        why="what fails here fails on every NPU host too",
        manual="pair the frameworks with the image's CANN (ascend-env matrix); " + REBUILD)
    observe(", ".join(sorted(installed)) or "no framework installed")
