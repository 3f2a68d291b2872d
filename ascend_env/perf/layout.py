"""Which profiler files a folder holds, and which rank each belongs to.

Layouts the vendor's tools write (each in docs/perf.md with its source):
- torch_npu / MindSpore: `{worker}_{ts}_ascend_pt/ASCEND_PROFILER_OUTPUT/` (`_ascend_ms`), beside
  it `profiler_info_{rank}.json` ("timeline和summary数据",
  https://www.hiascend.com/document/detail/zh/canncommercial/latest/devaids/Profiling/atlasprofiling_16_1149.html);
- msprof: `PROF_*/mindstudio_profiler_output/` (op_summary_*.csv, msprof_*.json), and in older
  releases `PROF_*/device_{id}/{timeline,summary}/` with one file per device, model and
  iteration: `{kind}_{device}[_{model}]_{iteration}[_slice_{n}][_{timestamp}].{json,csv}`
  (analysis/common_func/file_slice_helper.py in Ascend/msprof, get_export_prefix_file_name);
  raw data in `device_{id}/data`, `host/data`, `sqlite`; `device_{id}/info.json.{id}` names the
  rank (`rank_id`, as msprof-analyze's msprof_data_preprocessor.py reads it);
- msprof-analyze's `cluster_analysis_output/` (8.x and 26.x);
- a plain torch.profiler `*.pt.trace.json`.
Files are known by how their names end, so a file kept under a longer name (as the vendor
analysis tool keeps its test data) is still recognised. A rank is a device: every file of one
device is that device's, whatever the number of files.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from ascend_env.core.inputs import InputError
from ascend_env.perf.tables import open_regular

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
# msprof's own export names: a kind, then device, model, iteration, slice and timestamp numbers.
_MSPROF_NAME = re.compile(r"(?:^|_)(?P<kind>op_summary|msprof|step_trace|hccl)"
                          r"(?:_\d+|_slice_\d+)*\.(?P<ext>csv|json)$")
_MSPROF_KINDS = {("op_summary", "csv"): "kernels", ("msprof", "json"): "trace",
                 ("step_trace", "csv"): "msprof_step_trace",
                 ("step_trace", "json"): "msprof_step_trace",
                 ("hccl", "json"): "msprof_hccl", ("hccl", "csv"): "msprof_hccl"}
# Files the vendor writes that the summary does not use: listed as "not used", never counted.
KNOWN_UNUSED = re.compile(
    r"(operator_details|op_statistic|api_statistic|operator_memory|memory_record|npu_module_mem|"
    r"l2_cache|data_preprocess|communication_matrix|communication_group|communication_statistic|"
    r"trace_view|analysis|ascend_pytorch_profiler|ascend_mindspore_profiler|task_time|"
    r"op_summary|msprof|npu_mem|dataloader|perf-notes|perf-env|ai_core_utilization|"
    r"ai_vector_core_utilization|aicpu|ge_op_execute|fusion_op|hbm|ddr|pcie|hccs|llc|"
    r"cpu_usage|mem_usage|sys_mem|process_mem|static_op_mem|prof_rule|api_)"
    r".*\.(csv|json|db|txt)$|\.log$|README\.txt$")
# What tells perf the layout: read for the rank, never listed.
METADATA = re.compile(r"^(profiler_info(_\d+)?\.json|profiler_metadata\.json|info\.json\.\d+|"
                      r"(start|end)_info(\.\d+)?|sample\.json|(host|dev)_start\.log(\.\d+)?|"
                      r".*\.done|.*\.complete)$")
_RANK_INFO = re.compile(r"profiler_info_(\d+)\.json$")
_DEVICE = re.compile(r"^device_(\d{1,3})$")
_DEVICE_INFO = re.compile(r"^info\.json\.(\d{1,3})$")
# Raw data the exported files come from: one note per folder, not one per file.
_RAW = ("data", "sqlite", "log", "FRAMEWORK", "logs")
# `ascend-env perf --` names each worker rank{N}_pid{P} (HOST@rank{N}_pid{P} on a target):
# its trace file or *_ascend_pt folder.
_WORKER = re.compile(r"^(?:(?P<host>[A-Za-z0-9_.-]+)@)?rank(?P<rank>\d+)_pid\d+")
_ASCEND_FOLDER = re.compile(r"_ascend_(pt|ms)$")
MAX_ENTRIES = 50_000  # a folder walk stops here: a whole home directory is not a profile
MAX_DEPTH = 8
MAX_INFO_BYTES = 1024 * 1024


def _worker_rank(match: re.Match[str]) -> str:
    host = match.group("host")
    return f"{host}/{match.group('rank')}" if host else match.group("rank")


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
    unused: list[Path] = field(default_factory=list)
    skipped: list[tuple[Path, str]] = field(default_factory=list)


def kind_of(name: str) -> str | None:
    """The kind of a profiler file from its name, or None."""
    for suffix, kind in KINDS:
        if name.endswith(suffix):
            return kind
    match = _MSPROF_NAME.search(name)
    if match:
        return _MSPROF_KINDS[(match.group("kind"), match.group("ext"))]
    if name.endswith(".json") and "trace" in name:
        return "trace"
    return None


def _prof(folder: Path) -> Path | None:
    """The PROF_* folder FOLDER lies in (or is), if any."""
    for place in (folder, *folder.parents):
        if place.name.startswith("PROF_"):
            return place
    return None


def _device_rank(device: Path, names: dict[Path, list[str]]) -> str:
    """A device folder's rank: `rank_id` of its info.json.{id} where set, else the device id."""
    for name in names.get(device, []):
        if _DEVICE_INFO.match(name):
            try:
                with open_regular(device / name, what="info.json") as handle:
                    info = json.loads(handle.read(MAX_INFO_BYTES))
                rank = info.get("rank_id") if isinstance(info, dict) else None
                if isinstance(rank, int) and rank >= 0:
                    return str(rank)
            except (InputError, ValueError, OSError):
                pass
    match = _DEVICE.match(device.name)
    return match.group(1) if match else device.name


def _owner(folder: Path) -> Path:
    """The folder that stands for one device or rank: `device_{id}` for msprof's per-device
    output, the `*_ascend_pt` / `PROF_*` above an output folder otherwise."""
    for place in (folder, *folder.parents):
        if _DEVICE.match(place.name) and _prof(place) is not None:
            return place
        if place.name.startswith("PROF_"):
            break
    if folder.name in ("ASCEND_PROFILER_OUTPUT", "mindstudio_profiler_output"):
        return folder.parent
    prof = _prof(folder)
    if prof is not None and folder.name in ("timeline", "summary"):  # PROF_*/host/timeline
        return prof
    return folder


def _rank_of(owner: Path, root: Path, names: dict[Path, list[str]]) -> str:
    if _DEVICE.match(owner.name) and _prof(owner) is not None:
        return _device_rank(owner, names)
    worker = _WORKER.match(owner.name)
    if worker:
        return _worker_rank(worker)
    for name in names.get(owner, []):
        match = _RANK_INFO.match(name)
        if match:
            return match.group(1)
    if owner.name.startswith("PROF_"):
        devices = [d for d in owner.iterdir() if _DEVICE.match(d.name) and d.is_dir()] \
            if owner.is_dir() else []
        if len(devices) == 1:  # one device: the PROF folder is that device's
            return _device_rank(devices[0], names)
    try:
        label = str(owner.relative_to(root))
    except ValueError:
        label = owner.name
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
    names = _walk(root, layout)
    owners: dict[str, set[Path]] = {}
    for place, listed in names.items():
        for name in listed:
            _sort(place / name, root, names, layout, owners)
    _qualify(layout, owners, root)
    return layout


def _walk(root: Path, layout: Layout) -> dict[Path, list[str]]:
    names: dict[Path, list[str]] = {}
    seen = 0
    base_depth = len(root.parts)
    for folder, dirs, files in os.walk(root, followlinks=False):
        here = Path(folder)
        seen += len(dirs) + len(files)
        if seen > MAX_ENTRIES:
            raise InputError(f"--from {root}: more than {MAX_ENTRIES} files and folders; name "
                             "the profiler output folder itself")
        if here != root and here.name in _RAW and (
                _prof(here) is not None or _ASCEND_FOLDER.search(here.parent.name)):
            layout.skipped.append((here, "raw profiler data: not read (perf reads the "
                                         "exported summary and timeline files)"))
            dirs.clear()
            continue
        if len(here.parts) - base_depth >= MAX_DEPTH:
            dirs.clear()
        dirs.sort()
        names[here] = sorted(files)
    return names


def _sort(path: Path, root: Path, names: dict[Path, list[str]], layout: Layout,
          owners: dict[str, set[Path]]) -> None:
    name = path.name
    kind = kind_of(name)
    if not path.is_file() or path.is_symlink():
        layout.skipped.append((path, "not a regular file"))
    elif METADATA.match(name) or name.startswith("."):
        return
    elif kind is not None and _covered(path.parent):
        layout.skipped.append((path, "msprof's copy inside a framework output: its "
                                     "ASCEND_PROFILER_OUTPUT is read instead"))
    elif kind is not None:
        worker = _WORKER.match(name)
        if kind.startswith("cluster_"):
            rank = "cluster"
        elif worker:
            rank = _worker_rank(worker)
        else:
            owner = _owner(path.parent)
            rank = _rank_of(owner, root, names)
            owners.setdefault(rank, set()).add(_prof(owner) or owner)
        layout.files.append(Found(path, kind, rank))
    elif KNOWN_UNUSED.search(name):
        layout.unused.append(path)
    else:
        layout.unknown.append(path)


def _qualify(layout: Layout, owners: dict[str, set[Path]], root: Path) -> None:
    """Two PROF folders each with a device_0 and no rank ids are two devices, not one: their
    ranks are named with the folder."""
    clashes = {rank for rank, places in owners.items() if len(places) > 1
               and all(p.name.startswith("PROF_") for p in places)}
    if not clashes:
        return
    for found in layout.files:
        if found.rank in clashes:
            prof = _prof(found.path.parent)
            if prof is not None:
                found.rank = f"{prof.relative_to(root) if prof != root else prof.name}/" \
                             f"{found.rank}"


def _covered(folder: Path) -> bool:
    """msprof's output inside a *_ascend_pt/_ascend_ms folder that has its own
    ASCEND_PROFILER_OUTPUT: the same run twice (torch_npu keeps CANN's summaries under PROF_*
    beside its own)."""
    prof = _prof(folder)
    if prof is None:
        return False
    owner = prof.parent
    return bool(_ASCEND_FOLDER.search(owner.name)) and \
        (owner / "ASCEND_PROFILER_OUTPUT").is_dir()


def is_ascend_output(path: Path) -> bool:
    """A `*_ascend_pt` / `*_ascend_ms` folder or its ASCEND_PROFILER_OUTPUT."""
    return bool(_ASCEND_FOLDER.search(path.name)) or path.name == "ASCEND_PROFILER_OUTPUT"
