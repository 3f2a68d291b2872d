"""Images built for real with buildah (detected storage, chroot) from the sim hosts' Debian root.

The CANN packages are tests/sim's fake installers (real makeself .run files, real flags and
layout); the frameworks are tiny stand-in wheels named torch and torch_npu, with CANN's Python
dependencies beside them (tests/wheels.py): real pip, offline, real venv, real layers.
Validation runs the real probe and checks.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from ascend_env.core.resources import shipped_dir
from ascend_env.image import context as image_render
from ascend_env.image.build import ImageResult, storage_use
from ascend_env.remote import healthcheck
from tests.cli_invoke import invoke
from tests.image.conftest import BASE_TAG, GOOD_TAG, ImageStack
from tests.image.stack import CANN, TORCH, TORCH_NPU, TORCH_NPU_ALT, spec_for

pytestmark = [pytest.mark.sim, pytest.mark.slow]


def statuses(result: ImageResult) -> dict[str, str]:
    return {c.id: c.status for c in result.report.checks}


def test_build_validates_and_tags(good_image: ImageResult, image_stack: ImageStack) -> None:
    assert good_image.validated, [c for c in good_image.report.checks if c.status != "pass"]
    assert good_image.tag == GOOD_TAG and image_stack.builder.exists(GOOD_TAG)
    # The JSON names the storage the build ran on (what the stack's builder detected).
    assert good_image.storage == storage_use(image_stack.builder)
    assert good_image.to_json()["storage"]["driver"] in {"overlay", "vfs"}
    assert statuses(good_image) == {
        "image.cann": "pass", "image.cann-packages": "pass", "image.env": "pass",
        "image.cann-libraries": "pass", "image.no-driver": "pass",
        "image.no-installers": "pass", "image.frameworks-load": "pass",
        "frameworks.versions": "pass"}
    labels = image_stack.builder.labels(GOOD_TAG)
    spec = spec_for()
    assert labels["io.ascend-env.validated"] == "true"
    assert labels["io.ascend-env.validation.digest"] == good_image.validation_digest
    assert labels["io.ascend-env.spec.digest"] == f"sha256:{spec.digest()}"
    assert labels["io.ascend-env.cann"] == CANN
    assert labels["io.ascend-env.chip"] == "910b"
    assert labels["io.ascend-env.driver.min"] == "25.0.RC1"
    assert labels["io.ascend-env.frameworks"] == f"torch=={TORCH},torch_npu=={TORCH_NPU}"
    assert labels["org.opencontainers.image.created"]
    assert labels["org.opencontainers.image.base.name"] == BASE_TAG


def test_stored_report_and_health_check(good_image: ImageResult,
                                        image_stack: ImageStack) -> None:
    script = ("cat /etc/ascend-env/validation.json; echo @@; python3 /opt/ascend-env/"
              "healthcheck.py; echo rc=$?; LD_LIBRARY_PATH=/elsewhere python3 "
              "/opt/ascend-env/healthcheck.py; echo rc=$?; id -u; id -g")
    done = image_stack.builder.run(GOOD_TAG, [["sh", "-c", script]])[0]
    stored, _, rest = done.out.partition("@@\n")
    assert "sha256:" + hashlib.sha256(stored.rstrip("\n").encode()).hexdigest() == \
        good_image.validation_digest
    assert json.loads(stored)["summary"]["pass"] == 8
    lines = rest.splitlines()
    assert lines[0].startswith("healthy") and lines[1] == "rc=0"
    assert lines[2].startswith("unhealthy: LD_LIBRARY_PATH is '/elsewhere'")
    assert lines[3] == "rc=1"
    assert lines[4:6] == ["1000", "1000"]  # not root; gid = the build arg (host's group)
    config = json.loads(image_stack.buildah("inspect", "--type", "image", GOOD_TAG).stdout)
    health = config["Docker"]["config"]["Healthcheck"]["Test"]
    assert health == ["CMD", "python3", "/opt/ascend-env/healthcheck.py"]


def _layer_dirs(stack: ImageStack, image: str) -> list[Path]:
    """Every layer of an image as its driver stores it (vfs: a full tree; overlay: the diff)."""
    graph = stack.storage / "graph"
    assert stack.builder.storage is not None
    driver = stack.builder.storage.driver
    image_id = stack.buildah("inspect", "--type", "image", "--format", "{{.FromImageID}}",
                             image).stdout.strip()
    images = json.loads((graph / f"{driver}-images" / "images.json").read_text())
    layers = {layer["id"]: layer for layer in
              json.loads((graph / f"{driver}-layers" / "layers.json").read_text())}
    top = next(i["layer"] for i in images if i["id"] == image_id)
    chain = []
    while top:
        layer = graph / "vfs" / "dir" / top if driver == "vfs" else graph / driver / top / "diff"
        assert layer.is_dir(), layer
        chain.append(layer)
        top = layers[top].get("parent", "")
    return chain


def test_no_installer_or_driver_in_any_layer(good_image: ImageResult,
                                             image_stack: ImageStack) -> None:
    layers = _layer_dirs(image_stack, GOOD_TAG)
    assert len(layers) >= 4
    for layer in layers:
        assert not [p for p in layer.rglob("*.run") if p.name.startswith("Ascend-")], layer
        assert not (layer / "usr/local/Ascend/driver").exists(), layer
        assert not (layer / "etc/ascend_install.info").exists(), layer
        # pip stays in its stage: mounted for the framework RUNs, in no layer of the image.
        assert not list(layer.glob("opt/ascend-env-pip/*")), layer


def test_validate_command_on_our_image_uses_its_stored_spec(good_image: ImageResult) -> None:
    done = invoke("image", "validate", GOOD_TAG, "--builder", "buildah", "--json")
    assert done.code == 0, done.out + done.err
    document = json.loads(done.out)
    assert document["schema"] == "ascend-env/image/v1" and document["validated"] is True
    assert document["spec"]["name"] == spec_for().name
    assert document["labels"]["io.ascend-env.validation.digest"] == good_image.validation_digest


def test_validate_command_on_a_foreign_image(image_stack: ImageStack) -> None:
    done = invoke("image", "validate", BASE_TAG, "--builder", "buildah", "--json")
    assert done.code == 1, done.out + done.err
    checks = {c["id"]: c for c in json.loads(done.out)["report"]["checks"]}
    assert checks["image.cann"]["status"] == "fail"
    assert checks["image.no-driver"]["status"] == "pass"


def test_broken_template_fails_and_leaves_no_tag(image_stack: ImageStack, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    broken = tmp_path / "containers"
    shutil.copytree(shipped_dir("containers"), broken)
    template = broken / "Containerfile.j2"
    text = template.read_text()
    # Drop one ENV line: ASCEND_OPP_PATH is what torch_npu raises about first.
    text = text.replace("{% for name, value in image_env %}",
                        '{% for name, value in image_env if name != "ASCEND_OPP_PATH" %}')
    assert 'if name != "ASCEND_OPP_PATH"' in text
    template.write_text(text)
    monkeypatch.setattr(image_render, "shipped_dir", lambda name: broken)
    tag = "localhost/ascend-env-test:broken"
    result = image_stack.build(tag)
    assert not result.validated and result.tag is None
    assert result.exit_code() == 1
    assert not image_stack.builder.exists(tag)
    env = next(c for c in result.report.checks if c.id == "image.env")
    assert env.status == "fail" and "ASCEND_OPP_PATH is not set" in (env.observed or "")


def test_torch_npu_change_rebuilds_only_the_framework_layers(good_image: ImageResult,
                                                             image_stack: ImageStack) -> None:
    result = image_stack.build("localhost/ascend-env-test:alt", spec_for(TORCH_NPU_ALT))
    assert result.validated, result.report.checks
    cache = result.cache
    assert cache is not None and good_image.cache is not None
    rebuilt = cache.rebuilt
    # On failure the raw `buildah bud` log of every build of the session is attached
    # (conftest.pytest_runtest_makereport): it tells a real cache miss from a misread log.
    why = f"rebuilt: {rebuilt}; [steps, cached] per stage: {cache.by_stage}"
    # The CANN stage, the base and pip's stage come entirely from the cache ...
    assert cache.by_stage["cann"][1] == cache.by_stage["cann"][0], why
    assert cache.by_stage["base"][1] == cache.by_stage["base"][0], why
    assert cache.by_stage["pip"][1] == cache.by_stage["pip"][0] == 1, why
    assert not [r for r in rebuilt if "from=cann" in r or r.startswith("cann:")], why
    # ... and of the final stage's framework RUNs only torch_npu's reruns (the dependencies'
    # and torch's are cached), then the two steps after it: the user and the labels.
    framework_runs = [r for r in rebuilt if "--mount=type=bind,source=wheels" in r]
    assert len(framework_runs) == 1, why
    assert [r.split()[1] for r in rebuilt] == ["RUN", "USER", "LABEL"], why
    assert all(r.startswith("final:") for r in rebuilt), why
    assert cache.by_stage["final"][1] == cache.by_stage["final"][0] - 3, why
    assert statuses(result)["frameworks.versions"] == "pass"  # the new pin is in the venv
    assert result.labels["io.ascend-env.frameworks"].endswith(f"torch_npu=={TORCH_NPU_ALT}")


def test_a_changed_health_check_reruns_its_step(good_image: ImageResult,
                                                image_stack: ImageStack, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    # A bind mount's content does not key buildah's cache: the file digests in the step do.
    changed = tmp_path / "healthcheck.py"
    changed.write_text(Path(healthcheck.__file__).read_text() + "# changed\n")
    monkeypatch.setattr(image_render, "healthcheck", SimpleNamespace(__file__=str(changed)))
    tag = "localhost/ascend-env-test:health"
    result = image_stack.build(tag)
    assert result.validated, result.report.checks
    assert result.cache is not None
    rebuilt = result.cache.rebuilt
    assert any(r.startswith("final: RUN") for r in rebuilt), rebuilt
    assert not [r for r in rebuilt if r.startswith(("base:", "cann:", "pip:"))], rebuilt
    done = image_stack.builder.run(tag, [["tail", "-n", "1", "/opt/ascend-env/healthcheck.py"]])
    assert done[0].out == "# changed\n"
