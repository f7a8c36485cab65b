# For three consumers: the share of time in which k = 0, 1, 2, 3 consumers are in their softmax
# at once, and the share in which at least one consumer's product (QK or PV) is in flight.
import gzip, json, sys
for f in sys.argv[1:]:
    t = json.load((gzip.open if f.endswith('.gz') else open)(f, 'rt'))['timeline']
    for blk in range(t['blocks']):
        cons = [l for l in t['lanes'] if l['block'] == blk and l['role'] == 'consumer']
        ev = []
        for i, l in enumerate(cons):
            for s in l['spans']:
                ev.append((s['start_ns'], s['end_ns'], i, s['phase']))
        lo = min(e[0] for e in ev); hi = max(e[1] for e in ev)
        step = 2.0
        import math
        n = int((hi - lo) / step)
        cnt = {}
        prod = 0
        phases = sorted(set(e[3] for e in ev))
        # bucket
        soft = [0]*n; pr = [0]*n
        for s, e, i, ph in ev:
            a = int((s - lo) / step); b = int((e - lo) / step)
            for k in range(a, min(b, n)):
                if ph == 'softmax': soft[k] += 1
                if ph in ('qk', 'pv', 'QK', 'PV') or 'qk' in ph.lower() or 'pv' in ph.lower(): pr[k] = 1
        for k in range(n): cnt[soft[k]] = cnt.get(soft[k], 0) + 1
        print(f.split('/')[-1], 'block', blk, 'phases', phases, 'consumers', len(cons))
        print('   softmaxes at once:', ', '.join(f"{k}: {v/n:.0%}" for k, v in sorted(cnt.items())), '| some product in flight:', f"{sum(pr)/n:.0%}")
