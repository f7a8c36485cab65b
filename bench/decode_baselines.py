#!/usr/bin/env python3
"""Times the decode kernels flashlab's stage 14 is measured against, on its decode shapes.

Backends: PyTorch SDPA's flash and cuDNN kernels with native GQA (enable_gqa=True, the K/V
heads not repeated), and FlashAttention-4 (flash_attn.cute.flash_attn_func, which takes
GQA as fewer K/V heads) when installed and when it serves the shape.

Input: shapes as a JSON list of {batch, heads, kv_heads, seqlen_q, seqlen_k, head_dim,
dtype} (--shapes-json FILE), or --shape B,H,HKV,SQ,SK,D for a quick look. Every sequence
of a shape has the same cache length, contiguous: [batch, seqlen_k, kv_heads, head_dim].
Output: JSON Lines, first a {"kind": "meta"} line, then one row per (shape, backend) with
GB/s of unique K/V read: 2 (K and V) * batch * seqlen_k * kv_heads * head_dim * 2 bytes.

Timing: the protocol of baselines.py (gated by default), with the L2 cache flushed before
each timed call outside its event pair by reading a buffer twice its size, as flashlab's
decode runs do
(harness/src/decode/run.rs): a 50 MiB cache of an 8k context would otherwise be read from
the L2 the last call filled. Check: every row of the first and last sequence against
float64 math on the GPU, with baselines.py's sanity bound.

`python3 decode_baselines.py --self-test` checks the parts that need no torch or GPU.
"""

import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from baselines import (  # noqa: E402  (flashlab writes both scripts side by side)
    BOUND_ULPS,
    TIMING_PROTOCOLS,
    UNIT_ROUNDOFF,
    WARMUP_MODES,
    fa4_missing_reason,
    first_line,
    first_output,
    time_calls,
    write_rows,
)

ALL_BACKENDS = ["sdpa-flash", "sdpa-cudnn", "flash-attn-4"]


def kv_bytes(shape):
    """Unique K/V bytes a decode step reads: each K/V head once."""
    return 2.0 * shape["batch"] * shape["seqlen_k"] * shape["kv_heads"] * shape["head_dim"] * 2


def gb_per_s(shape, ms):
    return kv_bytes(shape) / (ms * 1e-3) / 1e9


def normalize_shape(raw):
    try:
        shape = {k: int(raw[k]) for k in ("batch", "heads", "kv_heads", "seqlen_q", "seqlen_k", "head_dim")}
        shape["dtype"] = str(raw.get("dtype", "bf16")).lower()
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"shape {raw!r} needs integer batch, heads, kv_heads, seqlen_q, seqlen_k, head_dim: {e}")
    if min(shape[k] for k in ("batch", "heads", "kv_heads", "seqlen_q", "seqlen_k", "head_dim")) < 1:
        raise ValueError(f"shape {raw!r}: every size must be at least 1")
    if shape["heads"] % shape["kv_heads"]:
        raise ValueError(f"shape {raw!r}: heads must be a multiple of kv_heads")
    if shape["dtype"] not in UNIT_ROUNDOFF:
        raise ValueError(f"shape {raw!r}: dtype must be bf16 or f16")
    return shape


def parse_shape_arg(text):
    parts = [int(p) for p in text.split(",")]
    if len(parts) != 6:
        raise ValueError(f"--shape {text!r}: expected B,H,HKV,SQ,SK,D")
    keys = ("batch", "heads", "kv_heads", "seqlen_q", "seqlen_k", "head_dim")
    return normalize_shape(dict(zip(keys, parts)))


def empty_row(name, shape):
    row = dict(shape)
    row.update(
        kind="decode-baseline", name=name, status="skipped", reason=None, median_ms=None, min_ms=None,
        iterations=None, gb_per_s=None, kv_bytes=kv_bytes(shape), max_abs_error=None, error_bound=None,
        check_passed=None,
    )
    return row


class Runner:
    def __init__(self, args):
        import importlib

        import torch

        self.torch, self.args = torch, args
        if not torch.cuda.is_available():
            raise RuntimeError("torch sees no CUDA GPU (torch.cuda.is_available() is False)")
        self.device = torch.device("cuda", args.device)
        torch.cuda.set_device(self.device)
        try:
            self.fa4 = importlib.import_module("flash_attn.cute")
        except Exception as e:
            self.fa4 = e
        # Twice the L2, read before each timed call: what the last call left is evicted,
        # and the L2 holds clean lines (a write would leave dirty ones to write back).
        l2 = getattr(torch.cuda.get_device_properties(self.device), "L2_cache_size", 50 << 20)
        self.flush_buffer = torch.ones(2 * l2 // 4, dtype=torch.int32, device=self.device)

    def meta(self):
        torch = self.torch
        props = torch.cuda.get_device_properties(self.device)
        return {
            "kind": "meta",
            "torch": torch.__version__,
            "cuda": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None,
            "device": props.name,
            "flash_attn_4": None if isinstance(self.fa4, Exception) else "installed",
            "cold_l2": True,
        }

    def inputs(self, shape, seed):
        torch = self.torch
        dtype = {"bf16": torch.bfloat16, "f16": torch.float16}[shape["dtype"]]
        gen = torch.Generator(device=self.device)
        gen.manual_seed(seed)
        b, d = shape["batch"], shape["head_dim"]

        def draw(s, h):
            return (torch.randn((b, s, h, d), generator=gen, device=self.device) + 0.5).to(dtype)

        return draw(shape["seqlen_q"], shape["heads"]), draw(shape["seqlen_k"], shape["kv_heads"]), draw(
            shape["seqlen_k"], shape["kv_heads"]
        )

    def kernel(self, name, shape, q, k, v):
        # Decode with one new token per sequence needs no mask; with more, the new tokens
        # see each other causally (bottom-right), which SDPA's is_causal (top-left) is not:
        # flashlab's decode bench times seqlen_q = 1, where the two agree.
        if shape["seqlen_q"] != 1:
            return "the decode baselines are timed at one query row (SDPA's causal mask is top-left)"
        if name.startswith("sdpa-"):
            from torch.nn.attention import SDPBackend, sdpa_kernel
            from torch.nn.functional import scaled_dot_product_attention as sdpa

            backend = {"sdpa-flash": SDPBackend.FLASH_ATTENTION, "sdpa-cudnn": SDPBackend.CUDNN_ATTENTION}[name]
            qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))

            def call():
                with sdpa_kernel(backend):
                    return sdpa(qt, kt, vt, enable_gqa=True)

            return lambda: call().transpose(1, 2)
        if isinstance(self.fa4, Exception):
            return fa4_missing_reason(self.fa4)
        fa4, scale = self.fa4, 1.0 / math.sqrt(shape["head_dim"])
        return lambda: first_output(fa4.flash_attn_func(q, k, v, softmax_scale=scale))

    def flush(self):
        self.flush_buffer.sum()

    def time(self, fn):
        return time_calls(self.torch, self.args, fn, before=self.flush)

    def check(self, shape, q, k, v, o):
        torch = self.torch
        group, scale = shape["heads"] // shape["kv_heads"], 1.0 / math.sqrt(shape["head_dim"])
        worst, biggest = 0.0, 0.0
        for b in sorted({0, shape["batch"] - 1}):
            qs = q[b].double().transpose(0, 1)  # [heads, sq, d]
            ks = k[b].double().transpose(0, 1).repeat_interleave(group, 0)
            vs = v[b].double().transpose(0, 1).repeat_interleave(group, 0)
            ref = torch.softmax((qs @ ks.transpose(1, 2)) * scale, dim=-1) @ vs
            got = o[b].double().transpose(0, 1)
            worst = max(worst, (got - ref).abs().max().item())
            biggest = max(biggest, ref.abs().max().item())
        return worst, BOUND_ULPS * UNIT_ROUNDOFF[shape["dtype"]] * max(1.0, biggest)

    def run(self, name, shape, q, k, v):
        torch = self.torch
        row = empty_row(name, shape)
        fn = self.kernel(name, shape, q, k, v)
        if isinstance(fn, str):
            row["reason"] = fn
            return row
        try:
            o = fn()
            torch.cuda.synchronize()
        except Exception as e:  # no kernel for this shape or GPU
            row["reason"] = first_line(e)
            row["status"] = "skipped" if isinstance(e, (RuntimeError, NotImplementedError, AssertionError)) else "error"
            return row
        try:
            err, bound = self.check(shape, q, k, v, o)
            del o
            med, low, n = self.time(fn)
        except torch.cuda.OutOfMemoryError as e:
            row.update(status="error", reason=f"out of memory: {first_line(e)}")
            return row
        row.update(median_ms=med, min_ms=low, iterations=n, gb_per_s=gb_per_s(shape, med), max_abs_error=err,
                   error_bound=bound, check_passed=err <= bound)
        row["status"] = "ok" if err <= bound else "check-failed"
        if err > bound:
            row["reason"] = f"max |dO| {err:.3e} over the sanity bound {bound:.3e}"
        return row


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--shapes-json", metavar="FILE")
    p.add_argument("--shape", action="append", metavar="B,H,HKV,SQ,SK,D")
    p.add_argument("--backends", default=",".join(ALL_BACKENDS))
    p.add_argument("--out", metavar="FILE")
    p.add_argument("--device", type=int, default=0)
    p.add_argument("--seed", type=int, default=0x5EEDF1A5)
    p.add_argument("--warmup-ms", type=float, default=50.0)
    p.add_argument("--target-ms", type=float, default=300.0)
    p.add_argument("--min-iters", type=int, default=5)
    p.add_argument("--max-iters", type=int, default=200)
    p.add_argument("--timing", choices=TIMING_PROTOCOLS, default="gated")
    p.add_argument("--warmup", choices=WARMUP_MODES, default="calls")
    p.add_argument("--self-test", action="store_true")
    args = p.parse_args(argv)
    args.backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    unknown = [b for b in args.backends if b not in ALL_BACKENDS]
    if unknown:
        p.error(f"unknown backend(s) {', '.join(unknown)}; choose from {', '.join(ALL_BACKENDS)}")
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.self_test:
        return self_test()
    try:
        if args.shape:
            shapes = [parse_shape_arg(s) for s in args.shape]
        else:
            with open(args.shapes_json) if args.shapes_json else sys.stdin as f:
                shapes = [normalize_shape(s) for s in json.load(f)]
    except (ValueError, OSError) as e:
        print(f"decode_baselines.py: {e}", file=sys.stderr)
        return 2
    try:
        runner = Runner(args)
    except (ImportError, RuntimeError) as e:
        print(f"decode_baselines.py: {first_line(e)}", file=sys.stderr)
        return 3
    return write_rows(args, runner, shapes, runner.meta())


def self_test():
    shape = parse_shape_arg("1,32,8,1,8192,128")
    # 8192 keys x 8 heads x 128 x 2 bytes, K and V: 32 MiB, once per K/V head.
    assert kv_bytes(shape) == 32 * 2**20
    assert abs(gb_per_s(shape, 0.01) - 32 * 2**20 / 1e-5 / 1e9) < 1e-9
    for bad in ("1,32,5,1,8192,128", "1,32,8,1,0,128", "1,2,3"):
        try:
            parse_shape_arg(bad)
        except ValueError:
            pass
        else:
            raise AssertionError(f"{bad} was accepted")
    row = empty_row("sdpa-flash", shape)
    assert row["kind"] == "decode-baseline" and row["status"] == "skipped" and row["kv_bytes"] == kv_bytes(shape)
    assert parse_args([]).backends == ALL_BACKENDS
    assert parse_args([]).warmup == "calls"  # time_calls reads it
    print("decode_baselines.py self-test: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
