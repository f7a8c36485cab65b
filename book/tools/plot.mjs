// Draws the Results chapter's plots from the measurements in book/results/<name>.json:
// writes src/generated/results-<name>.svg, a horizontal bar chart of TFLOP/s on a log
// scale with the measured cuBLAS GEMM as the ceiling. Usage: node tools/plot.mjs
// (from book/). The numbers are never typed into the chapter: the chart is the table.
import { readdirSync, readFileSync, writeFileSync, mkdirSync } from "node:fs";

const esc = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

export function chart(data) {
  const rows = [
    ...data.runs.map((r) => ({ label: r.label, tflops: r.tflops, note: `${r.ms} ms`, ours: true })),
    ...(data.references?.runs ?? []).map((r) => ({ label: r.label, tflops: r.tflops, note: "seqlen 8192", ours: false })),
  ];
  const sol = data.speed_of_light.gemm_bf16_tflops;
  const [left, width, rowH, top] = [190, 520, 30, 50];
  const lo = 0.5, hi = Math.max(sol, ...rows.map((r) => r.tflops)) * 1.3;
  const x = (v) => left + (width * Math.log10(v / lo)) / Math.log10(hi / lo);
  const height = top + rows.length * rowH + 50;
  const out = [`<svg xmlns="http://www.w3.org/2000/svg" width="${left + width + 200}" height="${height}" font-family="sans-serif" font-size="13">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="22" font-size="15" font-weight="bold">${esc(data.device)}: TFLOP/s (log scale), ${esc(data.shape)}</text>`];
  for (const t of [1, 10, 100, 1000]) {
    if (t > hi) continue;
    out.push(`<line x1="${x(t)}" y1="${top - 8}" x2="${x(t)}" y2="${height - 40}" stroke="#ddd"/>`,
      `<text x="${x(t)}" y="${height - 24}" text-anchor="middle" fill="#555">${t}</text>`);
  }
  rows.forEach((r, i) => {
    const y = top + i * rowH;
    out.push(`<text x="${left - 8}" y="${y + 15}" text-anchor="end">${esc(r.label)}</text>`,
      `<rect x="${left}" y="${y}" width="${Math.max(1, x(r.tflops) - left)}" height="${rowH - 8}" fill="${r.ours ? "#3b7dd8" : "#aaa"}"/>`,
      `<text x="${x(r.tflops) + 6}" y="${y + 15}">${r.tflops} (${esc(r.note)})</text>`);
  });
  out.push(`<line x1="${x(sol)}" y1="${top - 12}" x2="${x(sol)}" y2="${height - 40}" stroke="#c0392b" stroke-width="2" stroke-dasharray="6,4"/>`,
    `<text x="${x(sol)}" y="${top - 16}" text-anchor="middle" fill="#c0392b">cuBLAS bf16 GEMM ${sol}</text>`,
    `<text x="${left}" y="${height - 6}" fill="#555">blue: flashlab stages at seqlen 4096; grey: libraries, measured earlier at seqlen 8192</text>`, `</svg>`);
  return out.join("\n") + "\n";
}

const dir = new URL("../results/", import.meta.url);
const outDir = new URL("../src/generated/", import.meta.url);
mkdirSync(outDir, { recursive: true });
for (const file of readdirSync(dir).filter((f) => f.endsWith(".json"))) {
  const name = file.replace(/\.json$/, "");
  writeFileSync(new URL(`results-${name}.svg`, outDir), chart(JSON.parse(readFileSync(new URL(file, dir), "utf8"))));
  console.log(`wrote src/generated/results-${name}.svg`);
}
