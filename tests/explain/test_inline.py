"""The knowledge base explains ascend-env's own failure logs in place: smoke evidence, a
failed install task's message, a failed image build's output (terminal and JSON)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ascend_env.ansible.runner import summarize
from ascend_env.cli.image_view import BUILD_FAILURE_SCHEMA, render_build_failure
from ascend_env.cli.install_view import render_install
from ascend_env.cli.smoke_view import render_fleet
from ascend_env.explain.inline import explain_text
from ascend_env.image import build, builders
from ascend_env.install.provision import InstallSummary
from ascend_env.smoke.verdict import Thresholds, Verdict
from tests.cli_invoke import invoke
from tests.smoke.conftest import FAKE_NPU, needs_torch

# The first rank's failure of https://github.com/vllm-project/vllm-ascend/issues/486.
EI0006 = ("EI0006: [PID: 1292363] 2025-04-08-18:07:20.444.436 Getting socket times out. "
          "Reason: Remote Rank did not send the data in time. Please check the reason for the "
          "rank being stuck")


def test_explain_text_is_compact_and_ordered() -> None:
    found = explain_text("fine\n" + EI0006 + "\n", None, "")
    assert [f["id"] for f in found] == ["hccl.ei0006-socket-timeout"]
    assert set(found[0]) == {"id", "severity", "line", "count", "meaning", "numbers", "fix",
                             "source"}
    assert explain_text(None, "") == []


@needs_torch
@pytest.mark.slow
@pytest.mark.parametrize("as_json", [False, True])
def test_smoke_evidence_is_explained(monkeypatch: pytest.MonkeyPatch, as_json: bool) -> None:
    # The fake torch_npu fails its import as the real one does without CANN.
    monkeypatch.setenv("PYTHONPATH", str(FAKE_NPU))
    monkeypatch.setenv("ASCEND_ENV_FAKE_NPU", "no-cann")
    args = ["smoke", "--framework", "torch", "--steps", "3", "--timeout", "60"]
    done = invoke(*args, *(["--json"] if as_json else []))
    assert done.code == 1, done
    if as_json:
        explained = json.loads(done.out)["evidence"]["explained"]
        assert [e["id"] for e in explained] == ["loader.libhccl"]
        assert explained[0]["fix"]["id"] == "ld-library-path"
    else:
        assert "explained: loader.libhccl: CANN's collective communication library" in done.out


def test_a_collective_rank_log_tail_is_explained(capsys: pytest.CaptureFixture[str]) -> None:
    verdict = Verdict(framework="hccl", requested_device="npu", outcome="fail", summary="x",
                      checks=[], thresholds=Thresholds(), evidence={
                          "schema": "ascend-env/smoke/hccl/v1", "status": "failed",
                          "ranks": [{"rank": 0, "status": "ok"},
                                    {"rank": 1, "status": "failed", "log_tail": EI0006}]})
    assert render_fleet({"node1": verdict}, as_json=True) == 1
    document = json.loads(capsys.readouterr().out)
    explained = document["hosts"]["node1"]["evidence"]["explained"]
    assert [e["id"] for e in explained] == ["hccl.ei0006-socket-timeout"]


def _failed_install() -> InstallSummary:
    # A callback event as playbooks/callback_plugins records a failed task (msg or stderr);
    # the text is the driver installer's (CANN 8.0.0 install guide,
    # https://www.hiascend.com/document/detail/zh/canncommercial/800/softwareinst/instg/instg_0069.html).
    events: list[Any] = [
        {"event": "play", "hosts": ["node1", "node2"]},
        {"event": "result", "status": "failed", "host": "node1",
         "task": "driver : run the driver installer", "message": "non-zero return code",
         "stdout": "[ERROR]Dkms install failed, details in : "
                   "var/log/ascend_seclog/ascend_install.log.", "stderr": ""},
        {"event": "stats", "hosts": {"node1": {"ok": 3, "failures": 1},
                                     "node2": {"ok": 9, "changed": 2}}}]
    return InstallSummary(spec="s", digest="d", check=False, log="/tmp/log",
                          hosts=summarize(events))


def test_a_failed_install_task_is_explained_in_json(capsys: pytest.CaptureFixture[str]) -> None:
    render_install(_failed_install(), as_json=True)
    hosts = {h["host"]: h for h in json.loads(capsys.readouterr().out)["hosts"]}
    assert [e["id"] for e in hosts["node1"]["explained"]] == ["install.dkms-failed"]
    assert "explained" not in hosts["node2"]  # a host that ended well has nothing to explain


def test_a_failed_install_task_is_explained_in_the_terminal(
        capsys: pytest.CaptureFixture[str]) -> None:
    render_install(_failed_install(), as_json=False)
    out = capsys.readouterr().out
    assert "explained: install.dkms-failed: The driver's kernel modules could not be built" \
        in out
    assert "rm -rf /var/lib/dkms/davinci_ascend" in out


def _build_error() -> builders.BuilderError:
    # A RUN step that imports torch_npu at build time, where the image has no driver
    # (the ImportError text of https://github.com/vllm-project/vllm-ascend/issues/1440).
    log = "\n".join([
        "STEP 12/14: RUN python3 -c 'import torch_npu'",
        "Traceback (most recent call last):",
        '  File "<string>", line 1, in <module>',
        "ImportError: libascend_hal.so: cannot open shared object file: No such file or "
        "directory",
        "Error: building at STEP \"RUN python3 -c 'import torch_npu'\": while running runtime: "
        "exit status 1"])
    return builders._failed_build("buildah", log)


def test_a_failed_build_is_explained(capsys: pytest.CaptureFixture[str]) -> None:
    error = _build_error()
    render_build_failure(error, as_json=True)
    document = json.loads(capsys.readouterr().out)
    assert document["schema"] == BUILD_FAILURE_SCHEMA
    assert [e["id"] for e in document["explained"]] == ["loader.libascend-hal"]
    render_build_failure(error, as_json=False)
    err = capsys.readouterr().err
    assert err.startswith("ascend-env: error: buildah could not build the image")
    assert "explained: loader.libascend-hal" in err


def test_image_build_command_explains_the_builders_failure(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def fail(*_args: object, **_kwargs: object) -> None:
        raise _build_error()

    monkeypatch.setattr(build, "build_image", fail)
    monkeypatch.setattr(builders, "detect", lambda _name: object())
    done = invoke("image", "build", "--profile", "910b", "--repo", str(tmp_path), "--json")
    assert done.code == 1, done
    assert [e["id"] for e in json.loads(done.out)["explained"]] == ["loader.libascend-hal"]
