// mdBook preprocessor: renders $…$ (inline) and $$…$$ (display) with KaTeX at build time,
// so the book shows math with no script and no network. Code blocks and code spans are
// left alone; `\$` is a literal dollar. A TeX error fails the build and names the chapter.
//
// Protocol: `node katex.mjs supports <renderer>` answers by exit status; otherwise
// [context, book] arrives as JSON on stdin and the book goes back on stdout.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";

const require = createRequire(import.meta.url);
let katex;
try {
  katex = require("katex");
} catch {
  console.error("katex.mjs: KaTeX is not installed; run `just book-tools`");
  process.exit(1);
}

if (process.argv[2] === "supports") process.exit(process.argv[3] === "html" ? 0 : 1);

// Characters Markdown would interpret inside inline math's HTML text; entities are inert.
const ENTITIES = { "*": "&#42;", _: "&#95;", "\\": "&#92;", "`": "&#96;", "[": "&#91;", "]": "&#93;", $: "&#36;", "~": "&#126;", "|": "&#124;" };
const inert = (html) => html.replace(/>([^<]+)</g, (_, text) => ">" + text.replace(/[*_\\`[\]$~|]/g, (c) => ENTITIES[c]) + "<");

function render(tex, displayMode, where) {
  try {
    return inert(katex.renderToString(tex, { displayMode, throwOnError: true, strict: "error", output: "htmlAndMathml" }));
  } catch (e) {
    throw new Error(`${where}: KaTeX cannot render ${displayMode ? "$$" : "$"}${tex}${displayMode ? "$$" : "$"}: ${e.message}`);
  }
}

// Math in prose (no code fences inside `text`).
function prose(text, where) {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === "\\" && text[i + 1] === "$") {
      out += "\\$";
      i += 2;
    } else if (c === "`") {
      // A code span: copy through the closing run of the same length.
      let run = 0;
      while (text[i + run] === "`") run++;
      const fence = "`".repeat(run);
      const end = text.indexOf(fence, i + run);
      const stop = end < 0 ? i + run : end + run;
      out += text.slice(i, stop);
      i = stop;
    } else if (c === "$" && text[i + 1] === "$") {
      const end = text.indexOf("$$", i + 2);
      if (end < 0) throw new Error(`${where}: unclosed $$`);
      out += `<div class="math-display">${render(text.slice(i + 2, end).trim(), true, where)}</div>`;
      i = end + 2;
    } else if (c === "$" && text[i + 1] && !/\s/.test(text[i + 1])) {
      // Inline: closes at the next `$` that follows a non-space and is not `\$`.
      let j = i + 1;
      while (j < text.length && !(text[j] === "$" && text[j - 1] !== "\\" && !/\s/.test(text[j - 1]))) {
        if (text[j] === "\n" && text[j + 1] === "\n") break; // never across a paragraph
        j++;
      }
      if (j >= text.length || text[j] !== "$") throw new Error(`${where}: unclosed $ near "${text.slice(i, i + 40)}"`);
      out += render(text.slice(i + 1, j), false, where);
      i = j + 1;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

// Splits a chapter into fenced code blocks (kept) and prose (rendered).
export function renderChapter(content, where) {
  const lines = content.split("\n");
  const out = [];
  let buffer = [];
  let fence = null;
  const flush = () => {
    if (buffer.length) out.push(prose(buffer.join("\n"), where));
    buffer = [];
  };
  for (const line of lines) {
    const m = line.match(/^\s*(`{3,}|~{3,})/);
    if (fence) {
      out.push(line);
      if (m && m[1][0] === fence[0] && m[1].length >= fence.length && line.trim() === m[1]) fence = null;
    } else if (m) {
      flush();
      fence = m[1];
      out.push(line);
    } else {
      buffer.push(line);
    }
  }
  flush();
  return out.join("\n");
}

function walk(items) {
  for (const item of items) {
    const chapter = item && item.Chapter;
    if (!chapter) continue;
    chapter.content = renderChapter(chapter.content, chapter.source_path || chapter.name);
    walk(chapter.sub_items || []);
  }
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split("/").pop())) {
  const [, book] = JSON.parse(readFileSync(0, "utf8"));
  try {
    walk(book.sections || book.items || []);
  } catch (e) {
    console.error(e.message);
    process.exit(1);
  }
  process.stdout.write(JSON.stringify(book));
}
