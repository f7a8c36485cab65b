#!/usr/bin/env python3
"""Ratio tables from this record's bench.json files: a stage against another in the same
run, at seqlen 4096 / 8192 / 16384 for each head dim and mask. Usage:
  tables.py RUN.json[,RUN.json...] NUM DEN   (NUM, DEN: row names, e.g. 26-lean-loop flash-attn-4)
Several runs (comma-separated) give one cell per run, "a, b"."""
import json
import sys


def load(path):
    rows = json.load(open(path))["rows"]
    return {(r["name"], r["head_dim"], r["causal"], r["seqlen"]): r["tflops"] for r in rows if r.get("status") == "ok"}


def main():
    runs = [load(p) for p in sys.argv[1].split(",")]
    num, den = sys.argv[2], sys.argv[3]
    dims = sorted({k[1] for r in runs for k in r if k[0] == num})
    print(f"| {num} / {den} | " + " | ".join(f"d{d}{' causal' if c else ''}" for d in dims for c in (False, True)) + " |")
    print("|---|" + "---|" * (2 * len(dims)))
    for i, r in enumerate(runs):
        cells = []
        for d in dims:
            for c in (False, True):
                v = [r.get((num, d, c, s)) and r.get((den, d, c, s)) and r[(num, d, c, s)] / r[(den, d, c, s)] for s in (4096, 8192, 16384)]
                cells.append(" / ".join(f"{x:.2f}" if x else "-" for x in v))
        print(f"| run {i + 1} | " + " | ".join(cells) + " |")


main()
