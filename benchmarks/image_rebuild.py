"""Time a full image build beside a rebuild after a torch_npu-only change, in one run.

Usage (root, buildah installed; a private storage, removed afterwards):
    .venv/bin/python benchmarks/image_rebuild.py [--storage-driver vfs|overlay] [--rounds N]

Both figures are `build_image` end to end (render, build, validate in the image, commit the
validated tag) on the image tests' stack: tests/sim's fake CANN packages and two tiny local
torch/torch_npu wheels (tests/image/stack.py). The full build starts from an empty layer
cache (only the base image present); the rebuild changes the torch_npu pin alone, so the
base, CANN and pip stages must come from the cache, and of the final stage only torch_npu's
RUN and the steps after it (USER, LABEL) are rebuilt. Stage times come from when the builder
printed each step.
Each round empties the store (but for the base) and measures both; the median round's ratio
is the figure, since a shared machine's load moves single runs a lot.

The storage driver is the one ascend-env detects here (overlay where it works, else vfs)
unless --storage-driver names one; the output says which ran and why. On vfs every container
the builder creates (each stage's FROM, each COPY --from source, each validation container)
copies the whole root file system, whatever is cached. The fake CANN installers take a
second; real ones take minutes and write gigabytes, which is the part the rebuild skips.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ascend_env.image.build import BuildRequest, ImageResult, build_image
from ascend_env.image.builders import FROM_AS, STEP, Buildah
from ascend_env.image.storage import Storage
from ascend_env.spec.catalogue import Catalogue
from tests.image.stack import TORCH_NPU, TORCH_NPU_ALT, import_base, make_repo, spec_for

BASE = "localhost/ascend-env-bench-base:latest"
GOAL = 0.3  # the goal: a framework-only rebuild within this share of a full build


class StageClock:
    """Seconds per build stage, from when each `STEP` line of the builder's output arrived."""

    def __init__(self) -> None:
        self.marks: list[tuple[float, str]] = []
        self.stages: dict[str, str] = {}

    def line(self, text: str) -> None:
        match = STEP.match(text.strip())
        if match:
            number, instruction = match.group(1) or "1", match.group(5) or ""
            named = FROM_AS.match(instruction)
            if named:
                self.stages[number] = named.group(1) or "final"
            self.marks.append((time.perf_counter(), self.stages.get(number, number)))

    def seconds(self, end: float) -> dict[str, float]:
        out: dict[str, float] = {}
        for (start, stage), (stop, _next) in zip(self.marks, [*self.marks[1:], (end, "")],
                                                 strict=True):
            out[stage] = out.get(stage, 0.0) + stop - start
        return out


def build(builder: Buildah, repo: Path, catalogue: Catalogue, torch_npu: str, tag: str
          ) -> tuple[float, ImageResult, dict[str, float]]:
    started = time.perf_counter()
    clock = StageClock()
    result = build_image(builder, BuildRequest(
        spec=spec_for(torch_npu), repo=repo, catalogue=catalogue, base=BASE, tag=tag,
        offline=True, gid=1000, on_line=clock.line))
    elapsed = time.perf_counter() - started
    if not result.validated:
        raise SystemExit(f"{tag} did not validate: {result.report.failed}")
    return elapsed, result, clock.seconds(started + (result.build_seconds or 0))


@dataclass
class Round:
    """One full build from an empty layer cache and the torch_npu-only rebuild after it."""

    full: float
    again: float
    first: ImageResult
    second: ImageResult
    full_stages: dict[str, float]
    again_stages: dict[str, float]

    @property
    def ratio(self) -> float:
        return self.again / self.full


def one_round(builder: Buildah, repo: Path, catalogue: Catalogue) -> Round:
    """Empty the store but for the base image, then build in full and rebuild."""
    subprocess.run([*builder.base, "rm", "--all"], capture_output=True, check=False)
    subprocess.run([*builder.base, "rmi", "--all", "--force"], capture_output=True, check=False)
    import_base(builder.base, BASE)
    full, first, full_stages = build(builder, repo, catalogue, TORCH_NPU, "localhost/bench:full")
    again, second, again_stages = build(builder, repo, catalogue, TORCH_NPU_ALT,
                                        "localhost/bench:torch-npu")
    return Round(full, again, first, second, full_stages, again_stages)


def report(rounds: list[Round], storage: Storage) -> None:
    """Every round's figures, then the median round in detail."""
    mount = f", mount program {storage.mount_program}" if storage.mount_program else ""
    print(f"storage driver: {storage.driver}{mount} ({storage.source}: {storage.reason})")
    for number, one in enumerate(rounds, 1):
        print(f"round {number}: full build {one.full:.1f}s, torch_npu only {one.again:.1f}s, "
              f"ratio {one.ratio:.2f}x")
    middle = sorted(rounds, key=lambda r: r.ratio)[len(rounds) // 2]
    print(f"the median round:\n{'':34}{'full build':>14}{'torch_npu only':>18}")
    print(f"{'wall time (build+validate+tag)':34}{middle.full:>13.1f}s{middle.again:>17.1f}s")
    print(f"{'builder time':34}{middle.first.build_seconds or 0:>13.1f}s"
          f"{middle.second.build_seconds or 0:>17.1f}s")
    for stage, seconds in middle.full_stages.items():
        print(f"{'  stage ' + stage:34}{seconds:>13.1f}s"
              f"{middle.again_stages.get(stage, 0.0):>17.1f}s")
    for name, result in (("full build", middle.first), ("torch_npu only", middle.second)):
        cache = result.cache
        assert cache is not None
        stages = ", ".join(f"{stage} {c}/{n}" for stage, (n, c) in cache.by_stage.items())
        print(f"{name}: steps from cache {cache.cached}/{cache.steps} ({stages})")
    print(f"torch_npu {TORCH_NPU} -> {TORCH_NPU_ALT}: rebuilt steps:")
    for step in middle.second.cache.rebuilt if middle.second.cache else []:
        print(f"  {step}")
    ratio = middle.ratio
    verdict = "within" if ratio <= GOAL else "over"
    print(f"rebuild / full build (median of {len(rounds)}): {ratio:.2f}x ({verdict} the goal "
          f"of {GOAL}x; speed-up {1 / ratio:.1f}x) on {storage.driver}")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--storage-driver", choices=("vfs", "overlay"),
                        help="run on this driver (default: what ascend-env detects)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="full build + rebuild pairs, each from an empty cache (median)")
    options = parser.parse_args()
    if os.geteuid() != 0 or shutil.which("buildah") is None:
        print("needs root and buildah", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="ascend-env-bench-") as tmp:
        root = Path(tmp)
        conf = root / "storage.conf"
        # No driver here: the benchmark runs on ascend-env's own choice unless told one.
        conf.write_text(f'[storage]\ngraphroot = "{root}/graph"\nrunroot = "{root}/run"\n')
        os.environ.update(CONTAINERS_STORAGE_CONF=str(conf), BUILDAH_ISOLATION="chroot")
        os.environ.pop("STORAGE_DRIVER", None)
        if options.storage_driver:
            os.environ["STORAGE_DRIVER"] = options.storage_driver
        builder = Buildah()
        try:
            repo, _vendor, catalogue = make_repo(root)
            rounds = [one_round(builder, repo, catalogue) for _ in range(max(1, options.rounds))]
        finally:
            subprocess.run([*builder.base, "rm", "--all"], capture_output=True, check=False)
            subprocess.run([*builder.base, "rmi", "--all", "--force"], capture_output=True,
                           check=False)
    assert builder.storage is not None
    report(rounds, builder.storage)
    return 0


if __name__ == "__main__":
    sys.exit(main())
