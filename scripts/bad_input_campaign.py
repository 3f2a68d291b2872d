#!/usr/bin/env python3
"""The independent bad-input campaign: the real `ascend-env` console script, one
subprocess per case, over a fixed list of bad inputs per class (files, URLs, archives,
inventories, numbers, names, output paths; tests/hostile/badinput.py holds the list).

It counts tracebacks, hangs (no end within --bound seconds), wrong exit codes (anything but
1 or 2), files left behind or changed outside the run's folder, and unsafe printed commands,
and prints each failing case as the exact command to run again. Exit 0 when nothing failed,
1 when something did, 2 when the campaign itself could not run.

    python scripts/bad_input_campaign.py [--jobs 2] [--bound 60] [--kind names] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.hostile.badinput import (  # after the checkout is importable
    Case,
    Verdict,
    cases,
    judge,
    make_bad_files,
    snapshot,
    watched,
)

CLASSES = ("files", "urls", "archives", "inventories", "numbers", "names", "output paths")
COUNTED = ("traceback", "hang", "wrong exit code", "left behind or changed",
           "unsafe printed command")


def console_script() -> str:
    """The installed `ascend-env`: beside this interpreter (a venv), else on PATH."""
    beside = Path(sys.executable).with_name("ascend-env")
    found = str(beside) if beside.exists() else shutil.which("ascend-env")
    if found is None:
        sys.exit("bad_input_campaign: no ascend-env console script beside "
                 f"{sys.executable} or on PATH (pip install -e . first)")
    return found


def _hidden_leftovers(folder: Path) -> list[str]:
    """Temporary files or folders a failed write left (core/outputs.py names them .NAME.*).
    A fetch's DEST/.partial/ is not one: downloads wait there to be resumed (README,
    "Caches"); what it holds is not read as verified."""
    if not folder.exists():
        return []
    return sorted(str(p) for p in folder.rglob(".*")
                  if ".partial" not in p.relative_to(folder).parts)


def run_case(script: str, case: Case, room: Path, guarded: list[Path], bound: float
             ) -> Verdict:
    """One case in its own folder (cwd, HOME, TMPDIR, out), judged and then cleaned away."""
    for sub in ("cwd", "home", "tmp"):
        (room / sub).mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "HOME": str(room / "home"), "TMPDIR": str(room / "tmp"),
           "COLUMNS": "200", "NO_COLOR": "1"}
    env.pop("PYTHONUNBUFFERED", None)
    before = snapshot(guarded)
    cwd_before = snapshot([room / "cwd"])
    try:
        done = subprocess.run([script, *case.argv], cwd=room / "cwd", env=env,
                              capture_output=True, text=True, errors="replace",
                              timeout=bound, check=False, stdin=subprocess.DEVNULL)
        verdict = judge(case, done.returncode, done.stdout, done.stderr)
        err = done.stderr
    except subprocess.TimeoutExpired:
        verdict, err = judge(case, None, "", ""), ""
    except (OSError, ValueError) as error:  # the case itself could not be started
        verdict, err = Verdict(case, None, [f"not started: {error}"]), ""
    changed = [p for p, seen in snapshot(guarded).items() if before.get(p) != seen]
    if snapshot([room / "cwd"]) != cwd_before:
        changed.append(str(room / "cwd"))
    left = _hidden_leftovers(room / "out")
    if changed or left:
        verdict.problems.append(f"left behind or changed: {[*changed, *left]}")
    if verdict.problems and err.strip():
        verdict.problems.append("stderr: " + err.strip().splitlines()[-1][:300])
    return verdict


def category(problem: str) -> str | None:
    if problem.startswith("traceback"):
        return "traceback"
    if problem.startswith("hang"):
        return "hang"
    if problem.startswith("exit "):
        return "wrong exit code"
    if problem.startswith("left behind"):
        return "left behind or changed"
    if problem.startswith("unsafe printed"):
        return "unsafe printed command"
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2, help="cases run at once (default 2)")
    parser.add_argument("--bound", type=float, default=60.0,
                        help="seconds after which a case counts as a hang (default 60)")
    parser.add_argument("--kind", choices=CLASSES, action="append",
                        help="only this class (repeatable)")
    parser.add_argument("--json", action="store_true", help="the result as JSON")
    parser.add_argument("--keep", action="store_true",
                        help="keep the bad files, so the failing commands can be run again")
    args = parser.parse_args()
    if args.jobs < 1 or not args.bound > 0:
        parser.error("--jobs must be 1 or more and --bound above 0")
    script = console_script()
    base = Path(tempfile.mkdtemp(prefix="ascend-env-campaign-"))
    try:
        inputs = base / "in"
        files = make_bad_files(inputs)
        capture = inputs / "good-capture.json"
        made = subprocess.run([script, "collect", "-o", str(capture)], capture_output=True,
                              text=True, check=False, stdin=subprocess.DEVNULL)
        if made.returncode != 0:
            print(f"bad_input_campaign: cannot collect this machine for the side-file cases: "
                  f"{made.stderr.strip()}", file=sys.stderr)
            return 2
        rooms = base / "run"
        # The fixed list, its paths inside one room; each case gets a room of its own at run
        # time (same layout), so parallel cases never share an output folder.
        template = rooms / "ROOM" / "out"
        # A NUL cannot be in a command line (execve ends the word there): those cases are
        # the in-process hypothesis test's only.
        listed = [c for c in cases(files, template, capture)
                  if (not args.kind or c.kind in args.kind)
                  and not any("\x00" in a for a in c.argv)]
        guarded = watched(files, inputs, base)

        def one(index_case: tuple[int, Case]) -> Verdict:
            index, case = index_case
            room = rooms / f"r{index}"
            mine = Case(case.kind, tuple(a.replace(str(rooms / "ROOM"), str(room))
                                         for a in case.argv))
            (room / "out").mkdir(parents=True)
            try:
                return run_case(script, mine, room, guarded, args.bound)
            finally:
                shutil.rmtree(room, ignore_errors=True)

        rooms.mkdir()
        verdicts = []
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for number, verdict in enumerate(pool.map(one, enumerate(listed)), start=1):
                verdicts.append(verdict)
                if number % 50 == 0 or number == len(listed):  # a long run shows it moves
                    failing = sum(1 for v in verdicts if v.problems)
                    print(f"{number}/{len(listed)} cases run, {failing} failing",
                          file=sys.stderr, flush=True)
    finally:
        if args.keep:
            print(f"bad files kept in {inputs}", file=sys.stderr)
        else:
            shutil.rmtree(base, ignore_errors=True)
    return report(verdicts, as_json=args.json)


def report(verdicts: list[Verdict], *, as_json: bool) -> int:
    counts = Counter[str]()
    by_class = Counter[str]()
    failing = [v for v in verdicts if v.problems]
    for verdict in failing:
        by_class[verdict.case.kind] += 1
        for kind in {category(p) for p in verdict.problems} - {None}:
            counts[str(kind)] += 1
    if as_json:
        print(json.dumps({"cases": len(verdicts), "failing": len(failing),
                          "counts": {k: counts[k] for k in COUNTED},
                          "by_class": dict(by_class),
                          "failures": [{"class": v.case.kind, "command": v.case.shown(),
                                        "exit": v.code, "problems": v.problems}
                                       for v in failing]}, indent=2))
        return 1 if failing else 0
    for verdict in failing:
        print(f"[{verdict.case.kind}] exit {verdict.code}: {verdict.case.shown()}")
        for problem in verdict.problems:
            print(f"    {problem}")
    print(f"\n{len(verdicts)} cases, {len(failing)} failing")
    for key in COUNTED:
        print(f"  {key}: {counts[key]}")
    if by_class:
        print("  failing by class: " + ", ".join(f"{k} {n}" for k, n in by_class.items()))
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
