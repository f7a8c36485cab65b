#!/usr/bin/env python3
"""Call Q1's table: each row's TFLOPS, and the SM clock, power and temperature nvidia-smi
sampled (every 20 ms) from the end of the row before it to its own end, samples above
450 W (the row's own load: its warm-up and its timed calls). Usage: python3 clocks.py logs/q1"""
import csv, datetime, glob, json, re, statistics as st, sys

d = sys.argv[1] if len(sys.argv) > 1 else "logs/q1"
smi = []
for r in csv.reader(open(f"{d}/smi.csv")):
    try:
        t = datetime.datetime.strptime(r[0].strip(), "%Y/%m/%d %H:%M:%S.%f").timestamp()
        smi.append((t, float(r[1].split()[0]), float(r[2].split()[0]), float(r[3])))
    except (ValueError, IndexError):
        pass
ends = []
for f in sorted(glob.glob(f"{d}/s26-r*.txt")):
    for line in open(f):
        m = re.match(r"(\S+) \[stages \d+/\d+\] 26-lean-loop b1 h16 s(\d+) d(\d+): ([\d.]+) TFLOPS", line)
        if m:
            ends.append((float(m[1]), "stage 26", int(m[2]), int(m[3]), float(m[4]), f.split("-")[-1][:2]))
for f in sorted(glob.glob(f"{d}/base-*-r*.jsonl")):
    mode, rd = re.search(r"-(calls|queued)-(r\d)", f).groups()
    for line in open(f):
        t, j = line.split(" ", 1)
        try:
            r = json.loads(j)
        except ValueError:
            continue
        if "median_ms" in r and r.get("tflops"):
            ends.append((float(t), f"{r['name']}, warm-up {mode}", r["seqlen"], r["head_dim"], r["tflops"], rd))
print("| round | kernel | shape | TFLOPS | SM clock (MHz) | power (W) | temperature (C) | J a PFLOP |")
print("|---|---|---|--:|--:|--:|--:|--:|")
prev = 0.0
for t, name, s, hd, tf, rd in sorted(ends):
    w = [x for x in smi if max(prev, t - 4.0) <= x[0] <= t - 0.05 and x[2] > 450]
    prev = t
    if not w:
        print(f"| {rd} | {name} | d{hd} {s} | {tf:.0f} | - | - | - | - |")
        continue
    c, p, T = (st.median(x[i] for x in w) for i in (1, 2, 3))
    print(f"| {rd} | {name} | d{hd} {s} | {tf:.0f} | {c:.0f} | {p:.0f} | {T:.0f} | {p / tf:.3f} |")
