#!/usr/bin/env python3
"""Times the attention kernels flashlab is measured against, on flashlab's shapes.

Backends: PyTorch SDPA's flash, cuDNN and memory-efficient kernels (each forced with
torch.nn.attention.sdpa_kernel), and the flash_attn packages' kernels (FlashAttention-2's
flash_attn_func, FlashAttention-3's flash_attn_interface.flash_attn_func, FlashAttention-4's
flash_attn.cute.flash_attn_func) when installed. FlashAttention-4's wheels are not on the
GPU machine: scripts/fa4-wheels.sh and book/src/results.md ("FlashAttention-4 on the GPU
machine") bring them.

Input: the shapes as a JSON list of {batch, heads, seqlen, head_dim, causal, dtype}
(--shapes-json FILE, or stdin), or --shape B,H,S,D[,causal] for a quick look.
Output: JSON Lines on stdout (or --out FILE): first one {"kind": "meta", ...} line
describing the environment, then one row per (shape, backend) with the fields of
flashlab's bench rows. `flashlab bench --baselines` runs this script and merges the rows.

Conventions shared with flashlab (so rows compare):
  * Q, K, V are [batch, seqlen, heads, head_dim], drawn from normal(0.5, 1), rounded to
    the dtype; SDPA gets them as [batch, heads, seqlen, head_dim] views (no copies).
  * Queries and keys have the same length, so SDPA's top-left causal mask is the same as
    flashlab's bottom-right one.
  * FLOPs: 4 * batch * heads * head_dim * visible pairs, where visible pairs are seqlen^2,
    or seqlen * (seqlen + 1) / 2 when causal.
  * Timing: CUDA events around each call; about 50 ms of warm-up, then enough calls for
    about 300 ms (5 to 200), the median. --timing gated (the default) queues the timed
    calls behind a kernel that waits; --timing ungated times each call on an idle stream,
    as `flashlab --timing ungated` does.
  * Check: a sample of query rows of the first and last (batch, head) against float64
    math on the GPU; a sanity check that passes when max |dO| <= 8 u max(1, max |O|),
    u the dtype's unit roundoff (flashlab's own check is stricter; these kernels are the
    references, not the subject).

`python3 baselines.py --self-test` checks the parts that need no torch or GPU.
"""

import argparse
import json
import math
import sys
import warnings

UNIT_ROUNDOFF = {"bf16": 2.0**-8, "f16": 2.0**-11}
BOUND_ULPS = 8.0
ALL_BACKENDS = ["sdpa-flash", "sdpa-cudnn", "sdpa-efficient", "flash-attn", "flash-attn-3", "flash-attn-4"]
ROW_FIELDS = [
    "kind", "name", "stage", "batch", "heads", "seqlen", "head_dim", "causal", "dtype",
    "status", "reason", "median_ms", "min_ms", "iterations", "gflop", "tflops",
    "sol_percent", "max_abs_error", "error_bound", "check_passed",
]
CHECK_ROWS = 32
# The timing gate holds the stream this long per timed call (harness/src/timing.rs:
# GATE_US_PER_LAUNCH): far more than Python needs to queue one.
GATE_US_PER_CALL = 200
# flashlab's --timing names (harness/src/timing.rs: TimingProtocol); gated is the default.
TIMING_PROTOCOLS = ["gated", "ungated"]
# Where a row that skips FlashAttention-4 for want of its wheels sends the reader.
FA4_RECIPE = (
    "bring its wheels with scripts/fa4-wheels.sh and put them on PYTHONPATH "
    "(book/src/results.md, 'FlashAttention-4 on the GPU machine')"
)


def visible_pairs(seqlen, causal):
    """Query-key pairs a square mask lets through (bottom-right == top-left here)."""
    return seqlen * (seqlen + 1) // 2 if causal else seqlen * seqlen


def flops(shape):
    return 4.0 * shape["batch"] * shape["heads"] * shape["head_dim"] * visible_pairs(
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


def normalize_shape(raw):
    """Validates one shape dict; returns it with every field present and typed."""
    try:
        shape = {
            "batch": int(raw["batch"]),
            "heads": int(raw["heads"]),
            "seqlen": int(raw["seqlen"]),
            "head_dim": int(raw["head_dim"]),
            "causal": bool(raw.get("causal", False)),
            "dtype": str(raw.get("dtype", "bf16")).lower(),
        }
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"shape {raw!r} needs integer batch, heads, seqlen, head_dim: {e}")
    for key in ("batch", "heads", "seqlen", "head_dim"):
        if shape[key] < 1:
            raise ValueError(f"shape {raw!r}: {key} must be at least 1")
    if shape["dtype"] not in UNIT_ROUNDOFF:
        raise ValueError(f"shape {raw!r}: dtype must be bf16 or f16")
    return shape


def parse_shape_arg(text):
    """`B,H,S,D[,causal]` -> shape dict."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) not in (4, 5):
        raise ValueError(f"--shape {text!r}: expected B,H,S,D or B,H,S,D,causal")
    b, h, s, d = (int(p) for p in parts[:4])
    causal = len(parts) == 5 and parts[4].lower() in ("causal", "1", "true", "yes", "on")
    return normalize_shape({"batch": b, "heads": h, "seqlen": s, "head_dim": d, "causal": causal})


def empty_row(name, shape):
    row = {f: None for f in ROW_FIELDS}
    row.update(shape)
    row.update(kind="baseline", name=name, status="skipped", gflop=flops(shape) / 1e9)
    return row


def first_line(text, limit=300):
    line = str(text).strip().splitlines()[0] if str(text).strip() else type(text).__name__
    return line[:limit]


def fa4_missing_reason(error):
    """The skip reason of a flash-attn-4 row when flash_attn.cute did not import."""
    why = f"{type(error).__name__}: {first_line(error)}"
    return f"flash_attn.cute (FlashAttention-4) is not importable ({why}); {FA4_RECIPE}"


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


def emit(out, obj):
    out.write(json.dumps(obj, sort_keys=True) + "\n")
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
    for _ in range(1000):
        t = once()
        first = min(first, t)
        warm += t
        if warm >= a.warmup_ms:
            break
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

    @staticmethod
    def _try_import(name):
        import importlib

        try:
            return importlib.import_module(name)
        except Exception as e:  # ImportError, or a broken build raising anything
            return e

    def meta(self):
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
        }

    def inputs(self, shape, seed):
        torch = self.torch
        dtype = {"bf16": torch.bfloat16, "f16": torch.float16}[shape["dtype"]]
        gen = torch.Generator(device=self.device)
        gen.manual_seed(seed)
        size = (shape["batch"], shape["seqlen"], shape["heads"], shape["head_dim"])

        def draw():
            x = torch.randn(size, generator=gen, device=self.device, dtype=torch.float32)
            return (x + 0.5).to(dtype)

        return draw(), draw(), draw()

    def kernel(self, name, shape, q, k, v):
        """A zero-argument callable returning O as [B, S, H, D], or a skip reason."""
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
            worst = max(worst, (got - ref).abs().max().item())
            biggest = max(biggest, ref.abs().max().item())
        bound = BOUND_ULPS * UNIT_ROUNDOFF[shape["dtype"]] * max(1.0, biggest)
        return worst, bound

    def run(self, name, shape, q, k, v):
        torch = self.torch
        row = empty_row(name, shape)
        fn = self.kernel(name, shape, q, k, v)
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
                # FlashAttention-4 says "not on this GPU / head dim" with assert.
                unsupported = (RuntimeError, NotImplementedError, AssertionError)
                row["status"] = "skipped" if isinstance(e, unsupported) else "error"
                return row
        try:
            err, bound = self.check(shape, q, k, v, o)
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
        return row


# ----------------------------------------------------------------------------- main


def read_shapes(args):
    if args.shape:
        return [parse_shape_arg(s) for s in args.shape]
    if args.shapes_json and args.shapes_json != "-":
        with open(args.shapes_json) as f:
            raw = json.load(f)
    else:
        raw = json.load(sys.stdin)
    if isinstance(raw, dict) and "shapes" in raw:
        raw = raw["shapes"]
    if not isinstance(raw, list):
        raise ValueError("the shapes JSON must be a list of shape objects")
    return [normalize_shape(s) for s in raw]


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--shapes-json", metavar="FILE", help="shapes as a JSON list ('-' or absent: stdin)")
    p.add_argument("--shape", action="append", metavar="B,H,S,D[,causal]", help="one shape (repeatable)")
    p.add_argument("--backends", default=",".join(ALL_BACKENDS), help="comma list of " + ", ".join(ALL_BACKENDS))
    p.add_argument("--out", metavar="FILE", help="write the JSON Lines here instead of stdout")
    p.add_argument("--device", type=int, default=0, help="CUDA device ordinal")
    p.add_argument("--seed", type=int, default=0x5EEDF1A5)
    p.add_argument("--warmup-ms", type=float, default=50.0)
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
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    unknown = [b for b in backends if b not in ALL_BACKENDS]
    if unknown:
        p.error(f"unknown backend(s) {', '.join(unknown)}; choose from {', '.join(ALL_BACKENDS)}")
    args.backends = backends
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
    meta = runner.meta()
    meta["planned"] = len(shapes) * len(args.backends)
    return write_rows(args, runner, shapes, meta)


def write_rows(args, runner, shapes, meta):
    """Writes `meta`, then a row per (shape, backend) to --out or stdout, each shape's
    inputs drawn once for all backends (decode_baselines.py writes its rows through this
    too)."""
    out = open(args.out, "w") if args.out else sys.stdout
    emit(out, meta)
    for shape in shapes:
        q, k, v = runner.inputs(shape, args.seed)
        for name in args.backends:
            emit(out, runner.run(name, shape, q, k, v))
        del q, k, v
        runner.torch.cuda.empty_cache()
    if out is not sys.stdout:
        out.close()
    return 0


def self_test():
    """The torch-free parts: FLOP counts, shapes, medians, iteration counts, rows."""
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
    for bad in ({"batch": 0, "heads": 1, "seqlen": 1, "head_dim": 1}, {"heads": 1}, {**shape, "dtype": "fp8"}):
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
    assert args.timing == "gated" and parse_args(["--timing", "ungated"]).timing == "ungated"
    # FlashAttention-4 is one of the default backends, and can be asked for alone.
    assert "flash-attn-4" in parse_args([]).backends
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
    print("baselines.py self-test: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
