// mdBook preprocessor: fits every fenced code block to the text column, so a reader
// never scrolls sideways to read a line. It runs after `links`, on the excerpts
// `{{#include}}` pulls out of the kernels and crates as well as on code written in a
// chapter; the sources themselves keep their own line lengths.
//
// - Dedent: an excerpt cut from inside a function keeps its common indentation in the
//   source; here it goes.
// - Wrap: a line longer than MAX_COLUMNS is broken where its language allows. A comment
//   is reflowed into more comment lines; a comment after code continues under itself, or
//   moves above the code when it starts too far right; code breaks after a comma or
//   before an operator, outside strings, and goes on indented one step deeper (a
//   preprocessor line ends in `\`, a shell command in ` \`, so both stay valid); a diff
//   line keeps its +/- on each piece.
// A block whose language is not known here (plain text, tables of numbers drawn in
// characters) is left as it is: the browser check reports it if it does not fit.
//
// Protocol: `node fit-code.mjs supports <renderer>` answers by exit status; otherwise
// [context, book] arrives as JSON on stdin and the book goes back on stdout.
import { readFileSync } from "node:fs";

if (process.argv[2] === "supports") process.exit(process.argv[3] === "html" ? 0 : 1);

// The column holds 86 characters of mdBook's code font (Source Code Pro at 0.875em, about
// 8.4 px each) in its 750 px less the block's padding; the browser check measures it.
export const MAX_COLUMNS = 86;
const STEP = "    ";

const C_LIKE = { comment: /^(\/\/[/!]?|\/\*+|\*)(\s|$)/, lineComment: "//", cpp: true };
const LANGUAGES = {
  cuda: C_LIKE,
  c: C_LIKE,
  cpp: C_LIKE,
  "c++": C_LIKE,
  rust: { ...C_LIKE, cpp: false },
  sh: { comment: /^(#)(\s|$)/, lineComment: "#", shell: true },
  bash: { comment: /^(#)(\s|$)/, lineComment: "#", shell: true },
  shell: { comment: /^(#)(\s|$)/, lineComment: "#", shell: true },
  console: { comment: /^(#)(\s|$)/, lineComment: "#", shell: true, console: true },
  python: { comment: /^(#)(\s|$)/, lineComment: "#" },
  toml: { comment: /^(#)(\s|$)/, lineComment: "#" },
  diff: { diff: true },
};

function languageOf(info) {
  const word = info.trim().split(/[\s,{]/)[0].toLowerCase();
  return LANGUAGES[word] ? { name: word, ...LANGUAGES[word] } : null;
}

const indentOf = (line) => line.match(/^\s*/)[0];

/** Words of `text` in lines of at most `width` characters (a longer word stands alone). */
function reflow(text, width) {
  const out = [];
  let line = "";
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > width) {
      out.push(line);
      line = word;
    } else line = line ? line + " " + word : word;
  }
  if (line || !out.length) out.push(line);
  return out;
}

/** Where `code` has a comment after code (`x = 1;  // why`), outside string literals. */
function trailingComment(code, lang) {
  if (!lang.lineComment) return -1;
  let quote = null;
  for (let i = 0; i < code.length; i++) {
    const c = code[i];
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || (c === "'" && (lang.cpp || lang.shell))) quote = c;
    else if (code.startsWith(lang.lineComment, i) && i > 0 && /\s/.test(code[i - 1]) && code.slice(0, i).trim()) {
      if (lang.lineComment === "//" || /\s/.test(code[i + 1] ?? " ")) return i;
    }
  }
  return -1;
}

/** Places `code` may break: after `;`, `, ` or `(`, before ` && `, ` || `, ` ? `, ` : `,
 * a comparison, ` + `, ` << `, after ` = `, or at a space in a shell line; never inside a string. Each
 * says where the next piece starts (`at`), where this one ends (`cut`), and how good a
 * place it is (`weight`: a break between arguments of the outer call reads better than
 * one inside a nested expression, so each level of brackets costs). */
function breakPoints(code, lang) {
  const points = [];
  let quote = null;
  let depth = 0;
  let angles = 0;
  const add = (at, cut, base) => points.push({ at, cut, weight: base - 1.5 * (depth + angles) });
  for (let i = 0; i < code.length; i++) {
    const c = code[i];
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = null;
      continue;
    }
    if (c === '"' || (c === "'" && (lang.cpp || lang.shell))) {
      quote = c;
      continue;
    }
    if (lang.shell || lang.console) {
      if (c === " " && code[i + 1] !== " ") add(i + 1, i, code[i + 1] === "-" || code[i + 1] === "|" ? 2 : 1);
      continue;
    }
    if (c === "(" || c === "[" || c === "{") {
      depth++;
      if (code[i + 1] && !")]}".includes(code[i + 1])) add(i + 1, i + 1, 1);
    } else if (c === ")" || c === "]" || c === "}") depth = Math.max(0, depth - 1);
    // A template's brackets hug their words (`Tile<D, N>`); a comparison has spaces.
    else if (c === "<" && /\w/.test(code[i - 1] ?? "") && !" =<".includes(code[i + 1] ?? " ")) angles++;
    else if (c === ">" && angles > 0 && !" -=".includes(code[i - 1])) angles--;
    else if (c === ";" && code[i + 1] === " ") add(i + 2, i + 1, 5);
    else if (c === "," && code[i + 1] === " ") add(i + 2, i + 1, 3);
    else if (c === " ") {
      const op = code.slice(i + 1).match(/^(&&|\|\||\?|:|<=|>=|==|!=|<<|=>|\+)(?= )/);
      if (op) add(i + 1, i, op[1] === "+" || op[1] === "<<" ? 2 : 3);
      else if (code[i - 1] === "=" && code[i - 2] === " ") add(i + 1, i, 2);
    }
  }
  return points;
}

/** Places inside a double-quoted string of `code` (after a space, or in C before a
 * dot) where a string too long for the column may be split: C and CUDA close it and open another on the next line (adjacent
 * literals are one string), Rust ends the line in `\\`, which skips the next line's
 * indentation. */
function stringSpaces(code, lang) {
  if (!lang.cpp && lang.name !== "rust") return [];
  const spaces = [];
  let quote = null;
  for (let i = 0; i < code.length; i++) {
    const c = code[i];
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = null;
      else if (c === " " && quote === '"' && code[i + 1] !== " ") spaces.push({ at: i + 1, space: true });
      // A PTX instruction's name is one long word; C may split it between its parts.
      else if (c === "." && quote === '"' && lang.cpp && i > 0) spaces.push({ at: i, space: false });
    } else if (c === '"' || (c === "'" && lang.cpp)) quote = c;
  }
  return spaces;
}

/** One code line (no comment after it) in pieces of at most `width`, continued deeper. */
function wrapCode(line, lang, width, macro) {
  const indent = indentOf(line);
  const more = indent + STEP;
  const suffix = macro ? " \\" : lang.shell && !lang.console ? " \\" : lang.console && /^\s*\$ /.test(line) ? " \\" : "";
  const pieces = [];
  let rest = line;
  let first = true;
  while (rest.length > width) {
    const lead = first ? "" : more;
    const body = first ? rest : rest.trimStart();
    const limit = width - lead.length - suffix.length;
    // A piece says something: at least 8 characters past its indentation.
    const least = (first ? indent.length : 0) + 8;
    const points = breakPoints(body, lang).filter((p) => p.cut <= limit && p.cut > least);
    if (!points.length) {
      // Nothing to break between but a long string: split the string itself.
      const fits = stringSpaces(body, lang).filter((p) => p.at <= limit - 2 && p.at > least);
      const at = (fits.filter((p) => p.space).pop() ?? fits.pop())?.at;
      if (at === undefined) break;
      pieces.push(lead + body.slice(0, at) + (lang.cpp ? '"' : "\\") + suffix);
      rest = more + (lang.cpp ? '"' : "") + body.slice(at);
      first = false;
      continue;
    }
    // The best break near the end: the heaviest (a `;` before a `,` before a `(`, less
    // for each bracket it sits in) among those past half the room, else the heaviest.
    const late = points.filter((p) => p.cut > limit * 0.55);
    const pool = late.length ? late : points;
    const best = pool.reduce((a, p) => (p.weight > a.weight || (p.weight === a.weight && p.at > a.at) ? p : a));
    pieces.push(lead + body.slice(0, best.cut).trimEnd() + suffix);
    rest = body.slice(best.at);
    first = false;
    if (!rest.trim()) break;
    rest = more + rest.trimStart();
  }
  pieces.push(first ? rest : rest);
  return pieces;
}

/** `line`'s indentation and comment marker with its space (`    // `) when the whole
 * line is a comment, else null. */
function commentPrefix(line, lang) {
  if (!lang.comment) return null;
  const indent = indentOf(line);
  const trimmed = line.slice(indent.length);
  if (lang.cpp && /^#/.test(trimmed)) return null;
  const m = trimmed.match(lang.comment);
  return m && trimmed.startsWith(m[1] + " ") ? indent + m[1] + " " : null;
}

/** A line as lines of at most `width` characters, as far as its language allows. */
function fitLine(line, lang, width, macro) {
  if (line.length <= width) return [line];
  if (lang.diff) {
    const m = line.match(/^([+\- ])(.*)$/);
    if (!m || /^(\+\+\+|---) /.test(line)) return [line];
    const inner = languageOf("cuda");
    return fitLine(m[2], inner, width - 1, macro || /^\s*#\s*define\b/.test(m[2])).map((l) => m[1] + l);
  }
  const indent = indentOf(line);
  const trimmed = line.slice(indent.length);
  const comment = lang.comment && trimmed.match(lang.comment);
  if (comment && !(lang.cpp && /^#/.test(trimmed))) {
    const token = comment[1];
    const text = trimmed.slice(token.length).trim();
    const lead = indent + token + " ";
    return reflow(text, Math.max(width - lead.length, 20)).map((l) => (lead + l).trimEnd());
  }
  const at = trailingComment(line, lang);
  if (at > 0) {
    const code = line.slice(0, at).trimEnd();
    const text = line.slice(at + lang.lineComment.length).replace(/^[/!]?\s*/, "");
    const token = line.slice(at).match(/^(\/\/[/!]?|#)/)[1];
    const under = reflow(text, width - at - token.length - 1);
    if (at <= width - 30 && code.length <= width && under.length <= 2) {
      // The comment goes on under itself, at the column it starts in.
      const lines = under;
      return [code.padEnd(at) + token + " " + lines[0], ...lines.slice(1).map((l) => " ".repeat(at) + token + " " + l)];
    }
    // Too far right to continue there: the comment goes above the code it explains.
    const above = reflow(text, Math.max(width - indent.length - token.length - 1, 20)).map((l) => indent + token + " " + l);
    return [...above, ...fitLine(code, lang, width, macro)];
  }
  return wrapCode(line, lang, width, macro || (lang.cpp && /^#\s*define\b/.test(trimmed)));
}

/** The lines of one fenced block, dedented and fitted. */
export function fitBlock(lines, info, width = MAX_COLUMNS) {
  const lang = languageOf(info);
  if (!lang) return lines;
  let body = lines;
  if (!lang.diff) {
    const indents = body.filter((l) => l.trim()).map((l) => indentOf(l).replace(/\t/g, "    ").length);
    const common = indents.length ? Math.min(...indents) : 0;
    body = body.map((l) => l.replace(/\t/g, "    ").slice(Math.min(common, indentOf(l.replace(/\t/g, "    ")).length)));
  }
  const out = [];
  let macro = false;
  let previous = null;
  let wrapped = false;
  for (let i = 0; i < body.length; i++) {
    let line = body[i];
    // A continuation aligned under an opening bracket of the line before steps in one
    // level from that line instead, when it would not fit or that line was wrapped.
    if (previous !== null && (line.length > width || wrapped) && !lang.shell && !lang.diff) {
      const step = indentOf(previous).length + STEP.length;
      if (indentOf(line).length > step && !/[;{}]\s*$/.test(previous)) line = " ".repeat(step) + line.trimStart();
    }
    // A comment line too long, followed by more of the same sentence: its last words
    // go on at the start of the next line rather than on a line of their own.
    const next = body[i + 1];
    const prefix = commentPrefix(line, lang);
    if (line.length > width && prefix && next !== undefined && commentPrefix(next, lang) === prefix) {
      const nextText = next.slice(prefix.length);
      if (/^\S/.test(nextText) && !/^([-*+]|\d+[.)])\s/.test(nextText) && !/\S {2,}\S/.test(nextText)) {
        const [head, ...tail] = reflow(line.slice(prefix.length), width - prefix.length);
        line = prefix + head;
        body[i + 1] = prefix + tail.join(" ") + " " + nextText;
      }
    }
    // A line after one ending in `\` continues a macro (or a shell command) already.
    const lines = fitLine(line, lang, width, macro);
    out.push(...lines);
    wrapped = lines.length > 1 || line !== body[i];
    macro = lang.cpp && /\\\s*$/.test(line);
    if (line.trim()) previous = line;
  }
  return out;
}

/** A chapter with every fenced code block fitted; the prose is left alone. */
export function fitChapter(content) {
  const lines = content.split("\n");
  const out = [];
  let fence = null;
  let block = [];
  for (const line of lines) {
    const m = line.match(/^(\s*)(`{3,}|~{3,})(.*)$/);
    if (fence) {
      if (m && m[2][0] === fence.mark[0] && m[2].length >= fence.mark.length && !m[3].trim()) {
        // Lines of a fence indented in a list item carry the item's indentation.
        const strip = (l) => (l.startsWith(fence.indent) ? l.slice(fence.indent.length) : l.trimStart());
        out.push(...fitBlock(block.map(strip), fence.info).map((l) => (l ? fence.indent + l : l)));
        out.push(line);
        fence = null;
        block = [];
      } else block.push(line);
    } else if (m) {
      fence = { indent: m[1], mark: m[2], info: m[3] };
      out.push(line);
    } else out.push(line);
  }
  // An unclosed fence runs to the end of the chapter, as Markdown reads it.
  if (fence) out.push(...block);
  return out.join("\n");
}

function walk(items) {
  for (const item of items) {
    const chapter = item && item.Chapter;
    if (!chapter) continue;
    chapter.content = fitChapter(chapter.content);
    walk(chapter.sub_items || []);
  }
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split("/").pop())) {
  const [, book] = JSON.parse(readFileSync(0, "utf8"));
  walk(book.sections || book.items || []);
  process.stdout.write(JSON.stringify(book));
}
