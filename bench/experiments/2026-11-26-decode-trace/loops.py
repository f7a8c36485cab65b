#!/usr/bin/env python3
"""Session 17, call 11: are the blocks whose key loops end last on the same SMs in every
launch? Reads session17-call11-loops.csv.xz (trace.cu's FLASHLAB_TRACE_DUMP: 20 launches
per process, two processes per shape) and prints, per shape, the last block's loop end
after the median block's, each SM's mean loop time (first tile to loop done), and how
well those means agree between the two processes and between halves of one."""
import collections
import csv
import lzma
import os
import statistics as st

here = os.path.dirname(os.path.abspath(__file__))
with lzma.open(os.path.join(here, "session17-call11-loops.csv.xz"), "rt") as f:
    rows = list(csv.DictReader(f))


def corr(a, b):
    ma, mb = st.mean(a), st.mean(b)
    cov = sum((x - ma) * (y - mb) for x, y in zip(a, b))
    return cov / (sum((x - ma) ** 2 for x in a) * sum((y - mb) ** 2 for y in b)) ** 0.5


shapes = collections.defaultdict(list)
process = -1
for r in rows:
    if r["launch"] == "0" and r["block"] == "0":
        process += 1  # each process appends its 20 launches, block 0 first
    r["process"] = process
    r["loop"] = float(r["loop_done_us"]) - float(r["first_tile_us"])
    shapes[(int(r["batch"]), int(r["keys"]))].append(r)

for (batch, keys), rs in shapes.items():
    print(f"batch {batch}, {keys} keys")
    per_sm = {}
    for p in sorted({r["process"] for r in rs}):
        loops, ends = collections.defaultdict(list), collections.defaultdict(list)
        for r in rs:
            if r["process"] == p:
                loops[int(r["sm"])].append(r["loop"])
                ends[int(r["launch"])].append(float(r["loop_done_us"]))
        per_sm[p] = {sm: st.mean(v) for sm, v in loops.items()}
        late = st.median(max(v) - st.median(v) for v in ends.values())
        print(f"  process {p}: the last loop ends {late:.2f} us after the median (median of 20 launches)")
    first, second = sorted(per_sm)[:2]
    sms = sorted(set(per_sm[first]) & set(per_sm[second]))
    r12 = corr([per_sm[first][s] for s in sms], [per_sm[second][s] for s in sms])
    halves = [collections.defaultdict(list), collections.defaultdict(list)]
    for r in rs:
        if r["process"] == first:
            halves[int(r["launch"]) >= 10][int(r["sm"])].append(r["loop"])
    both = sorted(set(halves[0]) & set(halves[1]))
    rh = corr([st.mean(halves[0][s]) for s in both], [st.mean(halves[1][s]) for s in both])
    means = sorted(per_sm[first].values())
    print(f"  each SM's mean loop: {means[0]:.2f} to {means[-1]:.2f} us (median {st.median(means):.2f})")
    print(f"  agreement of the SMs' means: between processes r = {r12:.2f}, launches 0-9 against 10-19 r = {rh:.2f}")
