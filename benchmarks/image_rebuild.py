"""Time a full image build beside a rebuild after a torch_npu-only change.

Usage (root, buildah installed; uses a private vfs storage that is removed afterwards):
    .venv/bin/python benchmarks/image_rebuild.py

Both figures are `build_image` end to end (render, build, validate in the image, commit the
validated tag) on the image tests' stack: tests/sim's fake CANN packages and two tiny local
torch/torch_npu wheels (tests/image/stack.py). The full build starts from an empty layer
cache (only the base image present); the rebuild changes the torch_npu pin alone, so the
base and CANN stages must come from the cache and only the framework stage and the final
layers after its COPY are rebuilt. With real CANN packages (gigabytes of install tree) the
CANN stage dominates the full build, so the gap grows; vfs copies whole layers, which is the
floor of both figures here.
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

from ascend_env.catalogue import Catalogue
from ascend_env.image import BuildRequest, ImageResult, build_image
from ascend_env.image_builders import Buildah
from tests.image.stack import TORCH_NPU, TORCH_NPU_ALT, make_repo, spec_for
from tests.sim.image import import_base

BASE = "localhost/ascend-env-bench-base:latest"


def build(repo: Path, catalogue: Catalogue, torch_npu: str, tag: str
          ) -> tuple[float, ImageResult]:
    started = time.perf_counter()
    result = build_image(Buildah(), BuildRequest(
        spec=spec_for(torch_npu), repo=repo, catalogue=catalogue, base=BASE, tag=tag,
        offline=True, gid=1000))
    elapsed = time.perf_counter() - started
    if not result.validated:
        raise SystemExit(f"{tag} did not validate: {result.report.failed}")
    return elapsed, result


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
            full, first = build(repo, catalogue, TORCH_NPU, "localhost/bench:full")
            again, second = build(repo, catalogue, TORCH_NPU_ALT, "localhost/bench:torch-npu")
        finally:
            subprocess.run(["buildah", "--storage-driver", "vfs", "rm", "--all"],
                           capture_output=True, check=False)
    print(f"{'':34}{'full build':>14}{'torch_npu only':>18}")
    print(f"{'wall time (build+validate+tag)':34}{full:>13.1f}s{again:>17.1f}s")
    print(f"{'builder time':34}{first.build_seconds or 0:>13.1f}s"
          f"{second.build_seconds or 0:>17.1f}s")
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
