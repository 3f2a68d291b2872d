"""`ascend-env perf -- CMD` on this machine: a real CPU training run under torch.profiler, its raw
trace kept, a host-only summary; the job's failures and silences end in the right exit code."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from ascend_env.cli.perf_view import lines
from ascend_env.perf import collect
from ascend_env.perf.summarize import summarize
from tests.cli_invoke import invoke
from tests.install.processes import marked

pytest.importorskip("torch")

REPO = Path(__file__).resolve().parents[2]

TRAIN = """\
import torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(256, 64), torch.randint(0, 10, (256,))
for step in range(8):
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
"""

# torch_npu's CPU-fallback warning as users met it (MinerU #1695; pytorch #136302), here printed
# by a job whose torchrun prefixes each worker's lines with its rank.
FALLBACK_LINES = (
    "[rank0]:[W VariableFallbackKernel.cpp:51] Warning: CAUTION: The operator "
    "'aten::isin.Tensor_Tensor_out' is not currently supported on the NPU backend and will fall "
    "back to run on the CPU. This may have performance implications. (function "
    "npu_cpu_fallback)",
    "[rank3]:train.py:12: UserWarning: CAUTION: The operator 'aten::isin.Tensor_Tensor_out' is "
    "not currently supported on the NPU backend and will fall back to run on the CPU. This may "
    "have performance implications.",
)


def test_cpu_training_run(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(TRAIN)
    out = tmp_path / "perf-out"
    result = invoke("perf", "--out", str(out), "--json", "--steps", "2", "--",
                    sys.executable, str(script))
    assert result.code == 0, result.err
    assert "step 7 loss" in result.err  # the job's own output, kept off stdout
    document = json.loads(result.out)
    assert document["schema"] == "ascend-env/perf/v1"
    assert document["host_only"] is True and document["kind"] == "torch.profiler"
    names = [op["name"] for op in document["top_host_ops"]]
    assert "aten::addmm" in names  # the Linear layers
    assert len(document["host_steps_us"]) == 2  # the recorded window, ProfilerStep marks
    assert document["run"]["returncode"] == 0
    assert any("torch.profiler (host CPU only)" in n for n in document["run"]["notes"])
    assert [f["id"] for f in document["findings"]] == ["host-only"]
    # The raw trace stays where the operator can open it.
    traces = list((out / "raw").glob("rank0_pid*.pt.trace.json"))
    assert len(traces) == 1
    assert "traceEvents" in json.loads(traces[0].read_text())
    assert "step 0 loss" in (out / "run.log").read_text()
    # The terminal view of the same output says what it is.
    text = "\n".join(lines(summarize(out / "raw")))
    assert "HOST-ONLY (no NPU in this profile)" in text
    assert "top operators (host CPU, self time)" in text and "aten::addmm" in text


def test_fallback_warnings_and_slow_settings(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASCEND_LAUNCH_BLOCKING", "1")
    monkeypatch.setenv("TORCH_NPU_DISABLED_WARNING", "1")  # taken out of the job's environment
    script = tmp_path / "job.py"
    script.write_text(TRAIN + "import os, sys\n"
                      "assert 'TORCH_NPU_DISABLED_WARNING' not in os.environ\n" + "".join(
        f"print({line!r}, file=sys.stderr)\n" for line in FALLBACK_LINES))
    result = invoke("perf", "--out", str(tmp_path / "o"), "--json", "--",
                    sys.executable, str(script))
    assert result.code == 0, result.err
    document = json.loads(result.out)
    assert document["cpu_fallbacks"] == {"aten::isin.Tensor_Tensor_out": ["0", "3"]}
    findings = {f["id"]: f for f in document["findings"]}
    assert "cpu-fallback" in findings
    assert "environment_variable_info.yaml" in findings["env-ascend_launch_blocking"]["source"]


def test_a_failing_job_is_exit_1(tmp_path: Path) -> None:
    script = tmp_path / "broken.py"
    script.write_text("print('starting')\nraise SystemExit(3)\n")
    result = invoke("perf", "--out", str(tmp_path / "o"), "--", sys.executable, str(script))
    assert result.code == 1
    assert "exited 3" in result.err


def test_no_optimizer_step_records_nothing_unless_whole_run(tmp_path: Path) -> None:
    script = tmp_path / "infer.py"
    script.write_text("import torch\nprint(torch.ones(4).sum().item())\n")
    result = invoke("perf", "--out", str(tmp_path / "a"), "--", sys.executable, str(script))
    assert result.code == 2
    assert "--steps 0 records the whole run" in result.err
    result = invoke("perf", "--out", str(tmp_path / "b"), "--steps", "0", "--json", "--",
                    sys.executable, str(script))
    assert result.code == 0, result.err
    assert "aten::sum" in [op["name"] for op in json.loads(result.out)["top_host_ops"]]


def test_a_silent_hang_is_stopped_at_the_timeout(tmp_path: Path) -> None:
    script = tmp_path / "hang.py"
    script.write_text("import time\ntime.sleep(600)\n")
    result = invoke("perf", "--out", str(tmp_path / "o"), "--timeout", "2", "--",
                    sys.executable, str(script))
    assert result.code == 1
    assert "timed out" in result.err


def test_unknown_program_without_msprof_is_exit_2(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    result = invoke("perf", "--out", str(tmp_path / "o"), "--", "true")
    assert result.code == 2
    assert "msprof" in result.err


def test_out_folder_must_be_empty(tmp_path: Path) -> None:
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "keep.txt").write_text("x")
    result = invoke("perf", "--out", str(tmp_path / "o"), "--", sys.executable, "-c", "pass")
    assert result.code == 2
    assert "not empty" in result.err


def test_msprof_is_used_for_other_programs(monkeypatch: pytest.MonkeyPatch) -> None:
    found = {"msprof": "/usr/local/Ascend/cann/bin/msprof", "./serve.sh": None}
    monkeypatch.setattr(shutil, "which", lambda name: found.get(name, f"/usr/bin/{name}"))
    argv, profiler = collect.plan(["bash", "serve.sh", "--name", "a b"])
    assert profiler == "msprof"
    assert argv == ["/usr/local/Ascend/cann/bin/msprof", "--output={raw}",
                    "--application=bash serve.sh --name 'a b'"]
    assert collect.plan(["torchrun", "train.py"])[1].startswith("python hook")


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM], ids=["sigkill", "sigterm"])
def test_the_job_ends_with_ascend_env_even_killed(tmp_path: Path, signum: int) -> None:
    """The job is tethered: ascend-env's SIGKILL (no handler runs) ends it too, after the
    grace period; a SIGTERM stops it and exits 143."""
    started = tmp_path / "started"
    script = tmp_path / "hang.py"
    script.write_text(f"import pathlib, time\npathlib.Path({str(started)!r}).touch()\n"
                      "time.sleep(600)\n")
    token = uuid.uuid4().hex
    env = {**os.environ, "AE_TEST_RUN": token, "ASCEND_ENV_STOP_GRACE": "2",
           "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", ""))
                                         if p)}
    process = subprocess.Popen([sys.executable, "-m", "ascend_env", "perf", "--out",
                                str(tmp_path / "o"), "--", sys.executable, str(script)],
                               env=env, start_new_session=True, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while not started.exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert started.exists(), "the job never started"
        os.kill(process.pid, signum)
        _, err = process.communicate(timeout=60)
        # Grace (2 s), then the signal, then SIGKILL 5 s later: gone well before this.
        deadline = time.monotonic() + 30
        while marked(f"AE_TEST_RUN={token}") and time.monotonic() < deadline:
            time.sleep(0.2)
        assert marked(f"AE_TEST_RUN={token}") == [], "the job outlived ascend-env"
        if signum == signal.SIGTERM:
            assert process.returncode == 143, err.decode()[-2000:]
            assert b"Traceback" not in err
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
