# Reads profile.sh's exports and prints, for stage 25 beside FlashAttention-2 at each head
# dim: the stall reasons per issued instruction, then per SASS opcode the instructions
# executed (per warp and K/V block step is not known for FA2, so totals) and the share of
# stall samples.
import csv, sys, os, collections, re
out = sys.argv[1]
def raw(name):
    p = os.path.join(out, name + "-raw.csv")
    if not os.path.exists(p): return {}
    rows = list(csv.reader(open(p)))
    h = next(i for i, r in enumerate(rows) if "ID" in r or "Kernel Name" in r)
    hdr, vals = rows[h], rows[h + 2] if len(rows) > h + 2 else rows[h + 1]
    return dict(zip(hdr, vals))
def sass(name):
    p = os.path.join(out, name + "-sass.csv")
    if not os.path.exists(p): return None
    rows = list(csv.reader(open(p)))
    hdr = next(i for i, r in enumerate(rows) if "Source" in r and "Address" in r)
    h = rows[hdr]; src = h.index("Source")
    samp = next(i for i, c in enumerate(h) if c.startswith("Warp Stall Sampling (All"))
    exe = h.index("Instructions Executed")
    ops_s, ops_e = collections.Counter(), collections.Counter()
    for r in rows[hdr + 1:]:
        if len(r) <= max(samp, exe) or not r[src].strip(): continue
        toks = r[src].strip().split()
        op = (toks[1] if toks[0].startswith("@") and len(toks) > 1 else toks[0]).split(".")[0]
        try: ops_s[op] += float(r[samp].replace(",", "")); ops_e[op] += float(r[exe].replace(",", ""))
        except ValueError: pass
    return ops_s, ops_e
for d in (128, 64):
    a, b = raw(f"s25-d{d}"), raw(f"fa2-d{d}")
    if not a or not b: print(f"d{d}: missing"); continue
    print(f"== d{d}, seqlen 4096, no mask: stage 25 | FlashAttention-2")
    for k in ("gpu__time_duration.sum", "smsp__inst_executed.sum", "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", "smsp__issue_active.avg.pct_of_peak_sustained_active", "launch__registers_per_thread", "launch__grid_size"):
        print(f"  {k:70s} {a.get(k, '?'):>14s} {b.get(k, '?'):>14s}")
    keys = sorted(k for k in a if re.match(r"smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio$", k))
    print("  stall reasons, warps per issued instruction:")
    for k in sorted(keys, key=lambda k: -float((b.get(k) or "0").replace(",", "") or 0) - float((a.get(k) or "0").replace(",", "") or 0)):
        va, vb = a.get(k, "0"), b.get(k, "0")
        try:
            if float(va.replace(",", "")) < 0.02 and float(vb.replace(",", "")) < 0.02: continue
        except ValueError: pass
        print(f"    {k.replace('smsp__average_warps_issue_stalled_', '').replace('_per_issue_active.ratio', ''):30s} {va:>10s} {vb:>10s}")
    sa, sb = sass(f"s25-d{d}"), sass(f"fa2-d{d}")
    if sa and sb:
        ta, tb = sum(sa[0].values()) or 1, sum(sb[0].values()) or 1
        print("  per opcode: executed (M) and share of stall samples")
        for op in sorted(set(sa[1]) | set(sb[1]), key=lambda o: -(sa[1][o] + sb[1][o]))[:24]:
            print(f"    {op:10s} {sa[1][op]/1e6:9.2f} M {sa[0][op]/ta*100:5.1f}%   {sb[1][op]/1e6:9.2f} M {sb[0][op]/tb*100:5.1f}%")
