"""A user's clone has no ../shared beside it: the tests that read the vendor's files there skip,
naming the folder, and the rest pass."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _clone_files() -> list[str]:
    """What a clone of this checkout holds: tracked files, and new ones git does not ignore."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs a git checkout of ascend-env to clone from")
    listing = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        check=True, capture_output=True).stdout.decode()
    return [name for name in listing.split("\0") if name and (ROOT / name).is_file()]


@pytest.mark.slow
def test_perf_tests_skip_without_shared_fixtures(tmp_path: Path) -> None:
    clone = tmp_path / "user" / "ascend-env"
    for name in _clone_files():
        (clone / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, clone / name)
    assert not (clone.parent / "../shared").exists()
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "tests/perf", "-m", "not sim", "-q", "-rs",
         "-p", "no:cacheprovider"],
        cwd=clone, capture_output=True, text=True, timeout=900, check=False)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-4000:]
    assert "../shared/fixtures/profiler" in out  # each skip names the folder it needs
    assert " passed" in out  # the tests that need nothing from ../shared still ran


def test_only_the_marked_helper_reaches_for_shared() -> None:
    """Every test file that names ../shared's fixtures goes through tests/perf/profiler_files.py,
    whose mark skips where the folder is absent."""
    reaching = sorted(
        str(path.relative_to(ROOT)) for path in (ROOT / "tests").rglob("*.py")
        if "shared/fixtures" in path.read_text(encoding="utf-8")
        and "needs_fixtures" not in path.read_text(encoding="utf-8"))
    assert reaching == [], "read ../shared/fixtures only through tests/perf/profiler_files.py"
