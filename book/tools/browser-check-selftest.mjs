// The browser check, checked: a page with one of each problem it must catch, which it must
// fail on, each named. A check that passes a broken book is worse than none, and the book
// itself, once fixed, no longer shows whether the check still sees anything.
//
// Usage: node browser-check-selftest.mjs
import { mkdtempSync, writeFileSync, rmSync, existsSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const chromium = process.env.CHROMIUM || "/usr/bin/chromium";
if (!existsSync(chromium)) {
  // browser-check.mjs says, loudly, that it skipped; so does this.
  console.error(`browser check self-test SKIPPED: no Chromium at ${chromium}`);
  process.exit(process.env.CI ? 1 : 0);
}
const here = dirname(fileURLToPath(import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "flashlab-browser-selftest-"));
const long = "x".repeat(140);
// A figure drawn 2000 px wide with 10 px text, shown in a 750 px column: 3.4 px text. Its
// rect carries hover text.
writeFileSync(join(dir, "wide.svg"), `<svg xmlns="http://www.w3.org/2000/svg" width="2000" height="100" viewBox="0 0 2000 100"><text x="10" y="50" font-size="10">tiny</text><rect x="100" y="0" width="50" height="50"><title>a bar</title></rect></svg>`);
writeFileSync(
  join(dir, "index.html"),
  `<!DOCTYPE html><html><head><title>self-test</title><style>main { max-width: 750px; margin: auto } pre > code { display: block; overflow-x: auto }</style></head><body><main>
<h1>Every problem once</h1>
<p><img src="missing.svg" alt="an image that is not there"></p>
<script>throw new Error("a script error");</script>
<figure><img src="wide.svg" style="max-width: 100%" alt="small text"><figcaption>Hover over a bar for its numbers.</figcaption></figure>
<pre><code>${long}</code></pre>
<div style="width: 2000px">a block wider than the column</div>
<pre><code>## a heading inside a code block</code></pre>
<p><a href="index.html#nowhere">a dead fragment</a></p>
</main></body></html>`,
);
const run = spawnSync(process.execPath, [join(here, "browser-check.mjs"), dir, join(dir, "shots")], { encoding: "utf8" });
rmSync(dir, { recursive: true, force: true });
const said = run.stdout + run.stderr;
const expected = [
  ["an image that did not load", /image did not load: missing\.svg/],
  ["a script error", /script error: a script error/],
  ["figure text under 10 px", /figure wide\.svg: its smallest text \("tiny", 10 px in the SVG\) is drawn at 3\.\d CSS px/],
  ["hover promised over an <img>", /its caption says to hover, but it is drawn as an <img>/],
  ["a code block wider than the column", /code under "Every problem once" is \d+ px wide, the column 750 px \(its longest line is 140 characters/],
  ["an element wider than the column", /div under "Every problem once" is 2000 px wide, the column 750 px/],
  ["raw markdown in a code block", /raw markdown \(a heading inside a code block\)/],
  ["a dead #fragment", /index\.html#nowhere, and index\.html has no element with id "nowhere"/],
];
const missed = expected.filter(([, re]) => !re.test(said)).map(([what]) => what);
if (run.status !== 1 || missed.length) {
  console.error(said);
  console.error(`browser check self-test: FAILED: ${run.status !== 1 ? `the check exited ${run.status}, not 1; ` : ""}${missed.length ? `it missed: ${missed.join(", ")}` : ""}`);
  process.exit(1);
}
console.log(`browser check self-test: a page with ${expected.length} problems fails on each (${expected.map(([what]) => what).join(", ")})`);
