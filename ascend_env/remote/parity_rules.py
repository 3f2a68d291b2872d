"""What every parity workload shares: the model's sizes, the per-dtype tolerances with their
sources, the dtype names, and how the first divergence and its consequences are marked.

Standard library only, Python 3.8+; shipped beside the workloads (torch_parity.py,
mindspore_parity.py), no framework imported here.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

# Sizes: small enough for a CPU in a second, large enough for real reductions.
BATCH, TOKENS, VOCAB, WIDTH, HEADS, HIDDEN = 4, 8, 50, 32, 4, 64
IMAGE, CHANNELS, FILTERS = 8, 3, 8

# Per-dtype relative tolerance and small-value bound of the vendor's precision checker:
# msprobe (MindStudio probe) StandardConfig, Ascend/mstt
# debug/accuracy_tools/msprobe/pytorch/api_accuracy_checker/precision_standard/standard_config.py
# (_rtol: fp16 1e-3, bf16 4e-3, fp32 1e-6; _small_value: fp16/bf16 1e-3, fp32 1e-6).
MSPROBE_RTOL = {"float32": 1e-6, "float16": 1e-3, "bfloat16": 4e-3}
MSPROBE_SMALL_VALUE = {"float32": 1e-6, "float16": 1e-3, "bfloat16": 1e-3}
# msprobe's rtol judges one API fed the benchmark's own inputs; here each layer receives the
# device's output of the layer before it, so rounding accumulates through up to ~20 layers and
# their backward. ascend-env allows 10x msprobe's rtol, on the error scaled by the tensor's
# largest reference magnitude (robust where accumulated errors meet cancellation near zero).
# The same factor of 10 is msprobe's own allowance for the maximum relative error in its
# benchmark standard (bm_cmp_std max_re_rtol 10 against the benchmark device's error).
END_TO_END_FACTOR = 10.0
# HF32 (torch_npu.npu.conv.allow_hf32, default True; matmul.allow_hf32, default False; "like
# torch.backends.cudnn.allow_tf32": hiascend.com Pytorch 600 apiref ptaoplist_000923 and
# ptaoplist_000221) and CUDA's TF32 keep a 10-bit mantissa as fp16 does: fp32 values that
# depend on such a convolution or matmul are judged with fp16's tolerance.
REDUCED_FP32_RTOL_AS = "float16"

DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}


def threshold_for(dtype_name: str, reduced: bool) -> Tuple[float, str]:
    """The tolerance on the scaled error, and the dtype whose msprobe rtol it is built on."""
    basis = REDUCED_FP32_RTOL_AS if reduced and dtype_name == "float32" else dtype_name
    return MSPROBE_RTOL[basis] * END_TO_END_FACTOR, basis


def mark_divergence(rows: List[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    """The first row out of tolerance is the divergence; later ones are its consequences."""
    first: Optional[Dict[str, Any]] = None
    later: List[str] = []
    for item in rows:
        if item["status"] != "fail":
            continue
        if first is None:
            first = item
        else:
            item["status"] = "consequence"
            label = f"{item['name']} {item['tensor']}"
            if label not in later:
                later.append(label)
    if first is None:
        return None
    return {"name": first["name"], "op": first["op"], "dtype": first["dtype"],
            "phase": first["phase"], "tensor": first["tensor"],
            "max_abs_err": first["max_abs_err"], "max_rel_err": first["max_rel_err"],
            "scaled_err": first["scaled_err"], "threshold": first["threshold"],
            "consequences": later}


DESCRIPTION = ("embedding; layer norm; attention (qkv linear, scaled matmul, softmax, matmul, "
               "projection); layer norm, GELU MLP; layer norm, SiLU-gated MLP; conv2d 3x3, "
               "batch norm (batch statistics), GELU, mean pool, linear; linear head; "
               f"cross-entropy. Batch {BATCH}, {TOKENS} tokens of {VOCAB}, width {WIDTH}, "
               f"{HEADS} heads, hidden {HIDDEN}, images {CHANNELS}x{IMAGE}x{IMAGE}")


def thresholds() -> Dict[str, Any]:
    """The tolerance table, as the evidence records it."""
    return {"judged": "scaled_err = max |device - reference| / max |reference|",
            "factor": END_TO_END_FACTOR,
            "rtol": dict(MSPROBE_RTOL), "small_value": dict(MSPROBE_SMALL_VALUE),
            "limit": {name: MSPROBE_RTOL[name] * END_TO_END_FACTOR for name in MSPROBE_RTOL},
            "reduced_fp32_as": REDUCED_FP32_RTOL_AS,
            "source": "msprobe StandardConfig (Ascend/mstt debug/accuracy_tools/msprobe/pytorch/"
                      "api_accuracy_checker/precision_standard/standard_config.py) x "
                      f"{END_TO_END_FACTOR:g} for end-to-end accumulation"}


def parity_dtypes(text: str, kind: str) -> List[str]:
    """The dtypes the parity model runs in (names as torch spells them)."""
    if text == "auto":
        text = "fp32,fp16" if kind == "npu" else "fp32,bf16"
    names = [DTYPES.get(part.strip(), part.strip()) for part in text.split(",") if part.strip()]
    if not names or any(name not in MSPROBE_RTOL for name in names):
        raise ValueError(f"--parity-dtypes {text!r}: give fp32, fp16 and/or bf16")
    return names
