# ratio.py BENCH.json [A B]: per shape, stage B's TFLOPS over stage A's (default 29 and 30).
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
a, b = (int(sys.argv[2]), int(sys.argv[3])) if len(sys.argv) > 3 else (29, 30)
t = {(r["stage"], r["head_dim"], r["causal"], r["seqlen"]): r["tflops"] for r in rows if r.get("kind") == "stage" and r["status"] == "ok"}
for d in (64, 128, 256):
    for c in (False, True):
        cells = [f"{t[(b, d, c, s)] / t[(a, d, c, s)]:.3f}" for s in (4096, 8192, 16384) if (a, d, c, s) in t and (b, d, c, s) in t]
        if cells: print(f"d{d}{' causal' if c else ''}: {' '.join(cells)}")
