#!/usr/bin/env python3
"""The table of call M2: each row's TFLOPS and the SM clock and power nvidia-smi sampled
(every 20 ms) in the 3 s before the row was reported, samples above 450 W (the row's own
load). Usage: python3 clocks.py logs/m2"""
import csv, datetime, glob, json, re, statistics as st, sys

d = sys.argv[1] if len(sys.argv) > 1 else "logs/m2"
smi = []
for r in csv.reader(open(f"{d}/smi.csv")):
    try:
        t = datetime.datetime.strptime(r[0].strip(), "%Y/%m/%d %H:%M:%S.%f").timestamp()
        smi.append((t, float(r[1].split()[0]), float(r[2].split()[0])))
    except (ValueError, IndexError):
        pass
ends = []
for f in sorted(glob.glob(f"{d}/s26-r*.txt")):
    for line in open(f):
        m = re.match(r"(\S+) \[stages \d+/\d+\] 26-lean-loop b1 h16 s(\d+) d(\d+): ([\d.]+) TFLOPS", line)
        if m:
            ends.append((float(m[1]), "stage 26", int(m[2]), int(m[3]), float(m[4]), f[-6:-4]))
for f in sorted(glob.glob(f"{d}/base-r*.jsonl")):
    for line in open(f):
        t, j = line.split(" ", 1)
        try:
            r = json.loads(j)
        except ValueError:
            continue
        if "median_ms" in r:
            ends.append((float(t), r["name"], r["seqlen"], r["head_dim"], r["tflops"], f[-8:-6]))
print("| round | kernel | shape | TFLOPS | SM clock (MHz) | power (W) |")
print("|---|---|---|--:|--:|--:|")
for t, name, s, hd, tf, rd in sorted(ends):
    w = [x for x in smi if t - 3.0 <= x[0] <= t - 0.05 and x[2] > 450]
    clock = st.median(x[1] for x in w) if w else float("nan")
    power = st.median(x[2] for x in w) if w else float("nan")
    print(f"| {rd} | {name} | d{hd} {s} | {tf:.0f} | {clock:.0f} | {power:.0f} |")
