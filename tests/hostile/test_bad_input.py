"""Every command fed generated bad arguments and files: exit 1 or 2, no
traceback, an end within a bound, nothing changed outside the run's own folder.

Each run is the in-process entry point (tests/cli_invoke.py) in a forked child: the parent's
imports are reused (a fresh interpreter per example would cost a second each), and the child
can be killed when it passes the bound, so a hang fails the test instead of holding it.
"""

from __future__ import annotations

import json
import os
import select
import signal
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.cli_invoke import invoke
from tests.hostile.badinput import (
    CLOSED_URL,
    DEVICES,
    HOSTS,
    MARK,
    NAMES,
    NUMBERS,
    SIZES,
    UNREACHABLE,
    URLS,
    judge,
    make_bad_files,
    snapshot,
    watched,
)

BOUND_S = 60  # a run that has not ended by then is a hang (a bound, not a timing assertion)


def run_bounded(argv: list[str], cwd: Path, home: Path) -> tuple[int | None, str, str]:
    """`ascend-env ARGV` in a forked child in CWD with HOME and TMPDIR under the run folder;
    (exit code or None when killed at the bound, stdout, stderr)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: run, send the result, leave without the parent's cleanup
        os.close(read_end)
        code = 70
        try:
            os.chdir(cwd)
            os.environ.update(HOME=str(home), TMPDIR=str(home))
            done = invoke(*argv)
            payload = json.dumps([done.code, done.out, done.err]).encode()
            with os.fdopen(write_end, "wb") as pipe:
                pipe.write(payload)
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    chunks: list[bytes] = []
    with os.fdopen(read_end, "rb") as pipe:
        while True:
            ready, _, _ = select.select([pipe], [], [], BOUND_S)
            if not ready:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return None, "", ""
            chunk = os.read(pipe.fileno(), 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    os.waitpid(pid, 0)
    if not chunks:
        return 70, "", "the child ended without a result"
    code, out, err = json.loads(b"".join(chunks))
    return int(code), str(out), str(err)


@pytest.fixture(scope="module")
def layout(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("hostile")
    inputs = base / "in"
    run = base / "run"
    for folder in (run / "out", run / "cwd", run / "home"):
        folder.mkdir(parents=True)
    capture = inputs / "good-capture.json"
    make_bad_files(inputs)
    assert invoke("collect", "-o", str(capture)).code == 0
    return {"base": base, "in": inputs, "run": run, "capture": capture}


def _value(pool: list[str], extra: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.sampled_from(pool) | extra


# Generated text beyond the fixed pools: control characters, other scripts, long runs.
_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)
_JUNK = _TEXT.map(lambda t: f"{t};{MARK}")


def _commands(files: dict[str, Path], out: Path, capture: Path
              ) -> list[Callable[[st.DataObject], list[str]]]:
    """One builder per command: it draws the bad part and fills the rest with safe values."""
    any_file = st.sampled_from(sorted(str(p) for p in files.values()))
    spec_file = st.sampled_from(sorted(str(p) for n, p in files.items()
                                       if n.endswith(".yaml") or n in ("fifo", "dev-zero",
                                                                       "a-directory", "loop",
                                                                       "missing")))
    names = _value(NAMES, _JUNK)
    numbers = _value(NUMBERS, _JUNK)
    bad_out = st.sampled_from(["/dev/full", "/proc/x.json", "/sys/x.json", str(out),
                               str(out / "no" / "x.json")])
    repo = str(out / "no-repo")

    def draw(data: st.DataObject, strategy: st.SearchStrategy[str]) -> str:
        return data.draw(strategy)

    return [
        lambda d: ["spec", "validate", draw(d, spec_file)],
        lambda d: ["plan", "--spec", draw(d, spec_file)],
        lambda d: ["plan", "--profile", draw(d, names)],
        lambda d: ["profiles", "show", draw(d, names)],
        lambda d: ["matrix", "--cann", draw(d, names)],
        lambda d: ["fetch", "--profile", "910b", "--repo", str(out / "repo"),
                   "--mirror", draw(d, _value(URLS, _JUNK))],
        lambda d: ["fetch", "--profile", "910b", "--repo", str(out / "repo"),
                   "--catalogue", draw(d, any_file), "--mirror", CLOSED_URL],
        lambda d: ["install", "--profile", "910b", "--host", UNREACHABLE, "--check",
                   "--repo", draw(d, any_file)],
        lambda d: ["install", "--profile", "910b", "--inventory", draw(d, any_file),
                   "--repo", repo, "--check"],
        lambda d: ["doctor", "--from", draw(d, any_file)],
        lambda d: ["doctor", "--host", draw(d, _value(HOSTS, _JUNK))],
        lambda d: ["doctor", "--level", draw(d, numbers), "--host", UNREACHABLE],
        lambda d: ["doctor", "--from", str(capture), "--junit", draw(d, bad_out)],
        lambda d: ["doctor", "--from", str(capture), "--prometheus", draw(d, bad_out)],
        lambda d: ["collect", "-o", draw(d, bad_out), "--host", UNREACHABLE],
        lambda d: ["collect", "-o", str(out / "c.json"), "--inventory", draw(d, any_file)],
        lambda d: ["smoke", "--timeout", draw(d, numbers), "--host", UNREACHABLE],
        lambda d: ["smoke", "--device", draw(d, _value(DEVICES, _JUNK)), "--host", UNREACHABLE],
        lambda d: ["image", "run-args", "--device", draw(d, _value(DEVICES, _JUNK)),
                   "--profile", "910b"],
        lambda d: ["image", "run-args", "--device", "0", "--shm-size",
                   draw(d, _value(SIZES, _JUNK))],
        lambda d: ["image", "run-args", "--device", "0", "--spec", draw(d, spec_file)],
        lambda d: ["image", "build", "--profile", "910b", "--repo", repo,
                   "--context", draw(d, bad_out)],
        lambda d: ["image", "build", "--spec", draw(d, spec_file), "--repo", repo],
        lambda d: ["image", "validate", draw(d, names) or "x", "--builder", "docker"],
    ]


def test_every_command_refuses_bad_input_cleanly(layout: dict[str, Path]) -> None:
    files = {p.name: p for p in layout["in"].iterdir() if p != layout["capture"]} | {
        "dev-zero": Path("/dev/zero"), "missing": layout["in"] / "no-such-file.yaml"}
    out = layout["run"] / "out"
    builders = _commands(files, out, layout["capture"])
    guarded = watched(files, layout["in"], layout["base"])
    failures: list[str] = []

    @settings(max_examples=2 * len(builders), deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(data=st.data(), which=st.integers(0, len(builders) - 1))
    def one(data: st.DataObject, which: int) -> None:
        argv = builders[which](data)
        before = snapshot(guarded)
        code, stdout, stderr = run_bounded(argv, layout["run"] / "cwd", layout["run"] / "home")
        from tests.hostile.badinput import Case  # noqa: PLC0415

        verdict = judge(Case("generated", tuple(argv)), code, stdout, stderr)
        after = snapshot(guarded)
        changed = [p for p in before if before[p] != after[p]]
        if changed:
            verdict.problems.append(f"changed outside its folder: {changed}")
        if verdict.problems:
            failures.append(f"{verdict.case.shown()}: exit {code}: "
                            f"{'; '.join(verdict.problems)}\n    {stderr.strip()[-300:]}")

    one()
    assert not failures, f"{len(failures)} bad run(s):\n" + "\n".join(dict.fromkeys(failures))
