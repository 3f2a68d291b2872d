"""The summary of a profiler output: plain dataclasses, times in microseconds as the vendor's
files hold them (the views convert to ms)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

SCHEMA = "ascend-env/perf/v1"


@dataclass
class StepSplit:
    """One rank's step time, split as the profiler's step_trace_time.csv splits it (us, mean
    per step over `steps` steps)."""

    rank: str
    steps: int
    computing: float
    communication_not_overlapped: float
    overlapped: float
    free: float
    preparing: float | None = None
    bubble: float | None = None
    source: str = ""

    @property
    def total(self) -> float:
        """The step's time as msprof-analyze's slow-rank analysis sums it: computing,
        communication not overlapped and free (msprof_analyze/advisor/dataset/cluster/
        cluster_dataset.py, ClusterStepTraceTimeDataset)."""
        return self.computing + self.communication_not_overlapped + self.free


@dataclass
class RankSpread:
    """How far the ranks' step times are apart."""

    slowest_rank: str
    fastest_rank: str
    spread: float  # (slowest - fastest) / mean step time
    # per part (computing, communication, free): (max - min) / mean step time, as
    # msprof-analyze's slow-rank analysis computes it
    gaps: dict[str, float] = field(default_factory=dict)


@dataclass
class CoreTime:
    """Device time on one core type (AI_CORE, AI_VECTOR_CORE, MIX_AIC, AI_CPU, HCCL, ...)."""

    core: str
    count: int
    time_us: float


@dataclass
class Kernel:
    """Operators or kernels of one kind with one input signature, summed."""

    name: str
    type: str
    core: str
    count: int
    total_us: float
    max_us: float
    input_shapes: str = ""
    input_dtypes: str = ""
    output_shapes: str = ""
    output_dtypes: str = ""


@dataclass
class KernelType:
    """Every kernel of one type (its name where the profiler wrote no type, as at Level0),
    over all its input signatures."""

    type: str
    count: int
    total_us: float
    max_us: float
    signatures: int  # distinct input shapes and dtypes
    cores: list[str] = field(default_factory=list)


@dataclass
class HcclOp:
    """Communication operators of one kind (allReduce, broadcast, ...)."""

    op: str
    count: int
    elapse_ms: float
    wait_ms: float
    transit_ms: float

    @property
    def wait_share(self) -> float:
        return self.wait_ms / self.elapse_ms if self.elapse_ms > 0 else 0.0


@dataclass
class Transport:
    """Bytes and time over one link type (HCCS, PCIE, RDMA/RoCE, SDMA), for one rank or all."""

    transport: str
    rank: str | None
    size_mb: float
    time_ms: float

    @property
    def bandwidth_gbps(self) -> float:
        """MB per ms, the unit communication.json's own Bandwidth(GB/s) is computed in."""
        return self.size_mb / self.time_ms if self.time_ms > 0 else 0.0


@dataclass
class Copies:
    """Host-device traffic and the host waiting on the device."""

    memcpy_calls: int = 0
    memcpy_us: float = 0.0
    syncs: int = 0  # aclrtSynchronizeStream/Device: the host blocks until the device is done
    sync_us: float = 0.0
    scalar_reads: int = 0  # aten::item / _local_scalar_dense: a blocking device-to-host read
    scalar_read_us: float = 0.0
    to_device_calls: int = 0  # aten::to / aten::copy_ seen on the host
    to_device_us: float = 0.0
    bytes_known: int | None = None  # from record_shapes (Input Dims x dtype), where recorded
    # Which layers the trace recorded: a count of zero is a measurement only where its layer
    # was recorded (AscendCL for memcpy and syncs, host operators for .item() and aten::to).
    acl_recorded: bool = True
    host_ops_recorded: bool = True


@dataclass
class Finding:
    """A figure past a published threshold: what was seen, the rule, its source, what to try."""

    id: str
    severity: str  # "warn" or "info"
    message: str
    observed: float | str
    threshold: float | str
    source: str
    advice: str
    unit: str = ""  # "ratio" (of a step), "us", or "" for a count or a setting
    doctor_checks: list[str] = field(default_factory=list)  # ids or categories


@dataclass
class FileNote:
    """A file the summary read or could not read (never silently dropped)."""

    path: str
    kind: str
    rank: str | None = None
    note: str = ""


@dataclass
class Summary:
    """Everything `perf` says about one profiler output."""

    source: str
    kind: str  # torch_npu, msprof, cluster, torch.profiler
    host_only: bool
    steps: list[StepSplit] = field(default_factory=list)
    host_steps_us: list[float] = field(default_factory=list)  # ProfilerStep#N wall times
    spread: RankSpread | None = None
    core_types: list[CoreTime] = field(default_factory=list)  # from kernel tables only
    task_types: list[CoreTime] = field(default_factory=list)  # a trace's hardware tasks
    kernel_types: list[KernelType] = field(default_factory=list)  # every type, not only the top
    top_kernels: list[Kernel] = field(default_factory=list)
    top_host_ops: list[Kernel] = field(default_factory=list)
    ai_cpu: list[Kernel] = field(default_factory=list)
    cpu_fallbacks: dict[str, list[str]] | None = None  # op -> ranks; None: no run log read
    hccl_ops: list[HcclOp] = field(default_factory=list)
    transports: list[Transport] = field(default_factory=list)
    rank_transports: list[Transport] = field(default_factory=list)
    copies: Copies | None = None
    findings: list[Finding] = field(default_factory=list)
    files: list[FileNote] = field(default_factory=list)
    unread: list[FileNote] = field(default_factory=list)
    absent: list[str] = field(default_factory=list)  # figures missing, and why
    unknown_columns: dict[str, list[str]] = field(default_factory=dict)
    raw_output: str | None = None
    run: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """The `ascend-env/perf/v1` document."""
        document: dict[str, Any] = {"schema": SCHEMA}
        document.update(asdict(self))
        document["steps"] = [dict(asdict(s), total=s.total) for s in self.steps]
        document["hccl_ops"] = [dict(asdict(o), wait_share=o.wait_share)
                                for o in self.hccl_ops]
        for key in ("transports", "rank_transports"):
            document[key] = [dict(asdict(t), bandwidth_gbps=t.bandwidth_gbps)
                             for t in getattr(self, key)]
        return document
