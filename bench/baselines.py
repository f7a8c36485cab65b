#!/usr/bin/env python3
"""Times the attention kernels flashlab is measured against, on flashlab's shapes.

Backends: PyTorch SDPA's flash, cuDNN and memory-efficient kernels (each forced with
torch.nn.attention.sdpa_kernel), and the flash_attn packages' kernels (FlashAttention-2's
flash_attn_func, FlashAttention-3's flash_attn_interface.flash_attn_func, FlashAttention-4's
flash_attn.cute.flash_attn_func) when installed. FlashAttention-4's wheels are not on the
GPU machine: scripts/fa4-wheels.sh and book/src/results.md ("FlashAttention-4 on the GPU
machine") bring them.

FP8 backends (Q, K, V as E4M3 codes): cuDNN's FP8 SDPA forward through the cuDNN frontend's
Python package (`cudnn-fp8`; its wheel comes with scripts/cudnn-frontend-wheel.sh, see
bench/README.md, "The FP8 baseline"), and what PyTorch's SDPA does with float8_e4m3fn
tensors (`sdpa-fp8`: on the installed PyTorch, most likely a refusal, recorded as the row's
reason). They are not among the default backends of a bf16 or f16 shape: they run on the
shapes whose dtype is e4m3 (or fp8), and on any shape where --backends (or the environment
variable FLASHLAB_BASELINES_BACKENDS, which `flashlab bench` passes down) names them.

Backward: a shape whose "pass" is "backward" (or every shape that names no pass, with
--backward) times the backward alone of each backend: dQ, dK, dV from dO through
torch.autograd.grad on the forward's output, the forward run once beforehand, untimed. Its
backends are sdpa-flash, sdpa-cudnn, sdpa-efficient, flash-attn, flash-attn-3 and
flash-attn-4 (BACKWARD_BACKENDS; the FP8 ones have no backward: named, their rows are
skipped and say so). Its rows carry "pass": "backward", every other row "pass": "forward".

Input: the shapes as a JSON list of {batch, heads, seqlen, head_dim, causal, dtype[, pass]}
(--shapes-json FILE, or stdin), or --shape B,H,S,D[,causal][,dtype] for a quick look; pass
is "forward" (the default) or "backward"; a kv_heads field, if present, must equal heads.
Output: JSON Lines on stdout (or --out FILE): first one {"kind": "meta", ...} line
describing the environment, then one row per (shape, backend) with the fields of
flashlab's bench rows, and "pass". `flashlab bench --baselines` runs this script and merges
the rows.

Conventions shared with flashlab (so rows compare):
  * Q, K, V are [batch, seqlen, heads, head_dim], drawn from normal(0.5, 1), rounded to
    the dtype; SDPA gets them as [batch, heads, seqlen, head_dim] views (no copies).
  * Queries and keys have the same length, so SDPA's top-left causal mask is the same as
    flashlab's bottom-right one.
  * FLOPs: 4 * batch * heads * head_dim * visible pairs, where visible pairs are seqlen^2,
    or seqlen * (seqlen + 1) / 2 when causal. A backward row's: 10 * batch * heads *
    head_dim * visible pairs, 2.5 times the forward's: five products of 2 * head_dim FLOPs
    per visible pair (S = Q K^T again, dP = dO V^T, dV = P^T dO, dK = dS^T Q, dQ = dS K)
    against the forward's two (harness/src/backward: backward_flops).
  * Timing: CUDA events around each call; about 50 ms of warm-up, then enough calls for
    about 300 ms (5 to 200), the median. --timing gated (the default) queues the timed
    calls behind a kernel that waits; --timing ungated times each call on an idle stream,
    as `flashlab --timing ungated` does.
  * Check: a sample of query rows of the first and last (batch, head) against float64
    math on the GPU; a sanity check that passes when max |dO| <= 8 u max(1, max |O|),
    u the dtype's unit roundoff (flashlab's own check is stricter; these kernels are the
    references, not the subject).
  * Backward: dO drawn as Q, K, V are (normal(0.5, 1), rounded to the dtype) from a seed
    stream of its own (do_seed), so Q, K, V are the forward's. The check compares dQ, dK
    and dV, on the sampled rows (query rows of dQ, key rows of dK and dV) of the first and
    last (batch, head), with float64 autograd of float64 attention of the same inputs,
    upcast (all of that head's queries and keys, in blocks of query rows); each gradient
    passes when its max |error| <= 8 u max(1, its max |reference|). The row's max_abs_error
    and error_bound are those of the gradient nearest its bound (check_passed: all three
    pass); max_abs_error_dq, _dk, _dv and error_bound_dq, _dk, _dv give each one.
  * FP8 rows: Q, K, V drawn as above (in bf16 for an e4m3 shape), then cast to E4M3 with
    one scale per tensor (code = x * 448 / amax, descale = amax / 448), untimed, as
    flashlab's FP8 stages time their bf16-to-E4M3 step apart. The row keeps its shape's
    dtype: bf16 on a bf16 shape, what stage 20 is given too. The check compares O, back in
    real units, with float64 attention of the dequantized codes, so the casts of Q, K and V
    are no error; what is left is E4M3's own rounding (unit roundoff u = 2^-4) of P and of
    O: fp8_error_bound says how much.

`python3 baselines.py --self-test` checks the parts that need no torch or GPU.
"""

import argparse
import json
import math
import os
import re
import sys
import time
import warnings

UNIT_ROUNDOFF = {"bf16": 2.0**-8, "f16": 2.0**-11}
BOUND_ULPS = 8.0
# The default backends of a bf16 or f16 shape.
ALL_BACKENDS = ["sdpa-flash", "sdpa-cudnn", "sdpa-efficient", "flash-attn", "flash-attn-3", "flash-attn-4"]
# The FP8 backends: the default of an e4m3 shape, and run elsewhere only when named.
FP8_BACKENDS = ["cudnn-fp8", "sdpa-fp8"]
KNOWN_BACKENDS = ALL_BACKENDS + FP8_BACKENDS
# In --backends, the shape's default backends (ALL_BACKENDS, or FP8_BACKENDS on e4m3).
DEFAULT_TOKEN = "default"
# --backends' default when set: `flashlab bench` passes no --backends, but its environment
# reaches this script, so `FLASHLAB_BASELINES_BACKENDS=default,cudnn-fp8 flashlab bench
# --baselines` adds cuDNN's FP8 rows to every shape of the run.
BACKENDS_ENV = "FLASHLAB_BASELINES_BACKENDS"
# Shape dtypes whose rows are FP8; their Q, K, V are drawn in bf16, then cast.
FP8_DTYPES = ("e4m3", "fp8")
# E4M3 (torch.float8_e4m3fn): largest finite value, smallest normal, unit roundoff (3
# mantissa bits, rounding to nearest), and the largest rounding error below the smallest
# normal (half the subnormal spacing 2^-9).
E4M3_MAX = 448.0
E4M3_MIN_NORMAL = 2.0**-6
E4M3_UNIT_ROUNDOFF = 2.0**-4
E4M3_SUBNORMAL_ERROR = 2.0**-10
# Unit roundoff of the dtype an FP8 kernel writes O in.
OUTPUT_UNIT_ROUNDOFF = {"e4m3": E4M3_UNIT_ROUNDOFF, "bf16": 2.0**-8, "f16": 2.0**-11, "f32": 2.0**-24}
# cuDNN's scale_s: P (at most 1) times 2^8 before its cast to E4M3, as stage 20 scales it
# (the frontend's docs allow up to 448 without dropout); a power of two, so descale_s is exact.
FP8_P_SCALE = 256.0
# Headroom of fp8_error_bound for what it leaves out: second-order terms and fp32 sums.
FP8_BOUND_SLACK = 1.25
ROW_FIELDS = [
    "kind", "name", "stage", "batch", "heads", "seqlen", "head_dim", "causal", "dtype", "pass",
    "status", "reason", "median_ms", "min_ms", "iterations", "gflop", "tflops",
    "sol_percent", "max_abs_error", "error_bound", "check_passed",
]
CHECK_ROWS = 32
# A shape's pass: "forward" (the default) times O from Q, K, V; "backward" times dQ, dK, dV
# from dO.
PASSES = ("forward", "backward")
# The default backends of a backward shape: those with a backward (the FP8 ones have none).
BACKWARD_BACKENDS = ["sdpa-flash", "sdpa-cudnn", "sdpa-efficient", "flash-attn", "flash-attn-3", "flash-attn-4"]
# The gradients a backward row checks, in the order torch.autograd.grad returns them.
GRADIENTS = ("dq", "dk", "dv")
# A backward row's fields beyond ROW_FIELDS: each gradient's max |error| and bound.
BACKWARD_ROW_FIELDS = [f"max_abs_error_{g}" for g in GRADIENTS] + [f"error_bound_{g}" for g in GRADIENTS]
# dO's seed is the run's seed plus this (do_seed), so Q, K, V stay the forward's draws.
DO_SEED_OFFSET = 0xD0
# The float64 reference backward works on blocks of query rows of about this many
# (query, key) elements each: 2^25 doubles, 256 MiB a matrix.
REFERENCE_BLOCK_ELEMENTS = 2**25
# Exceptions a kernel raises for a shape, dtype or GPU it does not take: the row is
# skipped, not an error (FlashAttention-4 says "not on this GPU / head dim" with assert).
UNSUPPORTED_ERRORS = (RuntimeError, NotImplementedError, AssertionError)
# The timing gate holds the stream this long per timed call (harness/src/timing.rs:
# GATE_US_PER_LAUNCH): far more than Python needs to queue one.
GATE_US_PER_CALL = 200
# flashlab's --timing names (harness/src/timing.rs: TimingProtocol); gated is the default.
TIMING_PROTOCOLS = ["gated", "ungated"]
# How the warm-up runs (--warmup): one call at a time (flashlab's), or queued back to back.
WARMUP_MODES = ["calls", "queued"]
# Where a row that skips FlashAttention-4 for want of its wheels sends the reader.
FA4_RECIPE = (
    "bring its wheels with scripts/fa4-wheels.sh and put them on PYTHONPATH "
    "(book/src/results.md, 'FlashAttention-4 on the GPU machine')"
)
# Where a row that skips cuDNN's FP8 attention for want of the frontend sends the reader.
CUDNN_FE_RECIPE = (
    "bring its wheel with scripts/cudnn-frontend-wheel.sh and put it on PYTHONPATH "
    "(bench/README.md, 'The FP8 baseline')"
)


def visible_pairs(seqlen, causal):
    """Query-key pairs a square mask lets through (bottom-right == top-left here)."""
    return seqlen * (seqlen + 1) // 2 if causal else seqlen * seqlen


def is_backward(shape):
    return shape.get("pass", "forward") == "backward"


def flops(shape):
    """4 * batch * heads * head_dim * visible pairs for the forward; 10 * ... (2.5 times
    that) for the backward: five products of 2 * head_dim FLOPs per pair against two."""
    per_pair = 10.0 if is_backward(shape) else 4.0
    return per_pair * shape["batch"] * shape["heads"] * shape["head_dim"] * visible_pairs(
        shape["seqlen"], shape["causal"]
    )


def tflops(shape, ms):
    return flops(shape) / (ms * 1e-3) / 1e12


def median(xs):
    s = sorted(xs)
    n = len(s)
    if n == 0:
        raise ValueError("median of no samples")
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def iterations_for(first_ms, target_ms, min_iters, max_iters):
    """Calls to time after warm-up: about target_ms worth, clamped."""
    return max(min_iters, min(max_iters, int(target_ms / max(first_ms, 1e-3))))


def check_rows(seqlen, count=CHECK_ROWS):
    """Evenly spaced query rows, always including the first and the last."""
    if seqlen <= count:
        return list(range(seqlen))
    step = (seqlen - 1) / (count - 1)
    return sorted({round(i * step) for i in range(count)})


def normalize_shape(raw, default_pass="forward"):
    """Validates one shape dict; returns it with every field present and typed. `pass` is
    the shape's own, else default_pass (--backward makes it "backward")."""
    try:
        shape = {
            "batch": int(raw["batch"]),
            "heads": int(raw["heads"]),
            "seqlen": int(raw["seqlen"]),
            "head_dim": int(raw["head_dim"]),
            "causal": bool(raw.get("causal", False)),
            "dtype": str(raw.get("dtype", "bf16")).lower(),
            "pass": str(raw.get("pass", default_pass)).lower(),
        }
        kv_heads = int(raw.get("kv_heads", shape["heads"]))
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"shape {raw!r} needs integer batch, heads, seqlen, head_dim: {e}")
    for key in ("batch", "heads", "seqlen", "head_dim"):
        if shape[key] < 1:
            raise ValueError(f"shape {raw!r}: {key} must be at least 1")
    if kv_heads != shape["heads"]:
        raise ValueError(f"shape {raw!r}: kv_heads must equal heads (these baselines time MHA only, no GQA)")
    if shape["dtype"] not in UNIT_ROUNDOFF and shape["dtype"] not in FP8_DTYPES:
        raise ValueError(f"shape {raw!r}: dtype must be bf16, f16, e4m3 or fp8")
    if shape["pass"] not in PASSES:
        raise ValueError(f"shape {raw!r}: pass must be {' or '.join(PASSES)}")
    if is_backward(shape) and is_fp8(shape):
        raise ValueError(f"shape {raw!r}: the backward takes bf16 or f16 (no FP8 backend has a backward)")
    return shape


def is_fp8(shape):
    return shape["dtype"] in FP8_DTYPES


def draw_dtype(shape):
    """The dtype Q, K, V are drawn in: the shape's, or bf16 for an FP8 shape (then cast)."""
    return "bf16" if is_fp8(shape) else shape["dtype"]


def parse_shape_arg(text, default_pass="forward"):
    """`B,H,S,D[,causal][,dtype]` -> shape dict, its pass default_pass."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) not in (4, 5, 6):
        raise ValueError(f"--shape {text!r}: expected B,H,S,D[,causal][,dtype]")
    b, h, s, d = (int(p) for p in parts[:4])
    rest = [p.lower() for p in parts[4:]]
    dtype = "bf16"
    if rest and (rest[-1] in UNIT_ROUNDOFF or rest[-1] in FP8_DTYPES):
        dtype = rest.pop()
    if len(rest) > 1:
        raise ValueError(f"--shape {text!r}: expected B,H,S,D[,causal][,dtype]")
    causal = bool(rest) and rest[0] in ("causal", "1", "true", "yes", "on")
    return normalize_shape(
        {"batch": b, "heads": h, "seqlen": s, "head_dim": d, "causal": causal, "dtype": dtype}, default_pass
    )


def parse_backends(text):
    """A comma list of backend names and `default`, or None for None (every shape's default)."""
    if text is None:
        return None
    names = [b.strip() for b in text.split(",") if b.strip()]
    unknown = [b for b in names if b not in KNOWN_BACKENDS and b != DEFAULT_TOKEN]
    if unknown:
        raise ValueError(
            f"unknown backend(s) {', '.join(unknown)}; choose from {', '.join(KNOWN_BACKENDS)}, or {DEFAULT_TOKEN}"
        )
    return names


def default_backends(shape):
    """A shape's default backends: BACKWARD_BACKENDS for a backward shape, FP8_BACKENDS
    for an FP8 one, else ALL_BACKENDS."""
    if is_backward(shape):
        return BACKWARD_BACKENDS
    return FP8_BACKENDS if is_fp8(shape) else ALL_BACKENDS


def backends_for(shape, chosen):
    """The backends a shape's rows are: `chosen` (parse_backends), `default` standing for
    the shape's default set; None is the default set alone (default_backends). A name is
    run once. A named backend the shape does not take (an FP8 one on a backward shape) is
    kept: its row is skipped and says why."""
    default = default_backends(shape)
    names = []
    for name in default if chosen is None else chosen:
        for n in default if name == DEFAULT_TOKEN else [name]:
            if n not in names:
                names.append(n)
    return names


def e4m3_scales(amax):
    """(scale, descale) of a per-tensor cast to E4M3: x * scale spans [-448, 448], and
    code * descale is x again, up to E4M3's rounding."""
    if not amax > 0 or not math.isfinite(amax):
        return 1.0, 1.0
    return E4M3_MAX / amax, amax / E4M3_MAX


def pow2_output_scale(amax_v):
    """cuDNN's scale_o for an E4M3 O: the largest power of two that maps 2 * amax(V) into
    E4M3's range. |O| <= amax(V) (a convex combination of V's rows), and E4M3's P, up to
    u = 2^-4 above the exact one, can lift O past it a little: the 2 keeps O finite. A power
    of two, so O * (1 / scale_o) is exact."""
    if not amax_v > 0 or not math.isfinite(amax_v):
        return 1.0
    return 2.0 ** math.floor(math.log2(E4M3_MAX / (2.0 * amax_v)))


def fp8_output_dtype(major):
    """What cuDNN's FP8 SDPA forward writes O in on a GPU of compute capability major.x:
    bf16 from Blackwell on (cuDNN 9.13+), E4M3 on Hopper, where the frontend refuses a
    bf16 or f16 O (sdpa_support_surface.h: "HALF/BFLOAT16 output is only supported on
    Blackwell")."""
    return "bf16" if major >= 10 else "e4m3"


def fp8_error_bound(max_o, max_pv, max_sub, p_scale, out_dtype, o_scale):
    """The sanity bound of an FP8 row (max |dO| over its checked rows), in O's units.

    An FP8 attention kernel on E4M3 codes, checked against float64 attention of those codes
    dequantized, errs where it rounds to E4M3 again (cuDNN's recipe; the frontend's
    test/python/sdpa/fp8_ref.py spells it out): each exp(s - m) (at most 1) scaled by
    p_scale and cast, and O cast after it is scaled by o_scale. A cast errs by at most u =
    2^-4 relative, or 2^-10 absolute below E4M3's smallest normal. So, per element,
      |dO| <= u P|V| + 2^-10 / p_scale * sum of |V| over the keys whose p_scale * P is
              below 2^-6 + u_O |O| + (for an E4M3 O) 2^-10 / o_scale,
    P the softmax, P|V| the softmax applied to |V|, u_O the unit roundoff of O's dtype. The
    bound takes each term's largest value over the checked rows (max_pv, max_sub, max_o)
    and 25% more for what it leaves out (second order terms and fp32 sums). With this
    bench's draws, max |O| and max P|V| are near 1, so the bound is about 2u = 12.5% of
    max |O|; the rounding of O alone reaches u |O|."""
    bound = E4M3_UNIT_ROUNDOFF * max_pv + E4M3_SUBNORMAL_ERROR / p_scale * max_sub
    bound += OUTPUT_UNIT_ROUNDOFF[out_dtype] * max_o
    if out_dtype == "e4m3":
        bound += E4M3_SUBNORMAL_ERROR / o_scale
    return FP8_BOUND_SLACK * bound


def cudnn_lib_dir(maps):
    """The folder of the libcudnn.so.N a process has mapped (the text of /proc/self/maps),
    or None: where the cuDNN frontend is to find the cuDNN that PyTorch loaded."""
    for line in maps.splitlines():
        path = line.split(None, 5)[5].strip() if len(line.split(None, 5)) == 6 else ""
        if re.fullmatch(r"libcudnn\.so(\.\d+)*", os.path.basename(path)):
            return os.path.dirname(path)
    return None


def empty_row(name, shape):
    """A skipped row of `name` on `shape`: ROW_FIELDS (and BACKWARD_ROW_FIELDS for a
    backward shape), the shape's fields, its FLOPs."""
    row = {f: None for f in ROW_FIELDS + (BACKWARD_ROW_FIELDS if is_backward(shape) else [])}
    row.update(shape)
    row.update(kind="baseline", name=name, status="skipped", gflop=flops(shape) / 1e9)
    return row


def do_seed(seed):
    """The seed of dO's draws: its own stream, so Q, K, V are the forward's draws."""
    return (seed + DO_SEED_OFFSET) % 2**64


def sanity_bound(dtype, biggest):
    """The sanity bound of a bf16 or f16 row: 8 u max(1, max |reference|)."""
    return BOUND_ULPS * UNIT_ROUNDOFF[dtype] * max(1.0, biggest)


def reference_block_rows(seqlen, elements=REFERENCE_BLOCK_ELEMENTS):
    """Query rows per block of the float64 reference backward: blocks of about `elements`
    (query, key) pairs, at least one row."""
    return max(1, min(seqlen, elements // seqlen))


def gradient_verdict(errors, bounds):
    """A backward row's check fields from each gradient's max |error| and bound (dicts
    keyed by GRADIENTS): the per-gradient fields, and max_abs_error and error_bound of
    the gradient nearest its bound (or furthest past it), check_passed when all three
    pass, status, and a reason naming those that fail. A NaN or infinite error fails, and
    is written as null (JSON has no NaN or infinity: serde_json would reject the row)."""
    finite = {g: errors[g] if math.isfinite(errors[g]) else None for g in GRADIENTS}
    fields = {f"max_abs_error_{g}": finite[g] for g in GRADIENTS}
    fields.update({f"error_bound_{g}": bounds[g] for g in GRADIENTS})
    worst = max(GRADIENTS, key=lambda g: errors[g] / bounds[g] if finite[g] is not None else math.inf)
    failed = [g for g in GRADIENTS if not errors[g] <= bounds[g]]
    fields.update(max_abs_error=finite[worst], error_bound=bounds[worst], check_passed=not failed)
    fields["status"] = "check-failed" if failed else "ok"

    def why(g):
        if finite[g] is None:
            return f"d{g[1].upper()}: {errors[g]} in the checked rows"
        return f"d{g[1].upper()}: max |error| {errors[g]:.3e} over the sanity bound {bounds[g]:.3e}"

    fields["reason"] = "; ".join(why(g) for g in failed) or None
    return fields


def first_line(text, limit=300):
    line = str(text).strip().splitlines()[0] if str(text).strip() else type(text).__name__
    return line[:limit]


def fa4_missing_reason(error):
    """The skip reason of a flash-attn-4 row when flash_attn.cute did not import."""
    why = f"{type(error).__name__}: {first_line(error)}"
    return f"flash_attn.cute (FlashAttention-4) is not importable ({why}); {FA4_RECIPE}"


def cudnn_fe_missing_reason(error):
    """The skip reason of a cudnn-fp8 row when the cuDNN frontend cannot run."""
    why = f"{type(error).__name__}: {first_line(error)}"
    return f"the cuDNN frontend (nvidia-cudnn-frontend, `import cudnn`) cannot run ({why}); {CUDNN_FE_RECIPE}"


def fa2_entry_point(module):
    """flash_attn's flash_attn_func, or an ImportError saying why there is none.

    FlashAttention-4's wheel installs flash_attn/cute/ with no flash_attn/__init__.py, so
    with only FlashAttention-4 present `import flash_attn` succeeds as an empty namespace
    package: that is not FlashAttention-2, and its row is skipped, not an error."""
    if isinstance(module, Exception):
        return module
    fn = getattr(module, "flash_attn_func", None)
    if fn is None:
        where = ", ".join(getattr(module, "__path__", [])) or "?"
        return ImportError(
            f"flash_attn at {where} has no flash_attn_func"
            " (a namespace package: FlashAttention-4's flash_attn.cute alone?)"
        )
    return fn


def first_output(out):
    """O from a kernel that returns O or a tuple (O, LSE, ...)."""
    return out[0] if isinstance(out, tuple) else out


def json_safe(obj):
    """NaN and infinities as null: JSON has no such numbers, and flashlab's reader (serde_json)
    refuses the NaN and Infinity that json.dumps writes by default, losing the whole row."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [json_safe(v) for v in obj]
    return obj


def emit(out, obj):
    out.write(json.dumps(json_safe(obj), sort_keys=True, allow_nan=False) + "\n")
    out.flush()


def time_calls(torch, a, fn, before=None):
    """Median of per-call event timings, the protocol of harness/src/timing.rs: a warm-up
    one call at a time sizes the run, then every timed call is queued behind
    torch.cuda._sleep (a kernel that waits), so the calls run back to back and each event
    pair times the GPU's work, not Python's time to launch it. `before` (decode's L2 flush,
    decode_baselines.py) is queued ahead of each call, outside its event pair."""
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)

    def once():
        if before:
            before()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop)

    warm, first = 0.0, math.inf
    wall = time.perf_counter()
    # At most 1000 calls for the default 50 ms, more in proportion to a longer --warmup-ms
    # (harness/src/timing.rs does the same).
    limit = int(1000 * max(1.0, a.warmup_ms / 50.0))
    for _ in range(limit):
        t = once()
        first = min(first, t)
        warm += t
        if warm >= a.warmup_ms or a.warmup == "queued":
            break
    if a.warmup == "queued" and warm < a.warmup_ms:
        # The rest queued without waiting, so the GPU runs it back to back, as under a
        # sustained load (one call at a time, Python's time between calls idles it). No
        # gate: it would idle the GPU for as long as it holds the queue. In batches, each
        # sized from the last one's time a call (the first call is the slowest).
        per = max(first, 1e-3)
        while warm < a.warmup_ms:
            k = min(limit, math.ceil((a.warmup_ms - warm) / per))
            start.record()
            for _ in range(k):
                if before:
                    before()
                fn()
            stop.record()
            stop.synchronize()
            t = start.elapsed_time(stop)
            warm, per = warm + t, max(t / k, 1e-3)
            if t <= 0:
                break
    wall_ms = (time.perf_counter() - wall) * 1e3
    # What share of the warm-up's wall time the GPU spent in the calls.
    print(f"warm-up: {warm:.0f} ms of calls in {wall_ms:.0f} ms ({a.warmup}), duty {warm / max(wall_ms, 1e-9):.2f}", file=sys.stderr)
    n = iterations_for(first, a.target_ms, a.min_iters, a.max_iters)
    if a.timing == "ungated":
        # The protocol before the gate, kept to measure what the gate changes.
        samples = [once() for _ in range(n)]
        return median(samples), min(samples), n
    pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(n)]
    # The gate: GATE_US_PER_CALL per call, in clock cycles at up to 2 GHz.
    torch.cuda._sleep(int(GATE_US_PER_CALL * n * 2000))
    for s, e in pairs:
        if before:
            before()
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    samples = [s.elapsed_time(e) for s, e in pairs]
    return median(samples), min(samples), n


def reference_gradients(torch, q, k, v, do, causal, block_rows=None):
    """dQ, dK, dV ([S, D] float64) of one (batch, head): float64 autograd of float64
    attention, softmax(Q K^T / sqrt(D), causal mask) V, of q, k, v ([S, D], upcast) under
    the cotangent do, a block of query rows at a time (block_rows, else
    reference_block_rows): each block's rows of dQ, and its share of dK and dV (the keys
    its rows see), added up. torch is passed in (the module needs no torch to import)."""
    n, d = q.shape
    scale = 1.0 / math.sqrt(d)
    q, k, v, do = (x.detach().double() for x in (q, k, v, do))
    dq, dk, dv = torch.empty_like(q), torch.zeros_like(k), torch.zeros_like(v)
    step = block_rows or reference_block_rows(n)
    with torch.enable_grad():
        for r0 in range(0, n, step):
            r1 = min(n, r0 + step)
            seen = r1 if causal else n  # keys after the block's last row see none of it
            qb, kb, vb = (x.detach().requires_grad_() for x in (q[r0:r1], k[:seen], v[:seen]))
            s = (qb @ kb.T) * scale
            if causal:
                rows = torch.arange(r0, r1, device=q.device)
                keys = torch.arange(seen, device=q.device)
                s = s.masked_fill(keys[None, :] > rows[:, None], -math.inf)
            o = torch.softmax(s, dim=-1) @ vb
            gq, gk, gv = torch.autograd.grad(o, (qb, kb, vb), do[r0:r1])
            dq[r0:r1] = gq
            dk[:seen] += gk
            dv[:seen] += gv
    return dq, dk, dv


# The cudnn-fp8 graph's tensor uids: the numbering of the frontend's own FP8 test
# (test/python/sdpa/fp8.py, GraphFwdUid).
CUDNN_FP8_UID = {
    "q": 0, "k": 1, "v": 2, "o": 3, "stats": 4, "descale_q": 5, "descale_k": 6, "descale_v": 7,
    "descale_s": 8, "scale_s": 9, "scale_o": 10, "amax_s": 11, "amax_o": 12,
}
CUDNN_FP8_SCALARS = ("descale_q", "descale_k", "descale_v", "descale_s", "scale_s", "scale_o")


def build_cudnn_fp8_graph(cudnn, shape, out_type, handle=None, declare_amax_s=True):
    """cuDNN's FP8 SDPA forward on one shape, its plan built; `cudnn` is the frontend's
    module, `handle` a cudnn.Handle, given to the graph too: without one, the frontend
    1.32 makes its own for the device it asks cuda-bindings for. The calls are the
    frontend's own FP8 test's (test/python/sdpa/fp8.py,
    generate_graph_fwd and exec_sdpa_fp8): Q, K, V and O declared [B, H, S, D] with BSHD
    strides, one fp32 scalar for each descale and scale, the softmax stats written (the LSE
    flashlab's stages write too), the causal mask as a band that ends on the diagonal,
    top-left aligned (queries and keys have one length here, so it is flashlab's
    bottom-right mask; cuDNN's FP8 SDPA aligns bottom-right only from Blackwell on).
    Amax_S, a deprecated output since the frontend computes P's bound from scale_s, keeps a
    graph off the frontend's own Blackwell kernels: declared only where the cuDNN library
    serves FP8 SDPA anyway (Hopper), as that test declares it."""
    b, h, s, d = shape["batch"], shape["heads"], shape["seqlen"], shape["head_dim"]
    fp32, e4m3 = cudnn.data_type.FLOAT, cudnn.data_type.FP8_E4M3
    uid = CUDNN_FP8_UID
    graph = cudnn.pygraph(io_data_type=e4m3, intermediate_data_type=fp32, compute_data_type=fp32, handle=handle)
    dims, bshd = [b, h, s, d], [s * h * d, d, h * d, 1]
    q, k, v = (graph.tensor(uid=uid[n], dim=dims, stride=bshd, data_type=e4m3) for n in ("q", "k", "v"))
    one, unit = [1, 1, 1, 1], [1, 1, 1, 1]
    scalars = {n: graph.tensor(uid=uid[n], dim=one, stride=unit, data_type=fp32) for n in CUDNN_FP8_SCALARS}
    mask = {}
    if shape["causal"]:
        mask = dict(diagonal_alignment=cudnn.diagonal_alignment.TOP_LEFT, right_bound=0)
    o, stats, amax_s, amax_o = graph.sdpa_fp8(
        q=q, k=k, v=v, **scalars, generate_stats=True, attn_scale=1.0 / math.sqrt(d), name="flashlab_fp8", **mask
    )
    o.set_uid(uid["o"]).set_output(True).set_dim(dims).set_stride(bshd).set_data_type(out_type)
    stats.set_uid(uid["stats"]).set_output(True).set_dim([b, h, s, 1]).set_stride([h * s, s, 1, 1]).set_data_type(fp32)
    amax_o.set_uid(uid["amax_o"]).set_output(True).set_dim(one).set_stride(unit).set_data_type(fp32)
    if declare_amax_s:
        amax_s.set_uid(uid["amax_s"]).set_output(True).set_dim(one).set_stride(unit).set_data_type(fp32)
    graph.validate()
    graph.build_operation_graph()
    graph.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    graph.check_support()
    graph.build_plans()
    return graph


class Fp8Call:
    """An FP8 backend's call: calling it runs the kernel (what is timed) and returns O as the
    kernel wrote it; check(O) is (max |dO|, bound) against float64 attention of the codes the
    kernel read; note goes into an ok row's reason."""

    def __init__(self, call, check, note=None):
        self.call, self.check, self.note = call, check, note

    def __call__(self):
        return self.call()


# ----------------------------------------------------------------------------- GPU part


class Runner:
    def __init__(self, args):
        import torch  # noqa: F401  (imported here so --self-test needs no torch)

        self.torch = torch
        self.args = args
        if not torch.cuda.is_available():
            raise RuntimeError("torch sees no CUDA GPU (torch.cuda.is_available() is False)")
        self.device = torch.device("cuda", args.device)
        torch.cuda.set_device(self.device)
        self.fa2 = self._try_import("flash_attn")
        self.fa3 = self._try_import("flash_attn_interface")
        self.fa4 = self._try_import("flash_attn.cute")
        # The cuDNN frontend, loaded at the first FP8 row (cudnn_frontend()).
        self._cudnn = None
        self._cudnn_lib = None
        self._cudnn_handle = None

    @staticmethod
    def _try_import(name):
        import importlib

        try:
            return importlib.import_module(name)
        except Exception as e:  # ImportError, or a broken build raising anything
            return e

    def meta(self, fp8=False):
        """The environment line; with fp8, the cuDNN frontend's version and the cuDNN
        library it runs on too (loading it)."""
        torch = self.torch
        props = torch.cuda.get_device_properties(self.device)
        cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None

        def version(mod, dist=None):
            if isinstance(mod, Exception):
                return None
            if dist:  # flash_attn.cute's own __version__ looks up a distribution "fa4" and says 0.0.0
                try:
                    from importlib.metadata import version as dist_version

                    return dist_version(dist)
                except Exception:
                    pass
            return getattr(mod, "__version__", "installed")

        return {
            "kind": "meta",
            "python": sys.version.split()[0],
            "torch": torch.__version__,
            "cuda": torch.version.cuda,
            "cudnn": cudnn,
            "device": props.name,
            "compute_capability": f"{props.major}.{props.minor}",
            "flash_attn": None if isinstance(fa2_entry_point(self.fa2), Exception) else version(self.fa2),
            "flash_attn_3": version(self.fa3),
            "flash_attn_4": version(self.fa4, "flash-attn-4"),
            **(self.fp8_meta() if fp8 else {}),
        }

    def fp8_meta(self):
        fe = self.cudnn_frontend()
        if isinstance(fe, Exception):
            return {"cudnn_frontend": None, "cudnn_frontend_error": f"{type(fe).__name__}: {first_line(fe)}"}
        return {
            "cudnn_frontend": fe.__version__,
            "cudnn_frontend_cudnn": fe.backend_version_string(),
            "cudnn_frontend_lib": self._cudnn_lib,
        }

    def inputs(self, shape, seed):
        """Q, K, V ([B, S, H, D], normal(0.5, 1) rounded to the draw dtype), and for a
        backward shape dO too, drawn alike from a stream of its own (do_seed)."""
        torch = self.torch
        dtype = {"bf16": torch.bfloat16, "f16": torch.float16}[draw_dtype(shape)]
        size = (shape["batch"], shape["seqlen"], shape["heads"], shape["head_dim"])

        def generator(s):
            gen = torch.Generator(device=self.device)
            gen.manual_seed(s)
            return gen

        def draw(gen):
            x = torch.randn(size, generator=gen, device=self.device, dtype=torch.float32)
            return (x + 0.5).to(dtype)

        gen = generator(seed)
        q, k, v = draw(gen), draw(gen), draw(gen)
        if not is_backward(shape):
            return q, k, v
        return q, k, v, draw(generator(do_seed(seed)))

    def kernel(self, name, shape, q, k, v):
        """A zero-argument callable returning O as [B, S, H, D] (an Fp8Call for the FP8
        backends), or a skip reason."""
        if name == "cudnn-fp8":
            return self.cudnn_fp8(shape, q, k, v)
        if name == "sdpa-fp8":
            return self.sdpa_fp8(shape, q, k, v)
        if is_fp8(shape):
            return f"takes bf16 or f16 Q, K, V, and this shape's dtype is {shape['dtype']}"
        causal = shape["causal"]
        if name.startswith("sdpa-"):
            from torch.nn.attention import SDPBackend, sdpa_kernel
            from torch.nn.functional import scaled_dot_product_attention as sdpa

            backend = {
                "sdpa-flash": SDPBackend.FLASH_ATTENTION,
                "sdpa-cudnn": SDPBackend.CUDNN_ATTENTION,
                "sdpa-efficient": SDPBackend.EFFICIENT_ATTENTION,
            }[name]
            qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))

            def call():
                with sdpa_kernel(backend):
                    return sdpa(qt, kt, vt, is_causal=causal)

            return lambda: call().transpose(1, 2)
        if name == "flash-attn-4":
            if isinstance(self.fa4, Exception):
                return fa4_missing_reason(self.fa4)
            fa4, scale = self.fa4, 1.0 / math.sqrt(shape["head_dim"])
            return lambda: first_output(fa4.flash_attn_func(q, k, v, causal=causal, softmax_scale=scale))
        if name == "flash-attn":
            fn = fa2_entry_point(self.fa2)
            if isinstance(fn, Exception):
                return f"flash_attn is not importable: {first_line(fn)}"
            return lambda: first_output(fn(q, k, v, causal=causal))
        fa3 = self.fa3
        if isinstance(fa3, Exception):
            return f"flash_attn_interface (FlashAttention-3) is not importable: {first_line(fa3)}"
        return lambda: first_output(fa3.flash_attn_func(q, k, v, causal=causal))

    # ------------------------------------------------------------------------- FP8

    def cudnn_frontend(self):
        """The cuDNN frontend's module, running on the cuDNN library PyTorch loaded, or the
        exception that says why it cannot run; loaded once."""
        if self._cudnn is None:
            self._cudnn = self._load_cudnn_frontend()
        return self._cudnn

    def _load_cudnn_frontend(self):
        # `import cudnn` dlopens libcudnn.so.9 from the first folder of LD_LIBRARY_PATH (as
        # os.environ has it then) that holds one, else from this python's purelib
        # (nvidia/cudnn/lib), else by name (cudnn/__init__.py, _dlopen_cudnn). PyTorch maps
        # its own once asked its version: naming that folder first for the import gives the
        # process one cuDNN, the one the sdpa-cudnn rows run on.
        self.torch.backends.cudnn.version()
        try:
            with open("/proc/self/maps") as f:
                self._cudnn_lib = cudnn_lib_dir(f.read())
        except OSError:
            self._cudnn_lib = None
        saved = os.environ.get("LD_LIBRARY_PATH")
        if self._cudnn_lib:
            os.environ["LD_LIBRARY_PATH"] = self._cudnn_lib + (os.pathsep + saved if saved else "")
        try:
            import cudnn
        except Exception as e:  # ImportError, or a broken install raising anything
            return e
        finally:
            if saved is None:
                os.environ.pop("LD_LIBRARY_PATH", None)
            else:
                os.environ["LD_LIBRARY_PATH"] = saved
        if not hasattr(cudnn, "pygraph"):
            return ImportError(f"the module cudnn at {getattr(cudnn, '__file__', '?')} is not the cuDNN frontend")
        try:
            cudnn.backend_version()
        except Exception as e:  # no libcudnn found: its symbols are missing
            return RuntimeError(f"nvidia-cudnn-frontend {cudnn.__version__} found no cuDNN library ({first_line(e)})")
        return cudnn

    def e4m3_codes(self, x):
        """x cast to E4M3 with one scale for the tensor (e4m3_scales): the codes, the
        descale as the fp32 value cuDNN is given, and amax |x|. Untimed."""
        torch = self.torch
        amax = x.abs().amax().float().item()
        scale, descale = e4m3_scales(amax)
        # The clamp keeps x * scale, which fp32 may round a hair past 448, finite: E4M3
        # has no infinity, and torch's cast past its range gives NaN.
        codes = (x.float() * scale).clamp_(-E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn)
        return codes, torch.tensor(descale, dtype=torch.float32).item(), amax

    def cudnn_fp8(self, shape, q, k, v):
        """cuDNN's FP8 SDPA forward on q, k, v cast to E4M3 (an Fp8Call), or a skip reason."""
        fe = self.cudnn_frontend()
        if isinstance(fe, Exception):
            return cudnn_fe_missing_reason(fe)
        torch = self.torch
        dev = self.device
        major = torch.cuda.get_device_capability(dev)[0]
        out = fp8_output_dtype(major)
        out_type = {"e4m3": fe.data_type.FP8_E4M3, "bf16": fe.data_type.BFLOAT16}[out]
        where = f"cuDNN {fe.backend_version_string()} through nvidia-cudnn-frontend {fe.__version__}"
        if self._cudnn_handle is None:
            self._cudnn_handle = fe.create_handle()
        handle = self._cudnn_handle
        # The stream the timing's events and gate are on.
        fe.set_stream(handle=handle, stream=torch.cuda.current_stream(dev).cuda_stream)
        try:
            graph = build_cudnn_fp8_graph(fe, shape, out_type, handle, declare_amax_s=major < 10)
        except (fe.cudnnGraphNotSupportedError, NotImplementedError) as e:
            return f"{where} has no FP8 SDPA forward for this graph: {first_line(e)}"
        (qc, dq, _), (kc, dk, _), (vc, dv, amax_v) = (self.e4m3_codes(x) for x in (q, k, v))
        o_scale = pow2_output_scale(amax_v) if out == "e4m3" else 1.0
        b, s, h, d = shape["batch"], shape["seqlen"], shape["heads"], shape["head_dim"]

        def scalar(x):
            return torch.full((1, 1, 1, 1), x, dtype=torch.float32, device=dev)

        buffers = {
            "q": qc, "k": kc, "v": vc,
            "o": torch.empty((b, s, h, d), dtype={"e4m3": torch.float8_e4m3fn, "bf16": torch.bfloat16}[out], device=dev),
            "stats": torch.empty((b, h, s, 1), dtype=torch.float32, device=dev),
            "descale_q": scalar(dq), "descale_k": scalar(dk), "descale_v": scalar(dv),
            "descale_s": scalar(1.0 / FP8_P_SCALE), "scale_s": scalar(FP8_P_SCALE), "scale_o": scalar(o_scale),
            "amax_s": scalar(0.0), "amax_o": scalar(0.0),
        }
        if major >= 10:  # no Amax_S output declared (build_cudnn_fp8_graph)
            del buffers["amax_s"]
        pack = {CUDNN_FP8_UID[n]: t for n, t in buffers.items()}
        workspace = torch.empty(max(1, graph.get_workspace_size()), dtype=torch.uint8, device=dev)
        o = buffers["o"]

        def call():
            graph.execute(pack, workspace, handle=handle)
            return o

        def check(got):
            return self.check_fp8(shape, (qc, dq), (kc, dk), (vc, dv), got, 1.0 / o_scale, out, o_scale)

        note = f"{where}; Q, K, V in E4M3 with a scale per tensor, O in {out}"
        return Fp8Call(call, check, note)

    def sdpa_fp8(self, shape, q, k, v):
        """What PyTorch's SDPA does with float8_e4m3fn Q, K, V (an Fp8Call), or its refusal."""
        torch = self.torch
        e4m3 = getattr(torch, "float8_e4m3fn", None)
        if e4m3 is None:
            return f"torch {torch.__version__} has no float8_e4m3fn"
        from torch.nn.functional import scaled_dot_product_attention as sdpa

        # Cast with scale 1: the draws (|x| < 8) sit well inside E4M3's range, and SDPA
        # takes no descales.
        qe, ke, ve = (x.to(e4m3) for x in (q, k, v))
        qt, kt, vt = (x.transpose(1, 2) for x in (qe, ke, ve))
        causal = shape["causal"]

        def call():
            return sdpa(qt, kt, vt, is_causal=causal).transpose(1, 2)

        first, why = self.try_call(call)
        if why:
            return f"PyTorch {torch.__version__} SDPA refuses float8_e4m3fn Q, K, V: {why}"
        names = {torch.bfloat16: "bf16", torch.float16: "f16", torch.float32: "f32", e4m3: "e4m3"}
        out = names.get(first.dtype, "e4m3")
        del first

        def check(got):
            return self.check_fp8(shape, (qe, 1.0), (ke, 1.0), (ve, 1.0), got, 1.0, out, 1.0)

        return Fp8Call(call, check, f"PyTorch {torch.__version__} SDPA on float8_e4m3fn Q, K, V (scale 1), O in {out}")

    def try_call(self, fn):
        """(fn(), None), or (None, why it raised, with the first warnings it gave)."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                out = fn()
                self.torch.cuda.synchronize()
                return out, None
            except Exception as e:
                said = "; ".join(first_line(w.message) for w in caught[:3])
                return None, f"{type(e).__name__}: {first_line(e)}" + (f" ({said})" if said else "")

    def check_fp8(self, shape, q, k, v, o, o_descale, out_dtype, o_scale):
        """An FP8 row's check: O as the kernel wrote it ([B, S, H, D]; times o_descale in
        real units) against float64 attention of q, k, v, each (E4M3 codes, descale), on the
        sampled rows of the first and last (batch, head); returns (max |dO|, the bound)."""
        torch = self.torch
        scale = 1.0 / math.sqrt(shape["head_dim"])
        rows = torch.tensor(check_rows(shape["seqlen"]), device=self.device)
        worst = max_o = max_pv = max_sub = 0.0
        pairs = {(0, 0), (shape["batch"] - 1, shape["heads"] - 1)}
        for b, h in sorted(pairs):
            # Slices first, then float64, where code * descale is exact.
            qs = (q[0][b, :, h, :].double() * q[1])[rows]
            ks, vs = (x[0][b, :, h, :].double() * x[1] for x in (k, v))
            s = (qs @ ks.T) * scale
            if shape["causal"]:
                keys = torch.arange(shape["seqlen"], device=self.device)
                s = s.masked_fill(keys[None, :] > rows[:, None], -math.inf)
            p = torch.softmax(s, dim=-1)
            ref = p @ vs
            av = vs.abs()
            below_normal = (p > 0) & (p * FP8_P_SCALE < E4M3_MIN_NORMAL)
            got = o[b, :, h, :].double()[rows] * o_descale
            diff = (got - ref).abs().max().item()
            worst = max(worst, math.inf if math.isnan(diff) else diff)
            max_o = max(max_o, ref.abs().max().item())
            max_pv = max(max_pv, (p @ av).max().item())
            max_sub = max(max_sub, (below_normal.double() @ av).max().item())
        return worst, fp8_error_bound(max_o, max_pv, max_sub, FP8_P_SCALE, out_dtype, o_scale)

    def time(self, fn):
        return time_calls(self.torch, self.args, fn)

    def check(self, shape, q, k, v, o):
        torch = self.torch
        scale = 1.0 / math.sqrt(shape["head_dim"])
        rows = torch.tensor(check_rows(shape["seqlen"]), device=self.device)
        worst, biggest = 0.0, 0.0
        pairs = {(0, 0), (shape["batch"] - 1, shape["heads"] - 1)}
        for b, h in sorted(pairs):
            qs = q[b, rows, h, :].double()
            ks, vs = k[b, :, h, :].double(), v[b, :, h, :].double()
            s = (qs @ ks.T) * scale
            if shape["causal"]:
                keys = torch.arange(shape["seqlen"], device=self.device)
                s = s.masked_fill(keys[None, :] > rows[:, None], -math.inf)
            ref = torch.softmax(s, dim=-1) @ vs
            got = o[b, rows, h, :].double()
            err = (got - ref).abs().max().item()
            # max() keeps its first argument when the other is NaN: a NaN output must fail.
            worst = err if math.isnan(err) else max(worst, err)
            biggest = max(biggest, ref.abs().max().item())
            if math.isnan(worst):
                break
        return worst, sanity_bound(shape["dtype"], biggest)

    def check_backward(self, shape, q, k, v, do, grads):
        """A backward row's check: dQ, dK, dV as the kernel wrote them ([B, S, H, D]), on
        the sampled rows (check_rows: query rows of dQ, key rows of dK and dV) of the first
        and last (batch, head), against reference_gradients of that head's q, k, v and do;
        returns each gradient's max |error| and its sanity bound (dicts keyed by GRADIENTS)."""
        torch = self.torch
        rows = torch.tensor(check_rows(shape["seqlen"]), device=self.device)
        errors = {g: 0.0 for g in GRADIENTS}
        biggest = dict(errors)
        pairs = {(0, 0), (shape["batch"] - 1, shape["heads"] - 1)}
        for b, h in sorted(pairs):
            ref = reference_gradients(torch, *(x[b, :, h, :] for x in (q, k, v, do)), shape["causal"])
            for g, want, got in zip(GRADIENTS, ref, grads):
                want = want[rows]
                diff = (got[b, rows, h, :].double() - want).abs().max().item()
                # A NaN is kept (max() would drop it): gradient_verdict fails it.
                errors[g] = diff if math.isnan(diff) or math.isnan(errors[g]) else max(errors[g], diff)
                biggest[g] = max(biggest[g], want.abs().max().item())
            del ref
        return errors, {g: sanity_bound(shape["dtype"], biggest[g]) for g in GRADIENTS}

    def run(self, name, shape, q, k, v, do=None):
        """The row of backend `name` on `shape`: its forward on q, k, v, or with a backward
        shape its backward (run_backward) under the cotangent do."""
        if is_backward(shape):
            return self.run_backward(name, shape, q, k, v, do)
        torch = self.torch
        row = empty_row(name, shape)
        try:
            fn = self.kernel(name, shape, q, k, v)
        except Exception as e:  # building the call failed: a bug, or a library's surprise
            row.update(status="error", reason=f"preparing the call: {type(e).__name__}: {first_line(e)}")
            return row
        if isinstance(fn, str):
            row["reason"] = fn
            return row
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                o = fn()
                torch.cuda.synchronize()
            except Exception as e:  # no kernel for this shape, or this GPU
                why = "; ".join(first_line(w.message) for w in caught[:3])
                row["reason"] = first_line(e) + (f" ({why})" if why else "")
                row["status"] = "skipped" if isinstance(e, UNSUPPORTED_ERRORS) else "error"
                return row
        check = getattr(fn, "check", None) or (lambda out: self.check(shape, q, k, v, out))
        try:
            err, bound = check(o)
            del o
            med, low, n = self.time(fn)
        except torch.cuda.OutOfMemoryError as e:
            row.update(status="error", reason=f"out of memory: {first_line(e)}")
            return row
        row.update(
            median_ms=med,
            min_ms=low,
            iterations=n,
            tflops=tflops(shape, med),
            max_abs_error=err,
            error_bound=bound,
            check_passed=err <= bound,
        )
        row["status"] = "ok" if err <= bound else "check-failed"
        if err > bound:
            row["reason"] = f"max |dO| {err:.3e} over the sanity bound {bound:.3e}"
        elif getattr(fn, "note", None):
            row["reason"] = fn.note
        return row

    def run_backward(self, name, shape, q, k, v, do):
        """A backward row: the backend's forward once (untimed) on leaves that share q's, k's
        and v's memory and require grad, then torch.autograd.grad(O, (Q, K, V), dO,
        retain_graph=True), checked (check_backward) and timed alone."""
        torch = self.torch
        row = empty_row(name, shape)
        if name in FP8_BACKENDS:
            row["reason"] = f"an FP8 forward, with no backward (a backward shape's backends: {', '.join(BACKWARD_BACKENDS)})"
            return row
        leaves = tuple(x.detach().requires_grad_() for x in (q, k, v))
        try:
            forward = self.kernel(name, shape, *leaves)
        except Exception as e:  # building the call failed: a bug, or a library's surprise
            row.update(status="error", reason=f"preparing the call: {type(e).__name__}: {first_line(e)}")
            return row
        if isinstance(forward, str):
            row["reason"] = forward
            return row

        def attempt(what, fn):
            """fn(), or None with the row's status and reason saying what raised, as run's."""
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    with torch.enable_grad():
                        value = fn()
                    torch.cuda.synchronize()
                    return value
                except Exception as e:  # no kernel for this shape, or this GPU
                    why = "; ".join(first_line(w.message) for w in caught[:3])
                    row["reason"] = f"{what}: {first_line(e)}" + (f" ({why})" if why else "")
                    row["status"] = "skipped" if isinstance(e, UNSUPPORTED_ERRORS) else "error"
                    return None

        out = attempt("the forward", forward)
        if out is None:
            return row
        if out.grad_fn is None:
            row["reason"] = "its forward's output has no autograd graph: no backward to time"
            return row

        def backward():
            return torch.autograd.grad(out, leaves, do, retain_graph=True)

        grads = attempt("the backward", backward)
        if grads is None:
            return row
        try:
            errors, bounds = self.check_backward(shape, q, k, v, do, grads)
            del grads
            med, low, n = self.time(backward)
        except torch.cuda.OutOfMemoryError as e:
            row.update(status="error", reason=f"out of memory: {first_line(e)}")
            return row
        row.update(median_ms=med, min_ms=low, iterations=n, tflops=tflops(shape, med))
        row.update(gradient_verdict(errors, bounds))
        return row


# ----------------------------------------------------------------------------- main


def read_shapes(args):
    """The shapes of --shape, else of the JSON; with --backward, those that name no pass
    are backward shapes."""
    default_pass = "backward" if getattr(args, "backward", False) else "forward"
    if args.shape:
        return [parse_shape_arg(s, default_pass) for s in args.shape]
    if args.shapes_json and args.shapes_json != "-":
        with open(args.shapes_json) as f:
            raw = json.load(f)
    else:
        raw = json.load(sys.stdin)
    if isinstance(raw, dict) and "shapes" in raw:
        raw = raw["shapes"]
    if not isinstance(raw, list):
        raise ValueError("the shapes JSON must be a list of shape objects")
    return [normalize_shape(s, default_pass) for s in raw]


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--shapes-json", metavar="FILE", help="shapes as a JSON list ('-' or absent: stdin)")
    p.add_argument(
        "--shape", action="append", metavar="B,H,S,D[,causal][,dtype]", help="one shape (repeatable; dtype bf16, f16, e4m3)"
    )
    env_backends = os.environ.get(BACKENDS_ENV) or None
    p.add_argument(
        "--backends",
        default=env_backends,
        help=f"comma list of {', '.join(KNOWN_BACKENDS)}, and {DEFAULT_TOKEN} (the shape's default: "
        f"{', '.join(ALL_BACKENDS)}; on an e4m3 shape {', '.join(FP8_BACKENDS)}; on a backward shape "
        f"{', '.join(BACKWARD_BACKENDS)}); "
        f"default: ${BACKENDS_ENV}, else {DEFAULT_TOKEN}",
    )
    p.add_argument(
        "--backward",
        action="store_true",
        help='time the backward (dQ, dK, dV from dO) of the --shape shapes and of the JSON shapes that name no "pass"',
    )
    p.add_argument("--out", metavar="FILE", help="write the JSON Lines here instead of stdout")
    p.add_argument("--device", type=int, default=0, help="CUDA device ordinal")
    p.add_argument("--seed", type=int, default=0x5EEDF1A5)
    p.add_argument("--warmup-ms", type=float, default=50.0)
    p.add_argument(
        "--warmup",
        choices=WARMUP_MODES,
        default="calls",
        help="calls: the warm-up one call at a time, each waited for; queued: after the first, the rest queued back to back",
    )
    p.add_argument("--target-ms", type=float, default=300.0)
    p.add_argument("--min-iters", type=int, default=5)
    p.add_argument("--max-iters", type=int, default=200)
    p.add_argument(
        "--timing",
        choices=TIMING_PROTOCOLS,
        default="gated",
        help="gated: timed calls queued behind a waiting kernel; ungated: each call on an idle stream (flashlab's --timing)",
    )
    p.add_argument("--self-test", action="store_true", help="test the torch-free parts and exit")
    args = p.parse_args(argv)
    try:
        # None: every shape's default backends (backends_for).
        args.backends = parse_backends(args.backends)
    except ValueError as e:
        p.error(f"{e}" + (f" (from ${BACKENDS_ENV})" if args.backends == env_backends else ""))
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.self_test:
        return self_test()
    try:
        shapes = read_shapes(args)
    except (ValueError, OSError) as e:
        print(f"baselines.py: {e}", file=sys.stderr)
        return 2
    try:
        runner = Runner(args)
    except ImportError as e:
        print(f"baselines.py: torch is not importable: {first_line(e)}", file=sys.stderr)
        return 3
    except RuntimeError as e:
        print(f"baselines.py: {e}", file=sys.stderr)
        return 3

    def pick(shape):
        return backends_for(shape, args.backends)

    planned = [name for shape in shapes for name in pick(shape)]
    meta = runner.meta(fp8=any(name in FP8_BACKENDS for name in planned))
    meta["planned"] = len(planned)
    return write_rows(args, runner, shapes, meta, pick)


def write_rows(args, runner, shapes, meta, backends_for_shape=None):
    """Writes `meta`, then a row per (shape, backend) to --out or stdout, each shape's
    inputs drawn once for all backends (runner.inputs: Q, K, V, and dO for a backward
    shape, handed to runner.run in that order); the backends of a shape are
    backends_for_shape(shape), or args.backends (decode_baselines.py writes its rows
    through this too)."""
    out = open(args.out, "w") if args.out else sys.stdout
    emit(out, meta)
    for shape in shapes:
        tensors = runner.inputs(shape, args.seed)
        for name in backends_for_shape(shape) if backends_for_shape else args.backends:
            emit(out, runner.run(name, shape, *tensors))
        del tensors
        runner.torch.cuda.empty_cache()
    if out is not sys.stdout:
        out.close()
    return 0


def self_test():
    """The torch-free parts: FLOP counts, shapes, medians, iteration counts, rows, backend
    choice, FP8 scales and bounds."""
    os.environ.pop(BACKENDS_ENV, None)  # parse_args([]) below means no backends named
    # Visible pairs equal a brute-force count of j <= i.
    for s in (1, 2, 7, 64, 129):
        assert visible_pairs(s, True) == sum(1 for i in range(s) for j in range(s) if j <= i)
        assert visible_pairs(s, False) == s * s
    shape = parse_shape_arg("1,16,4096,128")
    assert flops(shape) == 4.0 * 16 * 4096 * 4096 * 128
    # The same number flashlab's timing test uses: 137.4 TFLOP/s in 1 ms.
    assert abs(tflops(shape, 1.0) - 137.438953472) < 1e-6
    causal = parse_shape_arg("2,16,4096,64,causal")
    assert causal["causal"] and flops(causal) == 4.0 * 2 * 16 * 64 * 4096 * 4097 / 2
    assert median([5.0, 1.0, 3.0]) == 3.0 and median([4.0, 1.0, 3.0, 2.0]) == 2.5
    assert iterations_for(1.0, 300.0, 5, 200) == 200
    assert iterations_for(100.0, 300.0, 5, 200) == 5
    assert iterations_for(10.0, 300.0, 5, 200) == 30
    rows = check_rows(4096)
    assert rows[0] == 0 and rows[-1] == 4095 and len(rows) == CHECK_ROWS
    assert check_rows(5) == [0, 1, 2, 3, 4]
    for bad in ({"batch": 0, "heads": 1, "seqlen": 1, "head_dim": 1}, {"heads": 1}, {**shape, "dtype": "int8"}):
        try:
            normalize_shape(bad)
        except ValueError:
            pass
        else:
            raise AssertionError(f"{bad} was accepted")
    row = empty_row("sdpa-flash", causal)
    assert set(row) == set(ROW_FIELDS) | set(causal), sorted(row)
    assert row["kind"] == "baseline" and row["status"] == "skipped"
    assert json.loads(json.dumps(row))["gflop"] == flops(causal) / 1e9
    args = parse_args(["--backends", "sdpa-flash,flash-attn", "--shape", "1,2,3,4"])
    assert args.backends == ["sdpa-flash", "flash-attn"] and read_shapes(args)[0]["seqlen"] == 3
    assert args.warmup == "calls" and parse_args(["--warmup", "queued"]).warmup == "queued"
    assert args.timing == "gated" and parse_args(["--timing", "ungated"]).timing == "ungated"
    # FlashAttention-4 is one of the default backends, and can be asked for alone.
    assert parse_args([]).backends is None and "flash-attn-4" in backends_for(shape, None)
    assert parse_args(["--backends", "flash-attn-4"]).backends == ["flash-attn-4"]
    # Its skip reason names the exception and the recipe that brings the wheels.
    why = fa4_missing_reason(ModuleNotFoundError("No module named 'cutlass'"))
    assert "ModuleNotFoundError: No module named 'cutlass'" in why, why
    assert "scripts/fa4-wheels.sh" in why and "FlashAttention-4 on the GPU machine" in why, why
    assert "AssertionError" in fa4_missing_reason(AssertionError())
    # O is the first element of a tuple (O, LSE), or the value itself.
    assert first_output(("o", "lse")) == "o" and first_output("o") == "o"
    # flash_attn as FlashAttention-4's bare namespace is no FlashAttention-2.
    import types

    bare = types.ModuleType("flash_attn")
    bare.__path__ = ["/tmp/fa4/flash_attn"]
    assert isinstance(fa2_entry_point(bare), ImportError)
    assert "/tmp/fa4/flash_attn" in str(fa2_entry_point(bare))
    fa2 = types.ModuleType("flash_attn")
    fa2.flash_attn_func = len
    assert fa2_entry_point(fa2) is len
    missing = ImportError("No module named 'flash_attn'")
    assert fa2_entry_point(missing) is missing
    self_test_fp8()
    self_test_backward()
    print("baselines.py self-test: ok")


def self_test_fp8():
    """The FP8 rows' torch-free parts."""
    # Shapes: an FP8 dtype in JSON or as --shape's last field; drawn in bf16.
    e4m3 = parse_shape_arg("2,16,4096,128,causal,e4m3")
    assert e4m3["causal"] and e4m3["dtype"] == "e4m3" and is_fp8(e4m3) and draw_dtype(e4m3) == "bf16"
    assert parse_shape_arg("1,2,3,4,fp8")["dtype"] == "fp8" and not parse_shape_arg("1,2,3,4,fp8")["causal"]
    assert parse_shape_arg("1,2,3,4,0,f16") == {**parse_shape_arg("1,2,3,4,f16"), "causal": False}
    assert normalize_shape({"batch": 1, "heads": 1, "seqlen": 1, "head_dim": 64, "dtype": "FP8"})["dtype"] == "fp8"
    for bad in ("1,2,3,4,causal,e4m3,x", "1,2,3,4,int8,causal"):
        try:
            parse_shape_arg(bad)
        except ValueError:
            pass
        else:
            raise AssertionError(f"--shape {bad} was accepted")
    bf16 = parse_shape_arg("2,16,4096,128")
    assert not is_fp8(bf16) and draw_dtype(bf16) == "bf16"
    # Backends: the FP8 ones by default on an FP8 shape only, or where named; `default`
    # is the shape's default set; each name once, in order.
    assert backends_for(bf16, None) == ALL_BACKENDS and backends_for(e4m3, None) == FP8_BACKENDS
    assert not set(FP8_BACKENDS) & set(ALL_BACKENDS)
    both = parse_args(["--backends", "default,cudnn-fp8,sdpa-fp8,cudnn-fp8"]).backends
    assert backends_for(bf16, both) == ALL_BACKENDS + FP8_BACKENDS
    assert backends_for(e4m3, both) == FP8_BACKENDS
    assert backends_for(bf16, ["cudnn-fp8"]) == ["cudnn-fp8"]
    assert backends_for(e4m3, ["sdpa-flash"]) == ["sdpa-flash"]  # run, and skipped by the row
    for bad in ("cudnn-fp9", "default,nope"):
        try:
            parse_backends(bad)
        except ValueError as e:
            assert "cudnn-fp8" in str(e)
        else:
            raise AssertionError(f"--backends {bad} was accepted")
    # The environment names --backends' default (how `flashlab bench` asks for FP8 rows).
    os.environ[BACKENDS_ENV] = "default, cudnn-fp8"
    try:
        assert parse_args([]).backends == ["default", "cudnn-fp8"]
        assert parse_args(["--backends", "sdpa-fp8"]).backends == ["sdpa-fp8"]
    finally:
        del os.environ[BACKENDS_ENV]
    # Per-tensor E4M3 scales: amax lands on 448, descale undoes scale; no amax, no scaling.
    for amax in (1e-3, 0.75, 6.1, 448.0, 3e4):
        scale, descale = e4m3_scales(amax)
        assert abs(amax * scale - E4M3_MAX) <= 1e-9 * E4M3_MAX and abs(scale * descale - 1.0) < 1e-12
    assert e4m3_scales(0.0) == (1.0, 1.0) and e4m3_scales(float("nan")) == (1.0, 1.0)
    # O's scale: a power of two with 2 amax(V) scale <= 448 < 4 amax(V) scale.
    for amax_v in (0.3, 1.0, 5.9, 6.0, 7.0, 112.0, 500.0):
        o_scale = pow2_output_scale(amax_v)
        assert math.log2(o_scale) == round(math.log2(o_scale))
        assert 2 * amax_v * o_scale <= E4M3_MAX < 4 * amax_v * o_scale, (amax_v, o_scale)
    assert pow2_output_scale(7.0) == 32.0 and pow2_output_scale(0.0) == 1.0
    # cuDNN writes an E4M3 O on Hopper, a bf16 one from Blackwell on.
    assert fp8_output_dtype(9) == "e4m3" and fp8_output_dtype(10) == "bf16" and fp8_output_dtype(12) == "bf16"
    # The bound: u P|V| + u_O |O| (+ the subnormal floors), and 25% more; about 2u = 12.5%
    # of max |O| when max |O| and max P|V| are 1 and nothing is subnormal.
    b = fp8_error_bound(1.0, 1.0, 0.0, FP8_P_SCALE, "e4m3", 32.0)
    assert abs(b - FP8_BOUND_SLACK * (2 * E4M3_UNIT_ROUNDOFF + 2.0**-10 / 32.0)) < 1e-15
    assert 0.15 < b < 0.16
    assert fp8_error_bound(1.0, 1.0, 0.0, FP8_P_SCALE, "bf16", 1.0) == FP8_BOUND_SLACK * (2.0**-4 + 2.0**-8)
    assert fp8_error_bound(1.0, 1.0, 100.0, FP8_P_SCALE, "e4m3", 32.0) > b
    assert fp8_error_bound(2.0, 1.0, 0.0, FP8_P_SCALE, "e4m3", 32.0) > b
    # The bound holds for a rounding of P and of O as E4M3 rounds, on a small example in
    # pure Python: three keys, one row, O in E4M3 (rounding to nearest, ties to even).
    def e4m3_round(x):
        if x == 0:
            return 0.0
        step = 2.0 ** (max(math.floor(math.log2(abs(x))), -6) - 3)
        return math.copysign(min(round(abs(x) / step) * step, E4M3_MAX), x)

    assert e4m3_round(448.0) == 448.0 and e4m3_round(0.3) == 0.3125 and e4m3_round(2.0**-9) == 2.0**-9
    s_row, vals = [0.3, -1.2, 2.5], [4.0, -1.5, 0.7]
    e = [math.exp(x - max(s_row)) for x in s_row]
    p = [x / sum(e) for x in e]
    exact = sum(pi * vi for pi, vi in zip(p, vals))
    kernel = sum(e4m3_round(ei * FP8_P_SCALE) * vi for ei, vi in zip(e, vals)) / FP8_P_SCALE / sum(e)
    o_scale = pow2_output_scale(max(abs(x) for x in vals))
    got = e4m3_round(kernel * o_scale) / o_scale
    pv = sum(pi * abs(vi) for pi, vi in zip(p, vals))
    assert abs(got - exact) <= fp8_error_bound(abs(exact), pv, 0.0, FP8_P_SCALE, "e4m3", o_scale)
    # Where the frontend is to find cuDNN: the folder of the libcudnn.so.N mapped, not of
    # libcudnn_graph or a file that merely starts so.
    maps = (
        "7f0-7f1 r-xp 00000000 08:01 12 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
        "7f2-7f3 r-xp 00000000 08:01 13 /opt/py/site-packages/nvidia/cudnn/lib/libcudnn_graph.so.9\n"
        "7f4-7f5 r--p 00000000 08:01 14 /opt/py/site-packages/nvidia/cudnn/lib/libcudnn.so.9\n"
        "7f6-7f7 rw-p 00000000 00:00 0 \n"
        "7f8-7f9 r--p 00000000 08:01 15 /tmp/libcudnn.so.9.bak\n"
    )
    assert cudnn_lib_dir(maps) == "/opt/py/site-packages/nvidia/cudnn/lib", cudnn_lib_dir(maps)
    assert cudnn_lib_dir(maps.replace("libcudnn.so.9\n", "libcudnn.so.9.10.2\n")) == "/opt/py/site-packages/nvidia/cudnn/lib"
    assert cudnn_lib_dir("7f0-7f1 r-xp 00000000 08:01 12 /usr/lib/libc.so.6\n") is None
    # The FP8 rows' reasons name the recipe; an FP8 row keeps the shape's dtype.
    why = cudnn_fe_missing_reason(ModuleNotFoundError("No module named 'cudnn'"))
    assert "No module named 'cudnn'" in why and "scripts/cudnn-frontend-wheel.sh" in why, why
    row = empty_row("cudnn-fp8", bf16)
    assert row["dtype"] == "bf16" and row["gflop"] == flops(bf16) / 1e9
    # The graph's uids are distinct and name every buffer cudnn_fp8 hands over.
    assert len(set(CUDNN_FP8_UID.values())) == len(CUDNN_FP8_UID)
    assert set(CUDNN_FP8_SCALARS) < set(CUDNN_FP8_UID)
    return 0


def self_test_backward():
    """The backward rows' torch-free parts."""
    import tempfile

    # A shape's pass: forward unless it says backward; --shape's shapes take --backward's.
    fwd = parse_shape_arg("1,16,4096,128,causal")
    bwd = parse_shape_arg("1,16,4096,128,causal", "backward")
    assert fwd["pass"] == "forward" and not is_backward(fwd)
    assert bwd == {**fwd, "pass": "backward"} and is_backward(bwd)
    raw = {"batch": 1, "heads": 16, "seqlen": 4096, "head_dim": 128, "causal": True, "dtype": "bf16"}
    assert normalize_shape(raw) == fwd and normalize_shape({**raw, "pass": "backward"}) == bwd
    assert normalize_shape({**raw, "pass": "Backward"}) == bwd
    # A shape's own pass wins over the default (--backward).
    assert normalize_shape({**raw, "pass": "forward"}, "backward") == fwd
    assert normalize_shape(raw, "backward") == bwd
    # kv_heads: accepted when it equals heads (MHA), refused otherwise.
    assert normalize_shape({**raw, "kv_heads": 16, "pass": "backward"}) == bwd
    refusals = [
        ({**raw, "pass": "sideways"}, "pass must be forward or backward"),
        ({**raw, "kv_heads": 4}, "kv_heads must equal heads"),
        ({**raw, "dtype": "e4m3", "pass": "backward"}, "the backward takes bf16 or f16"),
    ]
    for bad, said in refusals:
        try:
            normalize_shape(bad)
        except ValueError as e:
            assert said in str(e), e
        else:
            raise AssertionError(f"{bad} was accepted")
    # The e4m3 forward is still a shape, and --backward leaves a JSON e4m3 shape that says
    # "pass": "forward" alone.
    assert normalize_shape({**raw, "dtype": "e4m3", "pass": "forward"}, "backward")["pass"] == "forward"
    # FLOPs: 10 * batch * heads * head_dim * visible pairs, 2.5 times the forward's.
    assert flops(bwd) == 10.0 * 16 * 128 * 4096 * 4097 / 2 and flops(bwd) == 2.5 * flops(fwd)
    square = parse_shape_arg("2,8,1024,64", "backward")
    assert flops(square) == 10.0 * 2 * 8 * 64 * 1024 * 1024
    assert abs(tflops(bwd, 1.0) - 2.5 * tflops(fwd, 1.0)) < 1e-9
    # --backward, with --shape and with JSON shapes (those naming a pass keep it).
    args = parse_args(["--backward", "--shape", "1,16,4096,128,causal"])
    assert args.backward and read_shapes(args) == [bwd]
    assert not parse_args([]).backward and read_shapes(parse_args(["--shape", "1,16,4096,128,causal"])) == [fwd]
    listed = [raw, {**raw, "pass": "backward"}, {**raw, "pass": "forward"}]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "shapes.json")
        with open(path, "w") as f:
            json.dump(listed, f)
        assert read_shapes(parse_args(["--shapes-json", path])) == [fwd, bwd, fwd]
        assert read_shapes(parse_args(["--backward", "--shapes-json", path])) == [bwd, bwd, fwd]
    # Backends: a backward shape's default set; FP8 ones named stay, for a skipped row.
    assert backends_for(bwd, None) == BACKWARD_BACKENDS and not set(BACKWARD_BACKENDS) & set(FP8_BACKENDS)
    assert set(BACKWARD_BACKENDS) <= set(KNOWN_BACKENDS) and "flash-attn-4" in BACKWARD_BACKENDS
    assert backends_for(bwd, ["default", "cudnn-fp8", "sdpa-fp8"]) == BACKWARD_BACKENDS + FP8_BACKENDS
    assert backends_for(bwd, ["sdpa-cudnn", "default"]) == ["sdpa-cudnn"] + [
        b for b in BACKWARD_BACKENDS if b != "sdpa-cudnn"
    ]
    assert backends_for(fwd, None) == ALL_BACKENDS
    # Rows: pass on every row; the per-gradient fields on backward rows only.
    row = empty_row("sdpa-flash", bwd)
    assert row["pass"] == "backward" and row["gflop"] == flops(bwd) / 1e9
    assert set(row) == set(ROW_FIELDS) | set(BACKWARD_ROW_FIELDS) | set(bwd), sorted(row)
    assert all(row[f] is None for f in BACKWARD_ROW_FIELDS)
    row = empty_row("sdpa-flash", fwd)
    assert row["pass"] == "forward" and set(row) == set(ROW_FIELDS) | set(fwd) and "pass" in ROW_FIELDS
    # dO's seed stream is not Q, K, V's.
    assert do_seed(0x5EEDF1A5) != 0x5EEDF1A5 and 0 <= do_seed(2**64 - 1) < 2**64
    # The sanity bound: 8 u max(1, max |ref|).
    assert sanity_bound("bf16", 0.5) == 8 * 2.0**-8 and sanity_bound("f16", 4.0) == 32 * 2.0**-11
    # The reference's blocks: about 2^25 pairs each, whole rows, at least one.
    assert reference_block_rows(16384) == 2048 and reference_block_rows(4096) == 4096
    assert reference_block_rows(2**26) == 1 and reference_block_rows(3) == 3
    # The verdict: the gradient nearest its bound speaks for the row; all three must pass.
    bounds = {"dq": 0.04, "dk": 0.1, "dv": 0.2}
    ok = gradient_verdict({"dq": 0.01, "dk": 0.05, "dv": 0.02}, bounds)
    assert ok["status"] == "ok" and ok["check_passed"] and ok["reason"] is None
    assert ok["max_abs_error"] == 0.05 and ok["error_bound"] == 0.1 and ok["max_abs_error_dv"] == 0.02
    assert set(ok) >= set(BACKWARD_ROW_FIELDS) and ok["error_bound_dq"] == 0.04
    bad = gradient_verdict({"dq": 0.01, "dk": 0.5, "dv": float("nan")}, bounds)
    assert bad["status"] == "check-failed" and bad["check_passed"] is False
    # A NaN gradient speaks for the row, as null: JSON has no NaN (json.dumps would write one).
    assert bad["max_abs_error"] is None and bad["error_bound"] == 0.2 and bad["max_abs_error_dv"] is None
    assert "dK: max |error| 5.000e-01" in bad["reason"] and "dV: nan" in bad["reason"] and "dQ" not in bad["reason"], bad
    json.loads(json.dumps(bad, allow_nan=False))
    over = gradient_verdict({"dq": 0.01, "dk": 0.5, "dv": 0.02}, bounds)
    assert over["max_abs_error"] == 0.5 and over["error_bound"] == 0.1 and over["max_abs_error"] > over["error_bound"]
    assert over["reason"] == "dK: max |error| 5.000e-01 over the sanity bound 1.000e-01", over["reason"]
    assert gradient_verdict({"dq": math.inf, "dk": 0.0, "dv": 0.0}, bounds)["max_abs_error_dq"] is None
    # A passing verdict's error is within its bound, as check_passed says (Rust reads both).
    edge = gradient_verdict({"dq": 0.04, "dk": 0.0, "dv": 0.0}, bounds)
    assert edge["check_passed"] and edge["max_abs_error"] <= edge["error_bound"]
    return 0


if __name__ == "__main__":
    sys.exit(main())
