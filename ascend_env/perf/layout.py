"""Which profiler files a folder holds, and which rank each belongs to.

Layouts met (torch_npu / MindSpore / msprof docs, "timeline和summary数据",
https://www.hiascend.com/document/detail/zh/canncommercial/latest/devaids/Profiling/atlasprofiling_16_1149.html):
`{worker}_{ts}_ascend_pt/ASCEND_PROFILER_OUTPUT/` (also `_ascend_ms`), beside it
`profiler_info_{rank}.json`; msprof's `PROF_*/mindstudio_profiler_output/` (op_summary_*.csv,
msprof_*.json); msprof-analyze's `cluster_analysis_output/`; a plain torch.profiler
`*.pt.trace.json`. Files are known by how their names end, so a file kept under a longer name
(as the vendor analysis tool keeps its test data) is still recognised.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from ascend_env.core.inputs import InputError

# Longest suffix first: cluster_step_trace_time.csv also ends in step_trace_time.csv.
KINDS: tuple[tuple[str, str], ...] = (
    ("cluster_step_trace_time.csv", "cluster_step_trace"),
    ("cluster_communication.json", "cluster_communication"),
    ("step_trace_time.csv", "step_trace"),
    ("kernel_details.csv", "kernels"),
    ("trace_view.json", "trace"),
    ("communication.json", "communication"),
    (".pt.trace.json", "trace"),
)
_MSPROF = (  # msprof's own summary names carry a timestamp: op_summary_20240101000000.csv
    (re.compile(r"op_summary(_\d+)*\.csv$"), "kernels"),
    (re.compile(r"msprof(_\d+)*\.json$"), "trace"),
    (re.compile(r"step_trace(_\d+)*\.csv$"), "msprof_step_trace"),
)
# Files the vendor writes that the summary does not need: listed as "not needed", not unknown.
KNOWN_UNUSED = re.compile(
    r"(operator_details|op_statistic|api_statistic|operator_memory|memory_record|npu_module_mem|"
    r"l2_cache|data_preprocess|communication_matrix|cluster_communication_matrix|"
    r"trace_view|analysis|ascend_pytorch_profiler|ascend_mindspore_profiler|"
    r"profiler_metadata|profiler_info|op_summary|task_time|msprof|npu_mem|dataloader|perf-notes|perf-env)"
    r".*\.(csv|json|db|txt)$|\.log$|\.done$")
_RANK_INFO = re.compile(r"profiler_info_(\d+)\.json$")
# `ascend-env perf --` names each worker rank{N}_pid{P} (HOST@rank{N}_pid{P} on a target):
# its trace file or *_ascend_pt folder.
_WORKER = re.compile(r"^(?:(?P<host>[A-Za-z0-9_.-]+)@)?rank(?P<rank>\d+)_pid\d+")


def _worker_rank(match: re.Match[str]) -> str:
    host = match.group("host")
    return f"{host}/{match.group('rank')}" if host else match.group("rank")
_ASCEND_FOLDER = re.compile(r"_ascend_(pt|ms)$")
MAX_ENTRIES = 50_000  # a folder walk stops here: a whole home directory is not a profile
MAX_DEPTH = 8


@dataclass
class Found:
    """A profiler file, its kind and the rank it belongs to."""

    path: Path
    kind: str
    rank: str


@dataclass
class Layout:
    """Everything a folder holds, sorted into what is read and what is not."""

    root: Path
    files: list[Found] = field(default_factory=list)
    unknown: list[Path] = field(default_factory=list)
    skipped: list[tuple[Path, str]] = field(default_factory=list)


def kind_of(name: str) -> str | None:
    """The kind of a profiler file from its name, or None."""
    for suffix, kind in KINDS:
        if name.endswith(suffix):
            return kind
    for pattern, kind in _MSPROF:
        if pattern.search(name):
            return kind
    if name.endswith(".json") and "trace" in name:
        return "trace"
    return None


def _rank_folder(folder: Path) -> Path:
    """The folder that stands for one rank: the `*_ascend_pt` / `PROF_*` above the output."""
    if folder.name in ("ASCEND_PROFILER_OUTPUT", "mindstudio_profiler_output"):
        return folder.parent
    return folder


def _rank_of(rank_folder: Path, root: Path, names: dict[Path, list[str]]) -> str:
    worker = _WORKER.match(rank_folder.name)
    if worker:
        return _worker_rank(worker)
    for name in names.get(rank_folder, []):
        match = _RANK_INFO.match(name)
        if match:
            return match.group(1)
    try:
        label = str(rank_folder.relative_to(root))
    except ValueError:
        label = rank_folder.name
    return label if label != "." else "0"


def find(root: Path) -> Layout:
    """The profiler files under ROOT (a folder or one file); an InputError when ROOT is
    neither a regular file nor a folder."""
    try:
        mode = root.lstat().st_mode
    except OSError as exc:
        raise InputError(f"--from {root}: {exc.strerror or exc}") from exc
    layout = Layout(root=root)
    if stat.S_ISREG(mode):
        kind = kind_of(root.name)
        if kind is None:
            raise InputError(f"--from {root}: not a profiler file perf knows (trace_view.json, "
                             "kernel_details.csv, step_trace_time.csv, communication.json, "
                             "a torch.profiler *.pt.trace.json) and not a folder")
        worker = _WORKER.match(root.name)
        layout.files.append(Found(root, kind, _worker_rank(worker) if worker else "0"))
        return layout
    if not stat.S_ISDIR(mode):
        raise InputError(f"--from {root}: not a folder or a regular file")
    names: dict[Path, list[str]] = {}
    seen = 0
    base_depth = len(root.parts)
    for folder, dirs, files in os.walk(root, followlinks=False):
        here = Path(folder)
        seen += len(dirs) + len(files)
        if seen > MAX_ENTRIES:
            raise InputError(f"--from {root}: more than {MAX_ENTRIES} files and folders; name "
                             "the profiler output folder itself")
        if len(here.parts) - base_depth >= MAX_DEPTH:
            dirs.clear()
        dirs.sort()
        names[here] = sorted(files)
    for place, listed in names.items():
        for name in listed:
            path = place / name
            kind = kind_of(name)
            if not path.is_file() or path.is_symlink():
                layout.skipped.append((path, "not a regular file"))
            elif kind is not None and _covered(place):
                layout.skipped.append((path, "msprof's copy inside a framework output: its "
                                             "ASCEND_PROFILER_OUTPUT is read instead"))
            elif kind is not None:
                rank_folder = _rank_folder(place)
                worker = _WORKER.match(name)
                rank = "cluster" if kind.startswith("cluster_") else \
                    _worker_rank(worker) if worker else _rank_of(rank_folder, root, names)
                layout.files.append(Found(path, kind, rank))
            elif not KNOWN_UNUSED.search(name) and not name.startswith("."):
                layout.unknown.append(path)
    return layout


def _covered(folder: Path) -> bool:
    """A PROF_*/mindstudio_profiler_output inside a *_ascend_pt/_ascend_ms folder that has its
    own ASCEND_PROFILER_OUTPUT: the same run twice (torch_npu keeps CANN's summaries under
    PROF_* beside its own)."""
    if folder.name != "mindstudio_profiler_output":
        return False
    owner = folder.parent.parent
    return bool(_ASCEND_FOLDER.search(owner.name)) and \
        (owner / "ASCEND_PROFILER_OUTPUT").is_dir()


def is_ascend_output(path: Path) -> bool:
    """A `*_ascend_pt` / `*_ascend_ms` folder or its ASCEND_PROFILER_OUTPUT."""
    return bool(_ASCEND_FOLDER.search(path.name)) or path.name == "ASCEND_PROFILER_OUTPUT"
