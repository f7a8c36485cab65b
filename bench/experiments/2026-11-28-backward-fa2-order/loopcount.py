import re, sys, subprocess, collections
# Static instruction mix of the main loop of bwd_bf16_d<D> in a cubin: from the target of
# the last backward branch to that branch.
cubin, fn = sys.argv[1], sys.argv[2]
out = subprocess.run(['cuobjdump', '-sass', '-fun', fn, cubin], capture_output=True, text=True).stdout
ins = []
for line in out.splitlines():
    m = re.match(r'\s+/\*([0-9a-f]{4,})\*/\s+(.*?);', line)
    if m: ins.append((int(m.group(1), 16), m.group(2).strip()))
back = [(a, int(t, 16)) for a, s in ins for t in re.findall(r'BRA\s+(?:`\(\.L_x_\d+\)\s*)?0x([0-9a-f]+)', s) if int(t, 16) < a]
a_end, a_top = max(back, key=lambda x: x[0] - x[1])
body = [s for a, s in ins if a_top <= a <= a_end]
ops = collections.Counter(re.sub(r'^@!?U?P\w+\s+', '', s).split()[0].split('.')[0] for s in body)
print(f"{fn}: loop {hex(a_top)}..{hex(a_end)}: {len(body)} instructions;", ', '.join(f"{k} {v}" for k, v in ops.most_common(14)))
