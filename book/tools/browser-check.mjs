// Opens every chapter of the built book in headless Chromium (Debian's /usr/bin/chromium,
// driven by playwright-core) and fails on: a failed request (image, stylesheet, font,
// script), an <img> that did not decode (naturalWidth 0), a JavaScript error or
// console error, math that KaTeX did not render, or a figure whose smallest text, as
// drawn at the book's width, is under MIN_TEXT_PX CSS pixels. Keeps full-page
// screenshots of the stage chapters and the Results chapter for a person to look at.
//
// Usage: node browser-check.mjs BOOK_HTML_DIR SCREENSHOT_DIR
import { createServer } from "node:http";
import { readFileSync, existsSync, mkdirSync, statSync } from "node:fs";
import { join, extname, resolve, normalize } from "node:path";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const [root, shots] = process.argv.slice(2).map((p) => resolve(p));
if (!root || !shots) {
  console.error("usage: node browser-check.mjs BOOK_HTML_DIR SCREENSHOT_DIR");
  process.exit(2);
}
const chromium = process.env.CHROMIUM || "/usr/bin/chromium";
if (!existsSync(chromium)) {
  const how = "`sudo apt-get install chromium` (Debian) or set CHROMIUM=/path/to/chromium";
  // CI must run the check; elsewhere a missing browser skips it, loudly, and never
  // reads as a pass.
  if (process.env.CI) {
    console.error(`browser check: FAILED: no Chromium at ${chromium}, and CI must run this check; ${how}`);
    process.exit(1);
  }
  console.error(`\n*** browser check SKIPPED: no Chromium at ${chromium}. The book was not opened in a browser; to check it, ${how}, then \`just book-browser\`. ***\n`);
  process.exit(0);
}
if (!existsSync(join(root, "index.html"))) {
  console.error(`browser check: ${root}/index.html is missing; run \`just book\` first`);
  process.exit(1);
}
const { chromium: pw } = require("playwright-core");

// The smallest text a figure may show, in CSS pixels, as the page draws it: an SVG drawn
// 2000 px wide and shrunk into the text column shows its 10 px labels at 4.
const MIN_TEXT_PX = 10;

// The chapters, in reading order, from the built table of contents (toc.html in mdbook
// 0.4.41+, else the sidebar of print.html's neighbours: index.html has it too).
function chapters() {
  const toc = existsSync(join(root, "toc.html")) ? "toc.html" : "index.html";
  const html = readFileSync(join(root, toc), "utf8");
  const links = [...html.matchAll(/href="([^"#]+\.html)"/g)].map((m) => m[1]);
  return [...new Set(["index.html", ...links])].filter((l) => !/^(https?:)?\/\//.test(l) && l !== "toc.html" && l !== "print.html");
}

const TYPES = { ".html": "text/html", ".css": "text/css", ".js": "text/javascript", ".svg": "image/svg+xml", ".png": "image/png", ".woff2": "font/woff2", ".woff": "font/woff", ".ttf": "font/ttf", ".json": "application/json", ".ico": "image/x-icon" };
const server = createServer((req, res) => {
  const path = normalize(decodeURIComponent(new URL(req.url, "http://x").pathname)).replace(/^(\.\.[/\\])+/, "");
  let file = join(root, path);
  if (existsSync(file) && statSync(file).isDirectory()) file = join(file, "index.html");
  if (!file.startsWith(root) || !existsSync(file)) {
    res.writeHead(404).end("not found");
    return;
  }
  res.writeHead(200, { "content-type": TYPES[extname(file)] || "application/octet-stream" }).end(readFileSync(file));
});
await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
const base = `http://127.0.0.1:${server.address().port}/`;

const userDataDir = `/tmp/flashlab-book-chromium-${process.pid}`;
const context = await pw.launchPersistentContext(userDataDir, {
  executablePath: chromium,
  headless: true,
  // The book's default look: a 1280 x 900 window leaves mdBook's content column (its
  // max-width, 750 px less padding) beside the sidebar; the readability check measures
  // figures at that width.
  viewport: { width: 1280, height: 900 },
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
mkdirSync(shots, { recursive: true });

const problems = [];
const pages = chapters();
for (const rel of pages) {
  const page = await context.newPage();
  const fail = (what) => problems.push(`${rel}: ${what}`);
  page.on("pageerror", (e) => fail(`script error: ${e.message}`));
  page.on("console", (m) => m.type() === "error" && fail(`console error: ${m.text()}`));
  page.on("requestfailed", (r) => fail(`request failed: ${r.url()} (${r.failure()?.errorText})`));
  page.on("response", (r) => r.status() >= 400 && fail(`HTTP ${r.status()}: ${r.url()}`));
  await page.goto(base + rel, { waitUntil: "load" });
  await page.evaluate(() => document.fonts.ready);
  const report = await page.evaluate(() => {
    const main = document.querySelector("main") || document.body;
    return {
      images: [...document.images].map((i) => ({ src: i.getAttribute("src"), ok: i.complete && i.naturalWidth > 0 })),
      // Math that reached the page unrendered: a $ outside code, or a KaTeX error box.
      rawMath: [...main.querySelectorAll("p, li, td")].filter((e) => !e.closest("pre, code") && /\$[^$\s][^$]*\$/.test(e.textContent)).map((e) => e.textContent.slice(0, 80)),
      katexErrors: main.querySelectorAll(".katex-error").length,
      title: document.title,
    };
  });
  for (const img of report.images) if (!img.ok) fail(`image did not load: ${img.src}`);
  const text = await page.evaluate(smallestFigureText);
  for (const f of text.figures) {
    if (f.px < MIN_TEXT_PX) fail(`figure ${f.src}: its smallest text ("${f.text}", ${f.font} px in the SVG) is drawn at ${f.px.toFixed(1)} CSS px, under ${MIN_TEXT_PX}; draw it for the column or put it in a scroll-figure frame at full size`);
  }
  for (const src of text.unmeasured) fail(`figure ${src}: not an SVG the readability check can measure`);
  const smallest = text.figures.reduce((a, f) => (!a || f.px < a.px ? f : a), null);
  for (const text of report.rawMath) fail(`unrendered math: "${text}"`);
  if (report.katexErrors) fail(`${report.katexErrors} KaTeX error(s)`);
  if (rel.startsWith("stages/") || rel === "results.html") {
    const png = join(shots, rel.replace(/^stages\//, "").replace(/\.html$/, ".png"));
    await page.screenshot({ path: png, fullPage: true });
    console.log(`screenshot ${png}`);
  }
  const least = smallest ? `, smallest figure text ${smallest.px.toFixed(1)} px in ${smallest.src}` : "";
  console.log(`${problems.some((p) => p.startsWith(rel + ":")) ? "FAIL" : "ok  "} ${rel} (${report.images.length} images${least})`);
  await page.close();
}
await context.close();
server.close();

if (problems.length) {
  console.error(`\n${problems.length} problem(s):\n  ${problems.join("\n  ")}`);
  process.exit(1);
}
console.log(`browser check: ${pages.length} pages, no broken image, no script error, no figure text under ${MIN_TEXT_PX} CSS px`);

// Runs in the page: for every SVG figure of the chapter, the smallest text as the page
// draws it. The SVG is fetched and put inline, off screen, at the size the <img> draws
// its content box, so the browser resolves what the generators write (font-size on a
// <text> or inherited from a <g>, a <style>) and every transform (the viewBox's scale,
// plotters' rotated axis titles): a text's size on screen is its computed font-size
// times the scale of its screen matrix.
async function smallestFigureText() {
  const figures = [];
  const unmeasured = [];
  const main = document.querySelector("main") || document.body;
  for (const img of main.querySelectorAll("img")) {
    const src = img.getAttribute("src");
    if (!/\.svg(\?|#|$)/.test(src)) {
      unmeasured.push(src);
      continue;
    }
    const css = getComputedStyle(img);
    const w = img.clientWidth - parseFloat(css.paddingLeft) - parseFloat(css.paddingRight);
    const h = img.clientHeight - parseFloat(css.paddingTop) - parseFloat(css.paddingBottom);
    const svg = new DOMParser().parseFromString(await (await fetch(img.src)).text(), "image/svg+xml").documentElement;
    const holder = document.createElement("div");
    holder.style.cssText = "position:absolute; left:-20000px; top:0; visibility:hidden";
    svg.setAttribute("width", w);
    svg.setAttribute("height", h);
    holder.appendChild(document.importNode(svg, true));
    document.body.appendChild(holder);
    let least = null;
    for (const t of holder.querySelectorAll("text, tspan")) {
      if (!t.textContent.trim() || (t.tagName === "text" && t.querySelector("tspan"))) continue;
      const m = t.getScreenCTM();
      const font = parseFloat(getComputedStyle(t).fontSize);
      const px = font * Math.sqrt(Math.abs(m.a * m.d - m.b * m.c));
      if (!least || px < least.px) least = { src, px, font, text: t.textContent.trim().slice(0, 40) };
    }
    holder.remove();
    if (least) figures.push(least);
  }
  return { figures, unmeasured };
}
