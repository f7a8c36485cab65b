// Opens every chapter of the built book in headless Chromium (Debian's /usr/bin/chromium,
// driven by playwright-core) and fails on: a failed request (image, stylesheet, font,
// script), an <img> that did not decode (naturalWidth 0), a JavaScript error or
// console error, math that KaTeX did not render, a figure whose smallest text, as
// drawn at the book's width, is under MIN_TEXT_PX CSS pixels, a figure whose caption says
// to hover where hovering shows nothing (an <img>), an element wider than the
// content column (a code excerpt, table or formula that scrolls sideways, or anything
// that pokes out of the column), markdown that reached the
// page as text (a `## ` or `- **` line or a `<figure>` tag inside a code block: a code
// fence that closed early or never; a pipe table left in a paragraph), or a link to a
// page of the book whose #fragment names no element there. Keeps full-page screenshots
// of the stage chapters and the Results chapter for a person to look at.
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
// Every page's element ids, and every link with a #fragment to a page of the book, to
// check once all pages are open (a link may point forward).
const idsOf = new Map();
const fragmentLinks = [];
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
      ids: [...document.querySelectorAll("[id]")].map((e) => e.id),
    };
  });
  idsOf.set(rel, new Set(report.ids));
  const { raw, links } = await page.evaluate(textAndLinks);
  for (const r of raw) fail(`raw markdown ${r.what} under "${r.heading}": "${r.text}"`);
  for (const link of links) {
    const url = new URL(link.href);
    if (url.origin !== new URL(base).origin) continue;
    let target = decodeURIComponent(url.pathname).replace(/^\//, "");
    if (target === "" || target.endsWith("/")) target += "index.html";
    if (!target.endsWith(".html")) continue;
    // `#key=value&…` is a page's state (the playground's view), not an element's id.
    if (url.hash.includes("=")) continue;
    fragmentLinks.push({ from: rel, target, fragment: decodeURIComponent(url.hash.slice(1)), text: link.text, heading: link.heading });
  }
  for (const img of report.images) if (!img.ok) fail(`image did not load: ${img.src}`);
  const text = await page.evaluate(smallestFigureText);
  for (const f of text.figures) {
    if (f.px < MIN_TEXT_PX) fail(`figure ${f.src}: its smallest text ("${f.text}", ${f.font} px in the SVG) is drawn at ${f.px.toFixed(1)} CSS px, under ${MIN_TEXT_PX}; draw it for the column or put it in a scroll-figure frame at full size`);
  }
  for (const src of text.unmeasured) fail(`figure ${src}: not an SVG the readability check can measure`);
  for (const h of await page.evaluate(hoverPromises)) fail(`figure "${h.caption}": its caption says to hover, but ${h.why}`);
  for (const o of await page.evaluate(overflows)) {
    fail(`${o.what} under "${o.heading}" is ${o.width} px wide, the column ${o.column} px${o.detail ? ` (${o.detail})` : ""}: "${o.text}"`);
  }
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
// Pages that links name but the table of contents does not (print.html, say): their ids.
for (const target of new Set(fragmentLinks.map((l) => l.target))) {
  if (idsOf.has(target)) continue;
  if (!existsSync(join(root, target))) {
    idsOf.set(target, null);
    continue;
  }
  const page = await context.newPage();
  await page.goto(base + target, { waitUntil: "load" });
  idsOf.set(target, new Set(await page.evaluate(() => [...document.querySelectorAll("[id]")].map((e) => e.id))));
  await page.close();
}
for (const link of fragmentLinks) {
  const ids = idsOf.get(link.target);
  const where = `link "${link.text}" under "${link.heading}"`;
  if (ids === null) problems.push(`${link.from}: ${where} points to ${link.target}, which the book does not have`);
  else if (!ids.has(link.fragment)) problems.push(`${link.from}: ${where} points to ${link.target}#${link.fragment}, and ${link.target} has no element with id "${link.fragment}"`);
}
console.log(`${fragmentLinks.length} links with a #fragment to the book's pages checked`);

await context.close();
server.close();

if (problems.length) {
  console.error(`\n${problems.length} problem(s):\n  ${problems.join("\n  ")}`);
  process.exit(1);
}
console.log(`browser check: ${pages.length} pages, no broken image, no script error, no figure text under ${MIN_TEXT_PX} CSS px, nothing wider than the column, no raw markdown, no dead #fragment`);

// Runs in the page: every figure whose caption asks the reader to hover, and why hovering
// it would show nothing: the drawing is an <img> (a browser shows no hover text of an SVG
// drawn that way; tools/embed-svg.mjs puts such figures inline), it has no hover text
// (<title> inside the drawing), or what carries the text is covered where it is drawn.
function hoverPromises() {
  const main = document.querySelector("main") || document.body;
  const found = [];
  for (const figure of main.querySelectorAll("figure")) {
    const caption = figure.querySelector("figcaption")?.textContent ?? "";
    if (!/\bhover/i.test(caption)) continue;
    const short = caption.trim().slice(0, 60);
    const svg = figure.querySelector("svg");
    if (!svg) {
      found.push({ caption: short, why: figure.querySelector("img") ? "it is drawn as an <img>, which shows no hover text" : "it has no drawing" });
      continue;
    }
    const titled = [...svg.querySelectorAll("title")].map((t) => t.parentElement).filter((e) => e !== svg);
    if (!titled.length) {
      found.push({ caption: short, why: "its drawing has no hover text (<title>)" });
      continue;
    }
    const area = (e) => { const r = e.getBoundingClientRect(); return r.width * r.height; };
    const target = titled.reduce((a, e) => (area(e) > area(a) ? e : a));
    target.scrollIntoView({ block: "center" });
    const r = target.getBoundingClientRect();
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    if (!hit || !(hit === target || target.contains(hit))) found.push({ caption: short, why: `what carries "${target.querySelector("title").textContent.slice(0, 40)}" is covered by ${hit ? hit.tagName : "nothing"}` });
  }
  return found;
}

// Runs in the page: what is wider than the content column (main's content box) at the
// default window size, outermost first (what sits inside it is not named again).
// - A block that scrolls sideways (a code excerpt, mdBook's table wrapper, displayed
//   math): its content is wider than the frame, so a reader must scroll to read it. Code
//   should be dedented and wrapped to the column (about 90 characters), a table should
//   hold plain text where math would not wrap, a formula be split.
// - Any other element whose box reaches past the column's edges: the page itself scrolls.
// Two frames are wider on purpose: a .scroll-figure shows a figure at full size so its text
// stays readable (the text check measures it as drawn), and .wide (the Results tables)
// spans the window beside the sidebar; what is inside a .wide must fit the .wide, and the
// .wide the window.
function overflows() {
  const main = document.querySelector("main") || document.body;
  const headings = [...main.querySelectorAll("h1, h2, h3, h4, h5, h6")];
  const headingOf = (node) => {
    let heading = null;
    for (const h of headings) {
      if (h.compareDocumentPosition(node) & Node.DOCUMENT_POSITION_FOLLOWING) heading = h;
      else break;
    }
    return heading ? heading.textContent.trim() : "(top of the page)";
  };
  const css = getComputedStyle(main);
  const box = main.getBoundingClientRect();
  const column = { left: box.left + parseFloat(css.paddingLeft), right: box.right - parseFloat(css.paddingRight) };
  const windowRight = document.documentElement.clientWidth;
  const name = (e) => e.tagName.toLowerCase() + (e.classList.length ? "." + [...e.classList].join(".") : "");
  const found = [];
  const visit = (e, bound) => {
    const style = getComputedStyle(e);
    if (style.display === "none") return;
    // KaTeX's MathML copy, for screen readers, is clipped to a pixel on purpose.
    if (e.classList.contains("katex-mathml")) return;
    const r = e.getBoundingClientRect();
    const sized = r.width > 0 && r.height > 0;
    let inner = bound;
    if (e.classList.contains("wide")) {
      if (sized && (r.left < 0 || r.right > windowRight + 1)) {
        found.push({ e, what: name(e), width: Math.round(r.width), column: Math.round(windowRight), detail: "wider than the window" });
        return;
      }
      inner = { left: r.left, right: r.right };
    } else if (sized && (r.left < bound.left - 1 || r.right > bound.right + 1)) {
      found.push({ e, what: name(e), width: Math.round(r.width), column: Math.round(bound.right - bound.left) });
      return;
    }
    if (e.classList.contains("scroll-figure")) return;
    const scrolls = /(auto|scroll|hidden|clip)/.test(style.overflowX);
    if (scrolls && e.scrollWidth > e.clientWidth + 1) {
      const pre = e.closest("pre") || e.querySelector("pre");
      let detail = `its content is ${e.scrollWidth} px, scrolled sideways`;
      if (pre) {
        const lines = pre.textContent.split("\n");
        const longest = lines.reduce((a, l) => (l.length > a.length ? l : a), "");
        detail = `its longest line is ${longest.length} characters, scrolled sideways: ${JSON.stringify(longest.trim().slice(0, 60))}`;
      }
      found.push({ e, what: name(e), width: e.scrollWidth, column: Math.round(bound.right - bound.left), detail });
      return;
    }
    // Inside a frame that clips, descendants are the frame's business, judged above.
    if (scrolls) return;
    for (const c of e.children) visit(c, inner);
  };
  for (const c of main.children) visit(c, column);
  return found.map(({ e, ...o }) => ({ ...o, heading: headingOf(e), text: e.textContent.replace(/\s+/g, " ").trim().slice(0, 60) }));
}

// Runs in the page: what the chapter's text says beyond its pixels, each with the
// heading it sits under.
// - raw: markdown that mdBook passed through as text. Inside a code block, a line that is
//   a heading (`## `), a bold list item (`- **`) or a <figure> tag means a fence closed
//   early or never, and the chapter after it renders as code; in a paragraph, lines
//   framed by `|` are a pipe table that did not parse (no blank line before it, no
//   separator row).
// - links: every link whose address has a #fragment, for the check that its target has
//   an element with that id.
function textAndLinks() {
  const main = document.querySelector("main") || document.body;
  const headings = [...main.querySelectorAll("h1, h2, h3, h4, h5, h6")];
  const headingOf = (node) => {
    let heading = null;
    for (const h of headings) {
      if (h.compareDocumentPosition(node) & Node.DOCUMENT_POSITION_FOLLOWING) heading = h;
      else break;
    }
    return heading ? heading.textContent.trim() : "(top of the page)";
  };
  const raw = [];
  const blocks = [...main.querySelectorAll("pre, code")].filter((e) => e.tagName === "PRE" || !e.closest("pre"));
  for (const block of blocks) {
    for (const line of block.textContent.split("\n")) {
      const what = /^\s*## /.test(line) ? "a heading" : /^\s*- \*\*/.test(line) ? "a bold list item" : /<figure\b/.test(line) ? "a <figure> tag" : null;
      if (what) raw.push({ what: `(${what} inside a code block)`, heading: headingOf(block), text: line.trim().slice(0, 80) });
    }
  }
  for (const p of main.querySelectorAll("p")) {
    if (p.closest("pre, code")) continue;
    const rows = p.textContent.split("\n").map((l) => l.trim()).filter((l) => l.length > 1 && l.startsWith("|") && l.endsWith("|"));
    if (rows.length) raw.push({ what: "(a pipe table left as text)", heading: headingOf(p), text: rows[0].slice(0, 80) });
  }
  const links = [...main.querySelectorAll("a[href*='#']")]
    .filter((a) => new URL(a.href).hash.length > 1)
    .map((a) => ({ href: a.href, text: a.textContent.trim().slice(0, 60), heading: headingOf(a) }));
  return { raw, links };
}

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
  // Figures put in the page inline (tools/embed-svg.mjs): measured as drawn.
  for (const svg of main.querySelectorAll("figure svg")) {
    let least = null;
    for (const t of svg.querySelectorAll("text, tspan")) {
      if (!t.textContent.trim() || (t.tagName === "text" && t.querySelector("tspan"))) continue;
      const m = t.getScreenCTM();
      const font = parseFloat(getComputedStyle(t).fontSize);
      const px = font * Math.sqrt(Math.abs(m.a * m.d - m.b * m.c));
      if (!least || px < least.px) least = { src: `inline SVG "${svg.getAttribute("aria-label") || svg.querySelector("title")?.textContent || "?"}"`.slice(0, 80), px, font, text: t.textContent.trim().slice(0, 40) };
    }
    if (least) figures.push(least);
  }
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
