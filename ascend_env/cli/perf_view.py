"""Terminal and JSON renderings of a perf summary: where the step time goes, at a glance."""

from __future__ import annotations

import json
import re

import typer

from ascend_env.perf.kernels import label as kernel_label
from ascend_env.perf.model import CoreTime, Finding, Kernel, StepSplit, Summary

MARKS = {"warn": "WARN", "info": "info"}
SHAPES_WIDTH = 48
# torch_npu's input dims can hold line breaks; a row of the table stays one line.
_BREAKS = re.compile(r"[\x00-\x1f\x7f]+")


def _ms(us: float | None) -> str:
    return "-" if us is None else f"{us / 1000:.3f}" if us < 10_000 else f"{us / 1000:.1f}"


def _part(us: float | None, total: float) -> str:
    if us is None:
        return f"{'-':>15}"
    share = f"{us / total * 100:4.1f}%" if total > 0 else "  -  "
    return f"{_ms(us):>9} {share:>5}"


def _one_line(text: str) -> str:
    return _BREAKS.sub(" ", text).strip()


def _cut(text: str, width: int = SHAPES_WIDTH) -> str:
    text = _one_line(text)
    return text if len(text) <= width else text[:width - 3] + "..."


def _steps(splits: list[StepSplit], echo: list[str]) -> None:
    echo.append("step time per rank (ms per step, % of computing + communication not "
                "overlapped + free)")
    echo.append(f"  {'rank':<6}{'steps':>5} {'step':>9}  {'computing':>15} {'comm not ovl':>15} "
                f"{'overlapped':>15} {'free':>15} {'preparing':>15} {'bubble':>15}")
    shown = sorted(splits, key=lambda s: -s.total)
    for split in shown[:16]:
        total = split.total
        echo.append(f"  {split.rank:<6}{split.steps:>5} {_ms(total):>9}  "
                    f"{_part(split.computing, total)} "
                    f"{_part(split.communication_not_overlapped, total)} "
                    f"{_part(split.overlapped, total)} {_part(split.free, total)} "
                    f"{_part(split.preparing, total)} {_part(split.bubble, total)}")
    if len(shown) > 16:
        echo.append(f"  ... {len(shown) - 16} faster ranks (--json lists all)")


def _kernels(title: str, kernels: list[Kernel], echo: list[str], *, shapes: bool) -> None:
    if not kernels:
        return
    echo.append(title)
    for kernel in kernels:
        label = kernel_label(kernel)
        line = (f"  {_ms(kernel.total_us):>9} ms  x{kernel.count:<5} {_cut(label, 40):<40} "
                f"{kernel.core}")
        if shapes and (kernel.input_shapes or kernel.input_dtypes):
            line += f"  in {_cut(kernel.input_shapes)} {_cut(kernel.input_dtypes, 32)}"
        echo.append(line)


def lines(summary: Summary) -> list[str]:
    """The summary as terminal lines."""
    echo: list[str] = []
    label = "HOST-ONLY (no NPU in this profile)" if summary.host_only else summary.kind
    echo.append(f"perf: {summary.source}  [{label}]")
    if summary.steps:
        _steps(summary.steps, echo)
    if summary.spread is not None:
        spread = summary.spread
        gaps = ", ".join(f"{k} {v * 100:.1f}%" for k, v in spread.gaps.items())
        echo.append(f"  slowest rank {spread.slowest_rank}, fastest {spread.fastest_rank}, "
                    f"spread {spread.spread * 100:.1f}% of the mean step (gaps: {gaps})")
    if summary.host_steps_us:
        steps = summary.host_steps_us
        echo.append(f"host step time (ProfilerStep marks): {len(steps)} steps, mean "
                    f"{_ms(sum(steps) / len(steps))} ms, slowest {_ms(max(steps))} ms")
    _cores("device time by core type", summary.core_types, echo)
    _cores("device tasks by task type (a trace's hardware lane; no kernel table for these "
           "ranks)", summary.task_types, echo)
    _kernels("top device kernels (total, count, type, core, input shapes and dtypes)",
             summary.top_kernels, echo, shapes=True)
    _kernels("top host operators (self time)" if not summary.host_only
             else "top operators (host CPU, self time)", summary.top_host_ops, echo, shapes=True)
    if summary.ai_cpu:
        echo.append("AI CPU operators: " + ", ".join(
            f"{k.type or k.name} x{k.count} {_ms(k.total_us)} ms (max {k.max_us:.1f} us)"
            for k in summary.ai_cpu[:8]))
    elif not summary.host_only and (summary.core_types or summary.task_types):
        echo.append("AI CPU operators: none")
    if summary.cpu_fallbacks is None:
        echo.append("CPU fallbacks: not known (no run log; `perf -- CMD` reads them from it)")
    else:
        echo.append("CPU fallbacks: " + (", ".join(
            f"{op} (rank {','.join(ranks)})" for op, ranks in sorted(summary.cpu_fallbacks.items()))
            or "none reported"))
    _hccl(summary, echo)
    _copies(summary, echo)
    _run(summary, echo)
    _findings(summary, echo)
    _files(summary, echo)
    # Whatever a file's names and shapes hold, each row of the summary is one line.
    return [_BREAKS.sub(" ", line) for line in echo]


def _cores(title: str, cores: list[CoreTime], echo: list[str]) -> None:
    if not cores:
        return
    whole = sum(c.time_us for c in cores) or 1.0
    echo.append(f"{title}: " + ", ".join(
        f"{_one_line(c.core)} {_ms(c.time_us)} ms ({c.time_us / whole * 100:.1f}%, "
        f"{c.count} tasks)" for c in cores))


def _hccl(summary: Summary, echo: list[str]) -> None:
    if summary.hccl_ops:
        echo.append("HCCL by operation: " + ", ".join(
            f"{o.op} x{o.count} {o.elapse_ms:.1f} ms (wait {o.wait_share * 100:.0f}%)"
            for o in summary.hccl_ops[:8]))
    moving = [t for t in summary.transports if t.time_ms > 0 or t.size_mb > 0]
    if moving:
        echo.append("HCCL by transport: " + ", ".join(
            f"{t.transport} {t.size_mb:.3f} MB in {t.time_ms:.3f} ms = {t.bandwidth_gbps:.2f} GB/s"
            for t in moving))


def _copies(summary: Summary, echo: list[str]) -> None:
    copies = summary.copies
    if copies is None:
        return
    where = " (host memory: no device here)" if summary.host_only else ""
    parts = []
    if copies.acl_recorded:
        parts.append(f"{copies.memcpy_calls} aclrtMemcpy ({_ms(copies.memcpy_us)} ms), "
                     f"{copies.syncs} stream/device syncs ({_ms(copies.sync_us)} ms)")
    else:
        parts.append("aclrtMemcpy and syncs not recorded (no AscendCL layer in the trace)")
    if copies.host_ops_recorded:
        parts.append(f"{copies.scalar_reads} .item() reads ({_ms(copies.scalar_read_us)} ms), "
                     f"{copies.to_device_calls} aten::to ({_ms(copies.to_device_us)} ms)")
    else:
        parts.append(".item() and aten::to not recorded (no host operators in the trace)")
    echo.append(f"host-device{where}: " + ", ".join(parts))


def _run(summary: Summary, echo: list[str]) -> None:
    run = summary.run
    if not run:
        return
    if "hosts" in run:
        for name, host in run["hosts"].items():
            state = host.get("error") or ("timed out" if host.get("timed_out")
                                          else f"exited {host.get('returncode')}")
            echo.append(f"run on {name}: {state}; output in {host.get('output')}")
        return
    state = "timed out" if run.get("timed_out") else f"exited {run.get('returncode')}"
    echo.append(f"run: {state} after {run.get('seconds')} s; log {run.get('log')}")
    for note in run.get("notes", [])[:6]:
        echo.append(f"  {note}")


def _findings(summary: Summary, echo: list[str]) -> None:
    if not summary.findings:
        echo.append("findings: none past the published thresholds")
        return
    echo.append("findings:")
    for finding in summary.findings:
        echo.append(f"  {MARKS.get(finding.severity, finding.severity):<4}  {finding.id}: "
                    f"{finding.message}")
        echo.append(f"        threshold {_threshold(finding)}: {finding.source}")
        echo.append(f"        try: {finding.advice}")
        if finding.doctor_checks:
            only = " ".join(f"--only {c}" for c in finding.doctor_checks)
            echo.append(f"        check: ascend-env doctor {only}")


def _threshold(finding: Finding) -> str:
    value = finding.threshold
    if isinstance(value, float) and finding.unit == "ratio":
        return f"{value * 100:g}%"
    if isinstance(value, float) and finding.unit == "us":
        return f"{value:g} us"
    return str(value)


def _files(summary: Summary, echo: list[str]) -> None:
    for missing in summary.absent:
        echo.append(f"absent: {_one_line(missing)}")
    echo.append(f"files: {len(summary.files)} read, {len(summary.unread)} not read")
    for read in summary.files:
        if read.note:
            echo.append(f"  read: {read.path}: {_one_line(read.note)}")
    unused = [n for n in summary.unread if n.kind == "unused"]
    others = [n for n in summary.unread if n.kind != "unused"]
    for note in others[:8]:
        echo.append(f"  not read: {note.path}: {_one_line(note.note)}")
    if len(others) > 8:
        echo.append(f"  ... {len(others) - 8} more not read (--json lists all)")
    if unused:
        names = sorted({n.path.rsplit("/", 1)[-1] for n in unused})
        echo.append(f"  not used by perf: {len(unused)} files the profiler writes ("
                    + ", ".join(names[:6]) + (", ..." if len(names) > 6 else "") + ")")
    for path, columns in summary.unknown_columns.items():
        echo.append(f"  unknown columns in {path}: {', '.join(columns[:12])}")
    if summary.raw_output:
        echo.append(f"raw output: {summary.raw_output} (open the trace in MindStudio Insight or "
                    "https://ui.perfetto.dev)")


def render(summary: Summary, *, as_json: bool) -> None:
    """The summary on stdout: JSON (ascend-env/perf/v1) or the terminal lines."""
    if as_json:
        typer.echo(json.dumps(summary.to_json(), indent=2, ensure_ascii=False))
        return
    for line in lines(summary):
        typer.echo(line)
