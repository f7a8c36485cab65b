// Puts wasm-bindgen's output for the playground into the book: the glue script as it is,
// and the module's bytes as a script setting self.LAYOUT_VIZ_WASM_BASE64, so the page
// loads it with <script> tags alone and works offline, even opened from disk (file://),
// where browsers refuse fetch() and ES modules.
//
// Usage: node playground-bundle.mjs BINDGEN_OUT_DIR BOOK_DIR
import { readFileSync, writeFileSync, mkdirSync, copyFileSync } from "node:fs";
import { join } from "node:path";

const [from, to] = process.argv.slice(2);
if (!from || !to) {
  console.error("usage: node playground-bundle.mjs BINDGEN_OUT_DIR BOOK_DIR");
  process.exit(2);
}
mkdirSync(to, { recursive: true });
copyFileSync(join(from, "layout_viz_wasm.js"), join(to, "layout_viz_wasm.js"));
const base64 = readFileSync(join(from, "layout_viz_wasm_bg.wasm")).toString("base64");
writeFileSync(
  join(to, "layout_viz_wasm_bytes.js"),
  `// layout-viz-wasm's module, base64 (written by book/tools/playground-bundle.mjs).\nself.LAYOUT_VIZ_WASM_BASE64 = "${base64}";\n`,
);
