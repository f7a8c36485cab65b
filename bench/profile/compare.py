"""Side-by-side summary of two Nsight Compute profiles written by side-by-side.sh.

Usage: python3 compare.py NAME=DIR/prefix [NAME=DIR/prefix ...] [--flops GFLOP]

Each prefix names prefix-raw.csv (`ncu -i R --page raw --csv --print-units base`) and
prefix-sass.csv (`ncu -i R --page source --csv --print-source sass`). Prints a markdown
table: time, the tensor pipe, issue slots, occupancy, registers, the top warp stalls,
shared-memory bank conflicts, and the executed SASS per warp and K/V tile by instruction
family. A tile is counted by its wgmmas: a warp issues D / 16 for S and BLOCK_KV / 16 for
P V, 16 at d128 with 128-key tiles; --hgmma-per-tile changes it.
"""
import csv
import gzip
import os
import re
import sys
from collections import Counter


def open_text(path):
    """The file, or its .gz beside it (the run of record keeps the SASS pages gzipped)."""
    if not os.path.exists(path) and os.path.exists(path + ".gz"):
        return gzip.open(path + ".gz", "rt", newline="")
    return open(path, newline="")


def raw(path):
    rows = [r for r in csv.reader(open_text(path)) if r]
    start = next(i for i, r in enumerate(rows) if "Kernel Name" in r)
    head, vals = rows[start], rows[start + 2]
    return {h: v for h, v in zip(head, vals)}


def num(v):
    try:
        return float(str(v).replace(",", ""))
    except ValueError:
        return float("nan")


FAMILIES = ["HGMMA", "MUFU.EX2", "FFMA", "FMUL", "FADD", "FMNMX", "FSEL", "SHFL", "F2FP", "BAR", "SYNCS", "WARPGROUP", "VOTE"]


def sass(path):
    """Executed warp instructions by family, and per HGMMA group the instructions executed
    between a wgmma wait (WARPGROUP.DEPBAR) and the next HGMMA issue."""
    counts, total, gap, between = Counter(), 0, 0, False
    with open_text(path) as f:
        rows = list(csv.reader(f))
    head = next(r for r in rows if r and r[0] == "Address")
    col_src, col_n = head.index("Source"), head.index("Instructions Executed")
    for r in rows[rows.index(head) + 1:]:
        if len(r) <= col_n or not r[0].startswith("0x"):
            continue
        op = r[col_src].strip()
        op = re.sub(r"^@!?U?P\w+\s+", "", op).split(" ")[0]
        n = num(r[col_n])
        if n != n:
            continue
        total += n
        for fam in FAMILIES:
            if op == fam or op.startswith(fam + "."):
                counts[fam] += n
        if op.startswith("WARPGROUP.DEPBAR"):
            between = True
        elif op.startswith("HGMMA"):
            between = False
        elif between:
            gap += n
    return counts, total, gap


def main():
    per_tile = 16
    args = [a for a in sys.argv[1:]]
    if "--hgmma-per-tile" in args:
        i = args.index("--hgmma-per-tile")
        per_tile = int(args[i + 1])
        del args[i:i + 2]
    cols = []
    for a in args:
        name, prefix = a.split("=", 1)
        m = raw(prefix + "-raw.csv")
        counts, total, gap = sass(prefix + "-sass.csv")
        tiles = counts["HGMMA"] / per_tile
        stalls = {k[len("smsp__pcsamp_warps_issue_stalled_"):]: num(v) for k, v in m.items()
                  if k.startswith("smsp__pcsamp_warps_issue_stalled_") and not k.endswith("_not_issued")}
        samples = sum(stalls.values()) or 1
        top = sorted(stalls.items(), key=lambda kv: -kv[1])[:5]
        cols.append((name, m, counts, total, gap, tiles, top, samples))
    def row(label, f):
        print(f"| {label} | " + " | ".join(f(c) for c in cols) + " |")
    print("| | " + " | ".join(c[0] for c in cols) + " |")
    print("|---|" + "---|" * len(cols))
    row("time (µs)", lambda c: f"{num(c[1]['gpu__time_duration.sum']) / 1000:.0f}")
    row("tensor pipe active (% of peak)", lambda c: f"{num(c[1]['sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed']):.1f}")
    row("issue slots busy (%)", lambda c: f"{num(c[1]['sm__issue_active.avg.pct_of_peak_sustained_elapsed']):.1f}")
    row("threads a block, registers a thread", lambda c: f"{num(c[1]['launch__block_size']):.0f}, {num(c[1]['launch__registers_per_thread']):.0f}")
    row("warps active a scheduler", lambda c: f"{num(c[1]['sm__warps_active.avg.per_cycle_active']) / 4:.2f}")
    def conflicts(c):
        n = sum(num(c[1].get(f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum", "nan")) for op in ("ld", "st"))
        return "-" if n != n else f"{n:.0f}"
    row("shared-memory bank conflicts", conflicts)
    row("top warp states (% of samples)", lambda c: ", ".join(f"{k} {100 * v / c[7]:.0f}" for k, v in c[6]))
    row("warp-tiles (HGMMA / %d)" % per_tile, lambda c: f"{c[5]:.0f}")
    for fam in FAMILIES:
        row(f"{fam} a warp and tile", lambda c, fam=fam: f"{c[2][fam] / c[5]:.1f}" if c[5] else "-")
    row("all instructions a warp and tile", lambda c: f"{c[3] / c[5]:.0f}" if c[5] else "-")
    row("between a wgmma wait and the next issue", lambda c: f"{c[4] / c[5]:.0f}" if c[5] else "-")


if __name__ == "__main__":
    main()
