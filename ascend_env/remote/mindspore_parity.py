"""The parity model for MindSpore: forward only, against a float64 NumPy reference.

Shipped beside mindspore_workload.py (standard library + MindSpore and its numpy, Python 3.8+).
The same layers and sizes as torch_parity.py, through `mindspore.ops` in PyNative calls. What
MindSpore cannot do here, and why (docs/smoke.md, Parity): its CPU kernels have no float64
Conv2D, BatchNorm or LayerNorm, so the float64 reference is computed with NumPy, forward
only; the gradients have no float64 reference and are not compared.
"""

from __future__ import annotations

import contextlib
import math
import os
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Tuple

if TYPE_CHECKING:
    from . import parity_rules, parity_workers
else:
    try:  # beside the workload on a target
        import parity_rules
        import parity_workers
    except ImportError:  # imported from the package (tests, the controller)
        from . import parity_rules, parity_workers

BATCH, TOKENS, VOCAB = parity_rules.BATCH, parity_rules.TOKENS, parity_rules.VOCAB
WIDTH, HEADS, HIDDEN = parity_rules.WIDTH, parity_rules.HEADS, parity_rules.HIDDEN
IMAGE, CHANNELS, FILTERS = parity_rules.IMAGE, parity_rules.CHANNELS, parity_rules.FILTERS
MSPROBE_SMALL_VALUE = parity_rules.MSPROBE_SMALL_VALUE

EPS = 1e-5  # layer norm and batch norm, as both frameworks default
FALLBACKS_NOT_COLLECTED = ("not collected: MindSpore reports operators that ran on the host "
                           "only through its profiler, which the workload does not run")
Layer = Tuple[str, str, Any]  # name, op, output as a float64 NumPy array


def make_case(np: Any, seed: int) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """float64 weights and inputs from one seed (NumPy's generator)."""
    rng = np.random.default_rng(seed)

    def normal(*shape: int, scale: float = 1.0, offset: float = 0.0) -> Any:
        return rng.standard_normal(shape) * scale + offset

    params: Dict[str, Any] = {"embedding.weight": normal(VOCAB, WIDTH)}
    for norm in ("ln1", "ln2", "ln3"):
        params[f"{norm}.weight"] = normal(WIDTH, scale=0.1, offset=1.0)
        params[f"{norm}.bias"] = normal(WIDTH, scale=0.1)
    for name, fan_in, fan_out in (("attn.qkv", WIDTH, 3 * WIDTH), ("attn.proj", WIDTH, WIDTH),
                                  ("mlp.fc1", WIDTH, HIDDEN), ("mlp.fc2", HIDDEN, WIDTH),
                                  ("swiglu.gate", WIDTH, HIDDEN), ("swiglu.up", WIDTH, HIDDEN),
                                  ("swiglu.down", HIDDEN, WIDTH), ("conv.proj", FILTERS, WIDTH),
                                  ("head", WIDTH, VOCAB)):
        params[f"{name}.weight"] = normal(fan_out, fan_in, scale=fan_in ** -0.5)
        params[f"{name}.bias"] = normal(fan_out, scale=0.1)
    params["conv.weight"] = normal(FILTERS, CHANNELS, 3, 3, scale=(CHANNELS * 9) ** -0.5)
    params["batch_norm.weight"] = normal(FILTERS, scale=0.1, offset=1.0)
    params["batch_norm.bias"] = normal(FILTERS, scale=0.1)
    inputs = {"tokens": rng.integers(0, VOCAB, (BATCH, TOKENS)),
              "image": normal(BATCH, CHANNELS, IMAGE, IMAGE),
              "labels": rng.integers(0, VOCAB, (BATCH,))}
    return params, inputs


class Ops:
    """The model's operators, once in NumPy float64 (ms None) and once through mindspore.ops."""

    def __init__(self, np: Any, ms: Any = None, dtype: Any = None) -> None:
        self.np, self.ms, self.dtype = np, ms, dtype
        self.ops = None if ms is None else ms.ops
        self.erf: Callable[[Any], Any] = np.vectorize(math.erf)

    def tensor(self, value: Any) -> Any:
        """A parameter or input as this side computes with it."""
        if self.ms is None:
            return value
        if value.dtype.kind == "i":
            return self.ms.Tensor(value.astype(self.np.int32))
        return self.ms.Tensor(value.astype(self.np.float32)).astype(self.dtype)

    def host(self, value: Any) -> Any:
        """A result as float64 NumPy."""
        return value if self.ms is None else value.astype(self.ms.float32).asnumpy().astype(
            self.np.float64)

    def linear(self, x: Any, w: Any, b: Any) -> Any:
        return x @ w.T + b if self.ops is None else self.ops.dense(x, w, b)

    def layer_norm(self, x: Any, w: Any, b: Any) -> Any:
        if self.ops is None:
            mean = x.mean(axis=-1, keepdims=True)
            return (x - mean) / self.np.sqrt(x.var(axis=-1, keepdims=True) + EPS) * w + b
        # ops.layer_norm (LayerNormExt) has no CPU kernel in MindSpore 2.10; the primitive has.
        return self.ops.LayerNorm(-1, -1, EPS)(x, w, b)[0]

    def softmax(self, x: Any) -> Any:
        if self.ops is None:
            shifted = self.np.exp(x - x.max(axis=-1, keepdims=True))
            return shifted / shifted.sum(axis=-1, keepdims=True)
        return self.ops.softmax(x, -1)

    def gelu(self, x: Any) -> Any:
        if self.ops is None:
            return 0.5 * x * (1.0 + self.erf(x / math.sqrt(2.0)))
        return self.ops.gelu(x, approximate="none")

    def silu(self, x: Any) -> Any:
        return x / (1.0 + self.np.exp(-x)) if self.ops is None else self.ops.silu(x)

    def matmul(self, a: Any, b: Any) -> Any:
        return a @ b if self.ops is None else self.ops.matmul(a, b)

    # Primitives (ops.Reshape, ops.Transpose, ops.split) rather than Tensor slicing and
    # methods, which parse their arguments through MindSpore's NumPy interop.
    def permute(self, x: Any, axes: Tuple[int, ...]) -> Any:
        return self.np.transpose(x, axes) if self.ops is None else self.ops.Transpose()(x, axes)

    def reshape(self, x: Any, shape: Tuple[int, ...]) -> Any:
        return self.np.reshape(x, shape) if self.ops is None else self.ops.Reshape()(x, shape)

    def split3(self, x: Any) -> Any:
        return self.np.split(x, 3, axis=-1) if self.ops is None else self.ops.split(x, WIDTH, -1)

    def mean(self, x: Any, axes: Any) -> Any:
        return x.mean(axis=axes) if self.ops is None else x.mean(axes)

    def embedding(self, w: Any, tokens: Any) -> Any:
        return w[tokens] if self.ops is None else self.ops.gather(w, self.tensor(tokens), 0)

    def conv(self, x: Any, w: Any) -> Any:
        if self.ops is None:
            return _conv(self.np, x, w)
        return self.ops.conv2d(x, w, pad_mode="pad", padding=1)

    def cross_entropy(self, logits: Any, labels: Any) -> Any:
        if self.ops is None:
            np = self.np
            shifted = logits - logits.max(axis=-1, keepdims=True)
            logp = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
            return -logp[np.arange(BATCH), labels].mean()
        return self.ops.cross_entropy(logits, self.tensor(labels))


def forward(o: Ops, p: Dict[str, Any], inputs: Dict[str, Any]) -> List[Layer]:
    """The parity model; each layer's output kept (float64 NumPy) in forward order."""
    t = {name: o.tensor(value) for name, value in p.items()}
    layers: List[Layer] = []

    def rec(name: str, op: str, value: Any) -> Any:
        layers.append((name, op, o.host(value)))
        return value

    def linear(x: Any, name: str) -> Any:
        return rec(name, "linear", o.linear(x, t[f"{name}.weight"], t[f"{name}.bias"]))

    def norm(x: Any, name: str) -> Any:
        return rec(name, "layer_norm", o.layer_norm(x, t[f"{name}.weight"], t[f"{name}.bias"]))

    head_dim = WIDTH // HEADS
    x = rec("embedding", "embedding", o.embedding(t["embedding.weight"], inputs["tokens"]))
    q, k, v = (o.permute(o.reshape(part, (BATCH, TOKENS, HEADS, head_dim)), (0, 2, 1, 3))
               for part in o.split3(linear(norm(x, "ln1"), "attn.qkv")))
    scores = rec("attn.scores", "matmul",
                 o.matmul(q, o.permute(k, (0, 1, 3, 2))) * head_dim ** -0.5)
    probs = rec("attn.softmax", "softmax", o.softmax(scores))
    context = rec("attn.context", "matmul", o.matmul(probs, v))
    x = x + linear(o.reshape(o.permute(context, (0, 2, 1, 3)), (BATCH, TOKENS, WIDTH)),
                   "attn.proj")
    h = rec("mlp.gelu", "gelu", o.gelu(linear(norm(x, "ln2"), "mlp.fc1")))
    x = x + linear(h, "mlp.fc2")
    h = norm(x, "ln3")
    gate = rec("swiglu.silu", "silu", o.silu(linear(h, "swiglu.gate")))
    x = x + linear(gate * linear(h, "swiglu.up"), "swiglu.down")
    c = rec("conv", "conv2d", o.conv(o.tensor(inputs["image"]), t["conv.weight"]))
    c = rec("batch_norm", "batch_norm", _batch_norm(o, c, t))
    c = o.mean(rec("conv.gelu", "gelu", o.gelu(c)), (2, 3))
    logits = linear(o.mean(x, 1) + linear(c, "conv.proj"), "head")
    rec("loss", "cross_entropy", o.cross_entropy(logits, inputs["labels"]))
    return layers


def _conv(np: Any, x: Any, w: Any) -> Any:
    """3x3 convolution, padding 1, stride 1, no bias: nine shifted products."""
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((x.shape[0], w.shape[0], x.shape[2], x.shape[3]))
    for i in range(3):
        for j in range(3):
            window = padded[:, :, i:i + x.shape[2], j:j + x.shape[3]]
            out += np.einsum("bchw,oc->bohw", window, w[:, :, i, j])
    return out


def _batch_norm(o: Ops, x: Any, t: Dict[str, Any]) -> Any:
    """Batch norm on the batch's own statistics (training mode)."""
    np, weight, bias = o.np, t["batch_norm.weight"], t["batch_norm.bias"]
    if o.ms is None:
        mean = x.mean(axis=(0, 2, 3), keepdims=True)
        var = x.var(axis=(0, 2, 3), keepdims=True)
        return ((x - mean) / np.sqrt(var + EPS) * weight[None, :, None, None]
                + bias[None, :, None, None])
    stats = o.tensor(np.zeros(FILTERS)), o.tensor(np.ones(FILTERS))
    return o.ms.ops.batch_norm(x, stats[0], stats[1], weight, bias, training=True, eps=EPS)


def run_parity(ms: Any, np: Any, dtype_name: str, seed: int, device: str) -> Dict[str, Any]:
    """One dtype on the device MindSpore is bound to: forward rows and the first divergence."""
    params, inputs = make_case(np, seed)
    # A MindSpore built against NumPy 1 beside NumPy 2 fails its first tuple argument once
    # ("Numpy init failed"), then parses them all.
    with contextlib.suppress(RuntimeError, SystemError, ImportError):
        ms.ops.Reshape()(ms.Tensor(np.zeros(2, np.float32)), (2, 1))
    reference = forward(Ops(np), params, inputs)
    observed = forward(Ops(np, ms, getattr(ms, dtype_name)), params, inputs)
    limit, basis = parity_rules.threshold_for(dtype_name, False)
    rows = []
    for (name, op, ref), (_, _, got) in zip(reference, observed):
        numbers = figures(np, ref, got, dtype_name)
        rows.append({"name": name, "op": op, "dtype": dtype_name, "phase": "forward",
                     "tensor": "output", "shape": list(ref.shape), **numbers,
                     "threshold": limit, "threshold_dtype": basis,
                     "status": "pass" if numbers["scaled_err"] <= limit else "fail"})
    first = parity_rules.mark_divergence(rows)
    return {"dtype": dtype_name, "device": device, "reference": "float64 (numpy) on the host",
            "seed": seed, "rows": rows, "first_divergence": first,
            "reduced_fp32": {"format": None, "conv": False, "matmul": False,
                             "source": "not read: MindSpore exposes no HF32 switch here"},
            "backward": "not compared: no float64 reference for MindSpore's gradients",
            "status": "ok" if first is None else "diverged"}


def figures(np: Any, ref: Any, got: Any, dtype_name: str) -> Dict[str, Any]:
    """The same figures as torch_parity.figures, in NumPy."""
    if got.shape != ref.shape or not np.all(np.isfinite(got)):
        bad = None if got.shape != ref.shape else int(np.count_nonzero(~np.isfinite(got)))
        return {"max_abs_err": None, "max_rel_err": None, "scaled_err": math.inf,
                "cosine": None, "non_finite": bad}
    diff = np.abs(got - ref)
    magnitude = np.abs(ref)
    largest = float(magnitude.max()) if magnitude.size else 0.0
    max_abs = float(diff.max()) if diff.size else 0.0
    big = magnitude >= MSPROBE_SMALL_VALUE[dtype_name]
    rel = float((diff[big] / magnitude[big]).max()) if bool(big.any()) else None
    norms = float(np.linalg.norm(got)) * float(np.linalg.norm(ref))
    cosine = float((got * ref).sum()) / norms if norms > 0 else None
    return {"max_abs_err": max_abs, "max_rel_err": rel,
            "scaled_err": max_abs / largest if largest > 0 else max_abs,
            "cosine": cosine, "non_finite": 0}


def section(ms: Any, np: Any, dtypes: List[str], seed: int, *, device: str,
            rank: int) -> Dict[str, Any]:
    """The `parity` section of one MindSpore process (one device)."""
    record: Dict[str, Any] = {"rank": rank, "device": device, "pid": os.getpid(),
                              "status": "ok", "reason": None, "cpu_fallback_ops": [],
                              "runs": []}
    try:
        for name in dtypes:
            record["runs"].append(run_parity(ms, np, name, seed, device))
    except Exception as exc:  # an operator without a kernel for this dtype, on this device
        record.update(status="error", reason=f"{type(exc).__name__}: "
                                             f"{str(exc).strip().splitlines()[0][:500]}")
    return assemble([record], dtypes, seed)


def assemble(ranks: List[Dict[str, Any]], dtypes: List[str], seed: int) -> Dict[str, Any]:
    """Ranks (one per process) into the section the verdict reads."""
    merged = parity_workers.merge(ranks)
    merged["fallbacks"].update(source=FALLBACKS_NOT_COLLECTED, collected=False, environment=None)
    return {"model": parity_rules.DESCRIPTION + "; forward only",
            "reference": "float64 (numpy) on the host", "seed": seed, "dtypes": dtypes,
            "thresholds": parity_rules.thresholds(), **merged, "ranks": ranks}
