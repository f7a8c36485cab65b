// mdBook preprocessor: a figure whose caption asks the reader to hover (the measured
// timelines, whose bars carry their numbers; stage 12's ring, whose arrows name their
// calls) gets its SVG put into the page inline. Those numbers are <title>s inside the
// drawing, and a browser shows no hover text of an SVG drawn through <img>: inline, the
// caption's promise holds. A chapter writes such a figure as any other,
// `<a href="X.svg"><img src="X.svg" alt="…"></a>`; the link goes with the <img>, since
// the drawing on the page is already the whole one. The browser check holds every
// caption that says "hover" to an inline SVG with hover text.
//
// Protocol: `node embed-svg.mjs supports <renderer>` answers by exit status; otherwise
// [context, book] arrives as JSON on stdin and the book goes back on stdout.
import { readFileSync, existsSync } from "node:fs";
import { dirname, join, normalize } from "node:path";

if (process.argv[2] === "supports") process.exit(process.argv[3] === "html" ? 0 : 1);

const FIGURE = /<figure\b[^>]*>[\s\S]*?<\/figure>/g;
const IMG = /(?:<a href="[^"]+">\s*)?<img src="([^"]+\.svg)"([^>]*)>(?:\s*<\/a>)?/g;
const PROMISES_HOVER = /<figcaption>[\s\S]*\bhover/i;
const escape = (s) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");

/** The SVG file as one HTML block: no XML prolog, no blank line (which would end the
 * block in Markdown), the alt text as its accessible name. */
export function inlineSvg(text, alt) {
  const svg = text.replace(/^\s*<\?xml[^>]*\?>\s*/, "").replace(/<!--[\s\S]*?-->/g, "");
  const lines = svg.split("\n").filter((l) => l.trim());
  lines[0] = lines[0].replace(/^<svg\b/, `<svg class="embedded-svg" role="img" aria-label="${escape(alt)}"`);
  return lines.join("\n");
}

export function embedChapter(content, sourcePath, srcDir) {
  return content.replace(FIGURE, (figure) => {
    if (!PROMISES_HOVER.test(figure)) return figure;
    return figure.replace(IMG, (whole, src, rest) => {
      const file = normalize(join(srcDir, dirname(sourcePath || "."), src));
      if (!existsSync(file)) throw new Error(`${sourcePath}: ${src} is missing (\`just book\` draws it)`);
      const alt = (rest.match(/\balt="([^"]*)"/) || [, ""])[1];
      return inlineSvg(readFileSync(file, "utf8"), alt.replace(/&quot;/g, '"').replace(/&amp;/g, "&"));
    });
  });
}

function walk(items, srcDir) {
  for (const item of items) {
    const chapter = item && item.Chapter;
    if (!chapter) continue;
    chapter.content = embedChapter(chapter.content, chapter.source_path || chapter.path, srcDir);
    walk(chapter.sub_items || [], srcDir);
  }
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split("/").pop())) {
  const [context, book] = JSON.parse(readFileSync(0, "utf8"));
  const srcDir = join(context.root || ".", context.config?.book?.src || "src");
  try {
    walk(book.sections || book.items || [], srcDir);
  } catch (e) {
    console.error(e.message);
    process.exit(1);
  }
  process.stdout.write(JSON.stringify(book));
}
