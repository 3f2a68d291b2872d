"""Time a full image build beside a rebuild after a torch_npu-only change.

Usage (root, buildah installed; uses a private vfs storage that is removed afterwards):
    .venv/bin/python benchmarks/image_rebuild.py

Both figures are `build_image` end to end (render, build, validate in the image, commit the
validated tag) on the image tests' stack: tests/sim's fake CANN packages and two tiny local
torch/torch_npu wheels (tests/image/stack.py). The full build starts from an empty layer
cache (only the base image present); the rebuild changes the torch_npu pin alone, so the
base and CANN stages must come from the cache and only the framework stage and the final
layers after its COPY are rebuilt. Stage times come from when the builder printed each step.

Read the figures with the storage driver in mind: vfs copies the whole root file system for
every container the builder creates (each stage's FROM, each COPY --from source, each
validation container), so here a ~60 s floor sits under both builds whatever is cached. The
fake CANN installers take a second; real ones take minutes and write gigabytes, which is
the part the rebuild skips. On overlay storage the floor mostly goes away.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ascend_env.image.build import BuildRequest, ImageResult, build_image
from ascend_env.image.builders import FROM_AS, STEP, Buildah
from ascend_env.spec.catalogue import Catalogue
from tests.image.stack import TORCH_NPU, TORCH_NPU_ALT, make_repo, spec_for
from tests.sim.image import import_base

BASE = "localhost/ascend-env-bench-base:latest"


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


def build(repo: Path, catalogue: Catalogue, torch_npu: str, tag: str
          ) -> tuple[float, ImageResult, dict[str, float]]:
    started = time.perf_counter()
    clock = StageClock()
    result = build_image(Buildah(), BuildRequest(
        spec=spec_for(torch_npu), repo=repo, catalogue=catalogue, base=BASE, tag=tag,
        offline=True, gid=1000, on_line=clock.line))
    elapsed = time.perf_counter() - started
    if not result.validated:
        raise SystemExit(f"{tag} did not validate: {result.report.failed}")
    return elapsed, result, clock.seconds(started + (result.build_seconds or 0))


def main() -> int:
    if os.geteuid() != 0 or shutil.which("buildah") is None:
        print("needs root and buildah", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="ascend-env-bench-") as tmp:
        root = Path(tmp)
        conf = root / "storage.conf"
        conf.write_text(f'[storage]\ndriver = "vfs"\ngraphroot = "{root}/graph"\n'
                        f'runroot = "{root}/run"\n')
        os.environ.update(CONTAINERS_STORAGE_CONF=str(conf), BUILDAH_ISOLATION="chroot",
                          STORAGE_DRIVER="vfs")
        try:
            import_base(BASE)
            repo, _vendor, catalogue = make_repo(root)
            full, first, full_stages = build(repo, catalogue, TORCH_NPU, "localhost/bench:full")
            again, second, again_stages = build(repo, catalogue, TORCH_NPU_ALT,
                                                "localhost/bench:torch-npu")
        finally:
            subprocess.run(["buildah", "--storage-driver", "vfs", "rm", "--all"],
                           capture_output=True, check=False)
    print(f"{'':34}{'full build':>14}{'torch_npu only':>18}")
    print(f"{'wall time (build+validate+tag)':34}{full:>13.1f}s{again:>17.1f}s")
    print(f"{'builder time':34}{first.build_seconds or 0:>13.1f}s"
          f"{second.build_seconds or 0:>17.1f}s")
    for stage in full_stages:
        print(f"{'  stage ' + stage:34}{full_stages[stage]:>13.1f}s"
              f"{again_stages.get(stage, 0.0):>17.1f}s")
    for name, result in (("full build", first), ("torch_npu only", second)):
        cache = result.cache
        assert cache is not None
        stages = ", ".join(f"{stage} {c}/{n}" for stage, (n, c) in cache.by_stage.items())
        print(f"{name}: steps from cache {cache.cached}/{cache.steps} ({stages})")
    print(f"torch_npu {TORCH_NPU} -> {TORCH_NPU_ALT}: rebuilt steps:")
    for step in second.cache.rebuilt if second.cache else []:
        print(f"  {step}")
    print(f"speed-up {full / again:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
