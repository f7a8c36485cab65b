# times.txt lines: "round R d<D> [--causal] s<S> WHO TFLOPS"; prints each shape's runs per
# bundle and each bundle's mean over the first's.
import sys, collections
path, whos = sys.argv[1], sys.argv[2:]
t = collections.defaultdict(list)
for line in open(path):
    f = line.split()
    if len(f) < 5: continue
    key = " ".join(f[2:-2]); who = f[-2]
    try: t[(key, who)].append(float(f[-1]))
    except ValueError: pass
keys = sorted({k for k, _ in t}, key=lambda k: (k.split()[0], "causal" in k, int(k.split()[-1][1:])))
for k in keys:
    runs = [t[(k, w)] for w in whos]
    if not all(runs): print(k, "missing", runs); continue
    mean = [sum(r) / len(r) for r in runs]
    cols = "   ".join(f"{w} {' '.join(f'{x:6.1f}' for x in r)}" for w, r in zip(whos, runs))
    ratios = " ".join(f"{w}/{whos[0]} {m / mean[0]:.3f}" for w, m in zip(whos[1:], mean[1:]))
    print(f"{k:22s} {cols}   {ratios}")
