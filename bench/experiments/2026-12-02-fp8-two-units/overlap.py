# The share of consumer 0's softmax time that consumer 1's softmax spans too, block 0 (and 1).
# Usage: python3 overlap.py logs/timeline-*.json.gz
import gzip, json, sys
def ivals(lane, phase):
    return [(s['start_ns'], s['end_ns']) for s in lane['spans'] if s['phase'] == phase]
def inter(a, b):
    tot = 0.0; j = 0
    for s, e in a:
        for s2, e2 in b:
            lo, hi = max(s, s2), min(e, e2)
            if hi > lo: tot += hi - lo
    return tot
for f in sys.argv[1:]:
    t = json.load((gzip.open if f.endswith('.gz') else open)(f, 'rt'))['timeline']
    out = []
    for blk in range(t['blocks']):
        cons = [l for l in t['lanes'] if l['block'] == blk and l['role'] == 'consumer']
        a, b = ivals(cons[0], 'softmax'), ivals(cons[1], 'softmax')
        own = sum(e - s for s, e in a)
        out.append(f"block {blk}: {inter(a, b) / own:.0%} of {own / len(a):.0f} ns")
    print(f, '; '.join(out))
