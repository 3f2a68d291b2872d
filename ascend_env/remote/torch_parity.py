"""Numeric parity of a fixed small model: the device against a float64 CPU reference.

Shipped beside torch_workload.py (standard library + torch only, Python 3.8+). The model
covers the operator families training jobs use: embedding, layer norm, a multi-head attention
(linear, matmul, softmax), a GELU MLP, a SiLU-gated MLP, a convolution with batch norm and
GELU, a linear head and a cross-entropy loss. The same float64 weights and inputs (seeded) run
forward and backward once in float64 on the CPU and once in the device's dtype on the device;
every layer's output, the gradient reaching it and its parameters' gradients are compared.

Every layer calls torch.nn.functional through the module attribute (`F.layer_norm(...)` at
call time), so an operator wrapped in the process (a profiler, a test's fault) is the one run.
"""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

if TYPE_CHECKING:
    import torch

    from . import harness, op_fallbacks, parity_rules, parity_workers
else:
    try:  # beside the workload on a target
        import harness
        import op_fallbacks
        import parity_rules
        import parity_workers
    except ImportError:  # imported from the package (tests, the controller)
        from . import harness, op_fallbacks, parity_rules, parity_workers

BATCH, TOKENS, VOCAB = parity_rules.BATCH, parity_rules.TOKENS, parity_rules.VOCAB
WIDTH, HEADS, HIDDEN = parity_rules.WIDTH, parity_rules.HEADS, parity_rules.HIDDEN
IMAGE, CHANNELS, FILTERS = parity_rules.IMAGE, parity_rules.CHANNELS, parity_rules.FILTERS
MSPROBE_SMALL_VALUE = parity_rules.MSPROBE_SMALL_VALUE


def run_parity(device: Any, dtype_name: str, seed: int) -> Dict[str, Any]:
    """One dtype on one device: per-layer rows and the first divergence."""
    import torch  # noqa: PLC0415

    reduced = reduced_fp32(device)
    params, inputs = make_case(seed)
    reference = execute(params, inputs, torch.float64, torch.device("cpu"))
    dtype = getattr(torch, dtype_name)
    observed = execute(params, inputs, dtype, device)
    rows = compare(reference, observed, dtype_name, reduced)
    first = parity_rules.mark_divergence(rows)
    return {"dtype": dtype_name, "device": str(observed["device"]),
            "reference": "float64 on cpu", "seed": seed, "reduced_fp32": reduced,
            "rows": rows, "first_divergence": first,
            "status": "ok" if first is None else "diverged"}


def reduced_fp32(device: Any) -> Dict[str, Any]:
    """Whether fp32 convolutions / matmuls may run in HF32 (NPU) or TF32 (CUDA) here."""
    import torch  # noqa: PLC0415

    kind = getattr(device, "type", str(device))
    if kind == "npu":
        npu = getattr(torch, "npu", None)
        conv = getattr(getattr(npu, "conv", None), "allow_hf32", None)
        matmul = getattr(getattr(npu, "matmul", None), "allow_hf32", None)
        return {"format": "hf32", "conv": bool(conv) if conv is not None else True,
                "matmul": bool(matmul) if matmul is not None else False,
                "source": "torch.npu.conv.allow_hf32 / torch.npu.matmul.allow_hf32"
                          + ("" if conv is not None else " (not readable: default assumed)")}
    if kind == "cuda":
        return {"format": "tf32", "conv": bool(torch.backends.cudnn.allow_tf32),
                "matmul": bool(torch.backends.cuda.matmul.allow_tf32),
                "source": "torch.backends.cudnn.allow_tf32 / torch.backends.cuda.matmul.allow_tf32"}
    return {"format": None, "conv": False, "matmul": False, "source": "cpu: full fp32"}


def make_case(seed: int) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """float64 weights and inputs from one seed."""
    import torch  # noqa: PLC0415

    gen = torch.Generator().manual_seed(seed)

    def normal(*shape: int, scale: float = 1.0, offset: float = 0.0) -> torch.Tensor:
        return torch.randn(*shape, generator=gen, dtype=torch.float64) * scale + offset

    def linear(name: str, fan_in: int, fan_out: int) -> None:
        params[f"{name}.weight"] = normal(fan_out, fan_in, scale=fan_in ** -0.5)
        params[f"{name}.bias"] = normal(fan_out, scale=0.1)

    params: Dict[str, Any] = {"embedding.weight": normal(VOCAB, WIDTH)}
    for norm in ("ln1", "ln2", "ln3"):
        params[f"{norm}.weight"] = normal(WIDTH, scale=0.1, offset=1.0)
        params[f"{norm}.bias"] = normal(WIDTH, scale=0.1)
    linear("attn.qkv", WIDTH, 3 * WIDTH)
    linear("attn.proj", WIDTH, WIDTH)
    linear("mlp.fc1", WIDTH, HIDDEN)
    linear("mlp.fc2", HIDDEN, WIDTH)
    linear("swiglu.gate", WIDTH, HIDDEN)
    linear("swiglu.up", WIDTH, HIDDEN)
    linear("swiglu.down", HIDDEN, WIDTH)
    params["conv.weight"] = normal(FILTERS, CHANNELS, 3, 3, scale=(CHANNELS * 9) ** -0.5)
    params["batch_norm.weight"] = normal(FILTERS, scale=0.1, offset=1.0)
    params["batch_norm.bias"] = normal(FILTERS, scale=0.1)
    linear("conv.proj", FILTERS, WIDTH)
    linear("head", WIDTH, VOCAB)
    inputs = {"tokens": torch.randint(0, VOCAB, (BATCH, TOKENS), generator=gen),
              "image": normal(BATCH, CHANNELS, IMAGE, IMAGE),
              "labels": torch.randint(0, VOCAB, (BATCH,), generator=gen)}
    return params, inputs


class Recorder:
    """Keeps each layer's output (gradient retained) in forward order."""

    def __init__(self) -> None:
        self.layers: List[Dict[str, Any]] = []

    def __call__(self, name: str, op: str, tensor: torch.Tensor, *,
                 via_conv: bool = False) -> torch.Tensor:
        if tensor.requires_grad:
            tensor.retain_grad()
        self.layers.append({"name": name, "op": op, "tensor": tensor, "via_conv": via_conv})
        return tensor


def forward(p: Dict[str, Any], inputs: Dict[str, Any], rec: Recorder) -> torch.Tensor:
    """The parity model; every step recorded under its layer name."""
    import torch  # noqa: PLC0415

    F = torch.nn.functional
    x = rec("embedding", "embedding", F.embedding(inputs["tokens"], p["embedding.weight"]))
    h = rec("ln1", "layer_norm", F.layer_norm(x, (WIDTH,), p["ln1.weight"], p["ln1.bias"]))
    qkv = rec("attn.qkv", "linear", F.linear(h, p["attn.qkv.weight"], p["attn.qkv.bias"]))
    head_dim = WIDTH // HEADS
    q, k, v = (part.reshape(BATCH, TOKENS, HEADS, head_dim).transpose(1, 2)
               for part in torch.split(qkv, WIDTH, dim=-1))
    scores = rec("attn.scores", "matmul", torch.matmul(q, k.transpose(-2, -1))
                 * head_dim ** -0.5)
    probs = rec("attn.softmax", "softmax", F.softmax(scores, dim=-1))
    context = rec("attn.context", "matmul", torch.matmul(probs, v))
    merged = context.transpose(1, 2).reshape(BATCH, TOKENS, WIDTH)
    x = x + rec("attn.proj", "linear", F.linear(merged, p["attn.proj.weight"],
                                                p["attn.proj.bias"]))
    h = rec("ln2", "layer_norm", F.layer_norm(x, (WIDTH,), p["ln2.weight"], p["ln2.bias"]))
    h = rec("mlp.fc1", "linear", F.linear(h, p["mlp.fc1.weight"], p["mlp.fc1.bias"]))
    h = rec("mlp.gelu", "gelu", F.gelu(h))
    x = x + rec("mlp.fc2", "linear", F.linear(h, p["mlp.fc2.weight"], p["mlp.fc2.bias"]))
    h = rec("ln3", "layer_norm", F.layer_norm(x, (WIDTH,), p["ln3.weight"], p["ln3.bias"]))
    gate = rec("swiglu.gate", "linear", F.linear(h, p["swiglu.gate.weight"],
                                                 p["swiglu.gate.bias"]))
    gate = rec("swiglu.silu", "silu", F.silu(gate))
    up = rec("swiglu.up", "linear", F.linear(h, p["swiglu.up.weight"], p["swiglu.up.bias"]))
    x = x + rec("swiglu.down", "linear", F.linear(gate * up, p["swiglu.down.weight"],
                                                   p["swiglu.down.bias"]))
    tokens = x.mean(dim=1)
    # The image branch joins only at the head: HF32 convolutions widen the tolerance of what
    # depends on them, not of the transformer's forward.
    c = rec("conv", "conv2d", F.conv2d(inputs["image"], p["conv.weight"], None, padding=1),
            via_conv=True)
    c = rec("batch_norm", "batch_norm", F.batch_norm(c, None, None, p["batch_norm.weight"],
                                                     p["batch_norm.bias"], training=True),
            via_conv=True)
    c = rec("conv.gelu", "gelu", F.gelu(c), via_conv=True).mean(dim=(2, 3))
    image = rec("conv.proj", "linear", F.linear(c, p["conv.proj.weight"], p["conv.proj.bias"]),
                via_conv=True)
    logits = rec("head", "linear", F.linear(tokens + image, p["head.weight"], p["head.bias"]),
                 via_conv=True)
    return rec("loss", "cross_entropy", F.cross_entropy(logits, inputs["labels"]),
               via_conv=True)


def execute(params: Dict[str, Any], inputs: Dict[str, Any], dtype: Any,
            device: Any) -> Dict[str, Any]:
    """Forward and backward once; outputs, output gradients and parameter gradients on the CPU
    in float64 (what was computed where it was computed, then copied)."""
    import torch  # noqa: PLC0415

    leaves = {name: value.detach().to(device=device, dtype=dtype).requires_grad_()
              for name, value in params.items()}
    moved = {"tokens": inputs["tokens"].to(device), "labels": inputs["labels"].to(device),
             "image": inputs["image"].to(device=device, dtype=dtype)}
    rec = Recorder()
    loss = forward(leaves, moved, rec)
    torch.autograd.backward(loss)

    def host(tensor: Optional[torch.Tensor]) -> Optional[torch.Tensor]:
        return None if tensor is None else tensor.detach().cpu().double()

    layers = [{"name": layer["name"], "op": layer["op"], "via_conv": layer["via_conv"],
               "output": host(layer["tensor"]), "grad": host(layer["tensor"].grad),
               "device": str(layer["tensor"].device)} for layer in rec.layers]
    grads = {name: host(leaf.grad) for name, leaf in leaves.items()}
    return {"layers": layers, "param_grads": grads, "device": loss.device}


def figures(reference: torch.Tensor, observed: Optional[torch.Tensor],
            dtype_name: str) -> Dict[str, Any]:
    """Max abs error, msprobe-style max relative error (elements above the small value),
    the judged error scaled by max |reference|, cosine similarity."""
    import torch  # noqa: PLC0415

    if observed is None or observed.shape != reference.shape:
        return {"max_abs_err": None, "max_rel_err": None, "scaled_err": math.inf,
                "cosine": None, "non_finite": None}
    non_finite = int((~torch.isfinite(observed)).sum())
    if non_finite:
        return {"max_abs_err": None, "max_rel_err": None, "scaled_err": math.inf,
                "cosine": None, "non_finite": non_finite}
    diff = (observed - reference).abs()
    magnitude = reference.abs()
    largest = float(magnitude.max()) if magnitude.numel() else 0.0
    max_abs = float(diff.max()) if diff.numel() else 0.0
    big = magnitude >= MSPROBE_SMALL_VALUE[dtype_name]
    rel = float((diff[big] / magnitude[big]).max()) if bool(big.any()) else None
    norms = float(observed.norm()) * float(reference.norm())
    cosine = float((observed * reference).sum()) / norms if norms > 0 else None
    scaled = max_abs / largest if largest > 0 else max_abs
    return {"max_abs_err": max_abs, "max_rel_err": rel, "scaled_err": scaled,
            "cosine": cosine, "non_finite": 0}


def compare(reference: Dict[str, Any], observed: Dict[str, Any], dtype_name: str,
            reduced: Dict[str, Any]) -> List[Dict[str, Any]]:
    """Forward rows in forward order, then backward rows in the order backward runs."""
    rows: List[Dict[str, Any]] = []
    matmul_reduced = bool(reduced.get("matmul"))
    conv_reduced = bool(reduced.get("conv"))
    pairs = list(zip(reference["layers"], observed["layers"]))

    def row(layer: Dict[str, Any], phase: str, tensor: str, pair: Tuple[Any, Any],
            reduced_here: bool) -> None:
        ref, got = pair
        limit, basis = parity_rules.threshold_for(dtype_name, reduced_here)
        numbers = figures(ref, got, dtype_name)
        rows.append({"name": layer["name"], "op": layer["op"], "dtype": dtype_name,
                     "phase": phase, "tensor": tensor, "shape": list(ref.shape),
                     **numbers, "threshold": limit, "threshold_dtype": basis,
                     "status": "pass" if numbers["scaled_err"] <= limit else "fail"})

    for ref, got in pairs:
        reduced_here = matmul_reduced or (conv_reduced and ref["via_conv"])
        row(ref, "forward", "output", (ref["output"], got["output"]), reduced_here)
    # Every gradient flows back from the loss, which depends on the convolution.
    backward_reduced = matmul_reduced or conv_reduced
    for ref, got in reversed(pairs):
        if ref["grad"] is not None and ref["name"] != "loss":
            row(ref, "backward", "grad_output", (ref["grad"], got["grad"]), backward_reduced)
        for pname in sorted(reference["param_grads"]):
            if pname.rsplit(".", 1)[0] == ref["name"]:
                row(ref, "backward", f"grad_{pname.rsplit('.', 1)[1]}",
                    (reference["param_grads"][pname], observed["param_grads"][pname]),
                    backward_reduced)
    return rows


def parity(args: argparse.Namespace, devices: List[str],
           emitter: harness.Emitter) -> Dict[str, Any]:
    """The parity model on every device, one worker process each (every rank's fallbacks)."""
    kind, _ = harness.parse_device(devices[0]) if devices else ("cpu", None)
    dtypes = parity_rules.parity_dtypes(args.parity_dtypes, kind)
    left = args.timeout - emitter.elapsed() - 5
    extra = ["--parity-dtypes", ",".join(dtypes), "--seed", str(args.seed)]
    script = str(Path(__file__).resolve().with_name("torch_workload.py"))
    section = parity_workers.run(script, devices, extra, left)
    return {"model": parity_rules.DESCRIPTION, "reference": "float64 on cpu",
            "seed": args.seed, "dtypes": dtypes, "thresholds": parity_rules.thresholds(),
            **section}


def worker(args: argparse.Namespace, doc: Dict[str, Any],
                  emitter: harness.Emitter) -> int:
    """One rank of the parity run: the model in each dtype on this device vs float64."""
    os.environ["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    import torch  # noqa: PLC0415

    kind, index = harness.parse_device(args.device)
    doc["phase"] = f"prepare {args.device}"
    if kind == "npu":
        harness.load("torch_npu")
    if kind in ("npu", "cuda"):
        getattr(torch, kind).set_device(index)
    doc.update(rank=args.rank, device=args.device)
    doc["environment"]["rank_variables"] = {
        name: os.environ.get(name) for name in (*op_fallbacks.SILENCING_VARIABLES,
                                                "ASCEND_ENV_RANK")}
    runs: List[Dict[str, Any]] = []
    doc["runs"] = runs
    for name in parity_rules.parity_dtypes(args.parity_dtypes, kind):
        doc["phase"] = f"parity {name} on {args.device}"
        runs.append(run_parity(torch.device(args.device), name, args.seed))
    doc["cpu_fallback_ops"] = op_fallbacks.cpu_fallback_ops(emitter.log_text())
    doc.update(phase="done", status="ok")
    return harness.EXIT_OK


