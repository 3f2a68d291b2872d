"""The JSON evidence the smoke workloads print, as pydantic models (the controller's side).

Field names and meanings are those of docs/smoke.md. Unknown fields are
ignored, so a newer workload's extra evidence does not break an older controller; the raw
document travels with the verdict anyway.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from ascend_env.explain.inline import explain_text

TORCH_SCHEMA = "ascend-env/smoke/torch/v1"
MINDSPORE_SCHEMA = "ascend-env/smoke/mindspore/v1"
HCCL_SCHEMA = "ascend-env/smoke/hccl/v1"
SCHEMAS = (TORCH_SCHEMA, MINDSPORE_SCHEMA, HCCL_SCHEMA)

Status = Literal["ok", "failed", "unavailable", "timeout", "error", "running"]
Missing = Literal["torch", "mindspore", "torch_npu", "cann", "driver", "device"]


class _Part(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class Placement(_Part):
    """Where the tensors were, read from the tensors themselves."""

    parameters: list[str] = Field(default_factory=list)
    batches: list[str] = Field(default_factory=list)
    loss: str | None = None
    context: str | None = None
    source: str | None = None


class LossSummary(_Part):
    """The workload's own reading of the curve (the verdict recomputes it)."""

    fell: bool
    first: float | None = None
    last: float | None = None
    drop: float | None = None
    window: int = 0
    non_finite: int = 0


class Training(_Part):
    """The training loop: loss per step and speed."""

    steps: int
    loss: list[float | None]
    steps_per_s: float | None = None
    seconds: float | None = None
    first_step_s: float | None = None
    summary: LossSummary | None = None


class MatmulCheck(_Part):
    """A float32 matmul compared element-wise with a float64 reference on the host."""

    shape: list[int]
    dtype: str
    device: str
    atol: float
    rtol: float
    max_abs_err: float | None
    elements: int
    mismatches: int
    ok: bool


class Throughput(_Part):
    """Repeated n x n matmuls in the training precision, timed."""

    dtype: str
    n: int
    iterations: int
    seconds: float
    tflops: float | None
    device: str
    peak_tflops: float | None = None
    sample_rel_err: float | None = None
    sample_tolerance: float
    sample_ok: bool


class Memory(_Part):
    """Peak device memory the framework allocated."""

    peak_allocated_bytes: int | None
    source: str
    host_max_rss_bytes: int | None = None


class ProcessTable(_Part):
    """Whether the device management tool (npu-smi, nvidia-smi) listed the workload's pid."""

    tool: str
    rc: int | None
    error: str | None = None
    pid: int
    seen: bool | None
    rows: int = 0
    npus: list[int] = Field(default_factory=list)


class Fallbacks(_Part):
    """Operators that ran on the host CPU or on the NPU's AI CPU, as the framework reported."""

    cpu_ops: list[str] | None = None
    aicpu_ops: list[str] | None = None
    aicpu_error: str | None = None
    cpu_ops_source: str | None = None
    aicpu_source: str | None = None


class ParityRow(_Part):
    """One tensor of the parity model compared with its float64 reference."""

    name: str
    op: str
    dtype: str
    phase: Literal["forward", "backward"]
    tensor: str
    shape: list[int] = Field(default_factory=list)
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    scaled_err: float | None = None  # null: not finite, or the tensor is missing
    cosine: float | None = None
    threshold: float
    threshold_dtype: str | None = None
    status: Literal["pass", "fail", "consequence"]


class ParityDivergence(_Part):
    """The first comparison out of tolerance, and the later ones that follow from it."""

    name: str
    op: str
    dtype: str
    phase: str
    tensor: str
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    scaled_err: float | None = None
    threshold: float
    consequences: list[str] = Field(default_factory=list)
    rank: int | None = None
    device: str | None = None


class ParityRun(_Part):
    """The parity model in one dtype on one device."""

    dtype: str
    device: str
    rows: list[ParityRow] = Field(default_factory=list)
    first_divergence: ParityDivergence | None = None
    reduced_fp32: dict[str, Any] = Field(default_factory=dict)


class ParityRank(_Part):
    """One parity worker process (one device)."""

    rank: int
    device: str | None = None
    pid: int | None = None
    status: str
    reason: str | None = None
    cpu_fallback_ops: list[str] = Field(default_factory=list)
    runs: list[ParityRun] = Field(default_factory=list)
    log_tail: str | None = None


class ParityFallbacks(_Part):
    """Operators any parity worker reported as run on the CPU, per rank."""

    per_rank: dict[str, list[str]] = Field(default_factory=dict)
    ops: list[str] = Field(default_factory=list)
    source: str | None = None
    collected: bool = True  # False: the framework does not report them (MindSpore)


class Parity(_Part):
    """`--parity`: the fixed model per layer against float64 on the CPU, on every device."""

    model: str | None = None
    reference: str | None = None
    seed: int | None = None
    dtypes: list[str] = Field(default_factory=list)
    thresholds: dict[str, Any] = Field(default_factory=dict)
    ranks: list[ParityRank] = Field(default_factory=list)
    first_divergence: ParityDivergence | None = None
    fallbacks: ParityFallbacks | None = None
    status: str
    reason: str | None = None


class DeviceRun(_Part):
    """Everything measured on one device; parts are absent when the run stopped early."""

    device: str
    status: Status
    reason: str | None = None
    device_name: str | None = None
    precision: str | None = None
    training: Training | None = None
    placement: Placement | None = None
    matmul_check: MatmulCheck | None = None
    throughput: Throughput | None = None
    memory: Memory | None = None
    process_table: ProcessTable | None = None


class _Document(_Part):
    schema_: str = Field(alias="schema")
    status: Status
    reason: str | None = None
    missing: list[Missing] = Field(default_factory=list)
    requested: dict[str, Any]
    environment: dict[str, Any]
    phase: str | None = None
    duration_s: float | None = None
    log_tail: str | None = None
    traceback: str | None = None


class TrainingEvidence(_Document):
    """The torch and MindSpore workloads' document."""

    schema_: Literal["ascend-env/smoke/torch/v1", "ascend-env/smoke/mindspore/v1"] = Field(
        alias="schema")
    framework: Literal["torch", "mindspore"]
    runs: list[DeviceRun] = Field(default_factory=list)
    fallbacks: Fallbacks | None = None
    parity: Parity | None = None


class Rank(_Part):
    """One all-reduce process."""

    rank: int
    device: str | None
    pid: int | None = None
    status: Status
    reason: str | None = None
    log_tail: str | None = None  # kept for ranks that did not end "ok"


class CollectiveResult(_Part):
    """One buffer size: correctness on every rank and the slowest rank's time."""

    bytes: int
    iterations: int
    ranks_reporting: int
    correct: bool
    wrong_elements: int
    time_s: float
    algbw_gbps: float
    busbw_gbps: float


class CollectiveEvidence(_Document):
    """The hccl workload's document."""

    schema_: Literal["ascend-env/smoke/hccl/v1"] = Field(alias="schema")
    framework: Literal["hccl"]
    backend: str | None = None
    world_size: int | None = None
    ranks: list[Rank] = Field(default_factory=list)
    results: list[CollectiveResult] = Field(default_factory=list)


Evidence = Annotated[TrainingEvidence | CollectiveEvidence, Field(discriminator="framework")]
_ADAPTER: TypeAdapter[TrainingEvidence | CollectiveEvidence] = TypeAdapter(Evidence)


def parse_evidence(document: dict[str, Any]) -> TrainingEvidence | CollectiveEvidence:
    """Validate a workload's JSON document (pydantic.ValidationError when it does not fit)."""
    return _ADAPTER.validate_python(document)


def failure_logs(document: dict[str, Any]) -> list[str]:
    """The failure text a workload document carries: the reason it did not end well, its log
    tail and traceback, and the same of every rank, parity workers' included (what `explain`
    reads in place)."""
    texts: list[Any] = [document.get("log_tail"), document.get("traceback")]
    if document.get("status") != "ok":
        texts.insert(0, document.get("reason"))
    parity = document.get("parity")
    for ranks in (document.get("ranks"), parity.get("ranks") if isinstance(parity, dict) else None):
        if isinstance(ranks, list):
            for rank in ranks:
                if isinstance(rank, dict) and rank.get("status") != "ok":
                    texts += [rank.get("reason"), rank.get("log_tail")]
    return [t for t in texts if isinstance(t, str) and t]


def explained(document: dict[str, Any]) -> list[dict[str, Any]]:
    """The known Ascend error signatures in the document's failure logs."""

    return explain_text(*failure_logs(document))
