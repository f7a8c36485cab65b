#!/usr/bin/env python3
"""Import cycles between the modules of each crate of the workspace.

Reads every crate's `src/` (lib.rs or main.rs and the files under it), finds the paths
each module names (`use crate::…`, `super::…`, `self::…`, a child module's name, and
`crate::a::b` written inline), resolves each to the module that defines the item
(following `pub use` re-exports and `#[macro_export]` macros), and prints the strongly
connected components of more than one module: each is an import cycle. A module naming
its own child (`pub use child::X`) is an edge like any other; declaring it (`mod child;`)
is ownership, not an import, and is not.

Test code (`#[cfg(test)] mod … { … }`) is left out, as `cargo modules` leaves it out
without `--cfg-test`; `--tests` takes it in. Doc comments and comments are not read.

    python3 scripts/module-cycles.py [--tests] [--edges] [CRATE_DIR …]

Exit status 1 when a cycle is found.
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKIP = {"std", "core", "alloc"}


def strip(text):
    """The source without comments, string and char literals (same length, same lines)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            hashes = re.match(r"r(#*)\"", text[i:]).group(1)
            end = text.find('"' + hashes, i + 2 + len(hashes))
            j = n if end < 0 else end + 1 + len(hashes)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(re.sub(r"[^\n]", " ", text[i : j + 1]))
            i = j + 1
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:]):
            m = re.match(r"'(\\.[^']*|[^\\'])'", text[i:])
            out.append(" " * len(m.group(0)))
            i += len(m.group(0))
        else:
            out.append(c)
            i += 1
    return "".join(out)


def block_end(code, open_brace):
    depth = 0
    for j in range(open_brace, len(code)):
        if code[j] == "{":
            depth += 1
        elif code[j] == "}":
            depth -= 1
            if depth == 0:
                return j + 1
    return len(code)


class Crate:
    def __init__(self, src, tests):
        self.src = src
        self.tests = tests
        root = src / "lib.rs"
        if not root.exists():
            root = src / "main.rs"
        self.code = {}  # module path (tuple) -> stripped code of its file (test code blanked)
        self.children = {}  # module -> set of child names
        self.load((), root)
        self.reexports = {}  # (module, name) -> module the item comes from
        self.globs = {}  # module -> modules glob-re-exported
        self.macros = {}  # macro name -> module
        for mod, code in self.code.items():
            for m in re.finditer(r"#\s*\[\s*macro_export\s*\]\s*macro_rules!\s*(\w+)", code):
                self.macros[m.group(1)] = mod
        for mod, code in self.code.items():
            for m in re.finditer(r"\bpub(\s*\([^)]*\))?\s+use\s+([^;]+);", code):
                for path, name in self.use_tree(m.group(2)):
                    target = self.resolve(mod, path, follow=False)
                    if target is None:
                        # Another crate's item, re-exported: no edge inside this crate.
                        if name != "*":
                            self.reexports[(mod, name)] = None
                        continue
                    tmod, rest = target
                    if name == "*":
                        self.globs.setdefault(mod, set()).add(tmod if not rest else tmod + tuple(rest))
                    elif rest:
                        self.reexports[(mod, name)] = (tmod, rest[-1])
                    else:
                        self.reexports[(mod, name)] = (tmod, None)

    def load(self, mod, path):
        text = path.read_text()
        code = strip(text)
        # Test modules: blanked unless --tests.
        if not self.tests:
            for m in reversed(list(re.finditer(r"#\s*\[\s*cfg\s*\(\s*test\s*\)\s*\]\s*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{", code))):
                end = block_end(code, m.end() - 1)
                code = code[: m.start()] + re.sub(r"[^\n]", " ", code[m.start() : end]) + code[end:]
            # A `#[cfg(test)] mod x;` file is test code too.
            test_files = set(re.findall(r"#\s*\[\s*cfg\s*\(\s*test\s*\)\s*\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", code))
        else:
            test_files = set()
        self.code[mod] = code
        self.children[mod] = set()
        base = path.parent if path.name in ("lib.rs", "main.rs", "mod.rs") else path.with_suffix("")
        for m in re.finditer(r"(?:#\s*\[([^\]]*)\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", code):
            name = m.group(2)
            if name in test_files:
                continue
            attr = re.search(r'#\s*\[\s*path\s*=\s*"([^"]+)"', text[m.start() : m.end()])
            candidates = [base / attr.group(1)] if attr else [base / f"{name}.rs", base / name / "mod.rs"]
            for c in candidates:
                if c.exists():
                    self.children[mod].add(name)
                    self.load(mod + (name,), c)
                    break
        # Inline modules (not test ones): named as children, their code is their parent's.
        for m in re.finditer(r"\bmod\s+(\w+)\s*\{", code):
            self.children[mod].add(m.group(1))

    @staticmethod
    def use_tree(tree):
        """(path, name) pairs of a use tree: `a::{b, c::d as e, f::*, self}`."""
        tokens = re.findall(r"::|\{|\}|,|\*|\w+", tree)
        out = []

        def walk(i, pre):
            # One tree at tokens[i:]; returns the index after it.
            path = list(pre)
            while i < len(tokens):
                t = tokens[i]
                if t == "{":
                    i += 1
                    while tokens[i] != "}":
                        i = walk(i, path)
                        if tokens[i] == ",":
                            i += 1
                    return i + 1
                if t == "*":
                    out.append((tuple(path), "*"))
                    return i + 1
                if t == "::":
                    i += 1
                    continue
                if t in (",", "}"):
                    break
                if t == "as":
                    i += 2
                    continue
                path.append(t)
                i += 1
            if path and path[-1] == "self":
                path.pop()
            if path:
                out.append((tuple(path), path[-1]))
            return i

        walk(0, ())
        return out

    def resolve(self, mod, path, follow=True, inline=0):
        """The module an absolute or relative path leads into: (module, rest of the path).
        `inline`: how many inline modules deep inside `mod`'s file the path is written."""
        path = list(path)
        if not path:
            return None
        while inline and path[0] == "super":
            # `super` of an inline module: still the file's module (its items count as the
            # file's).
            inline, path = inline - 1, ["self"] + path[1:] if len(path) > 1 and path[1] != "super" else path[1:]
            if not path:
                return None
        head = path[0]
        if head == "crate":
            cur, path = (), path[1:]
        elif head == "super":
            cur = mod
            while path and path[0] == "super":
                cur, path = cur[:-1], path[1:]
        elif head == "self":
            cur, path = mod, path[1:]
        elif head in self.children.get(mod, ()):
            cur = mod
        elif head in self.children.get((), ()) and mod == ():
            cur = ()
        else:
            return None
        while path and path[0] in self.children.get(cur, ()) and cur + (path[0],) in self.code:
            cur, path = cur + (path[0],), path[1:]
        if path and path[0] in self.children.get(cur, ()):
            # An inline module: its items count as its file's.
            path = path[1:]
        if follow and path:
            seen = set()
            while (cur, path[0]) in self.reexports and (cur, path[0]) not in seen:
                seen.add((cur, path[0]))
                if self.reexports[(cur, path[0])] is None:
                    return None
                src, name = self.reexports[(cur, path[0])]
                if name is None:
                    cur, path = src, path[1:]
                    break
                cur, path = src, [name] + path[1:]
            if path and cur == () and path[0] in self.macros:
                cur = self.macros[path[0]]
        return cur, path

    def edges(self):
        out = {m: set() for m in self.code}
        for mod, code in self.code.items():
            spans = [(m.end() - 1, block_end(code, m.end() - 1)) for m in re.finditer(r"\bmod\s+\w+\s*\{", code)]

            def depth(pos):
                return sum(1 for a, b in spans if a <= pos < b)

            paths = []
            for m in re.finditer(r"\buse\s+([^;]+);", code):
                paths += [(p, depth(m.start())) for p, _ in self.use_tree(m.group(1)) if p]
            # Inline paths: crate::a::b, super::x, self::x, child::x.
            for m in re.finditer(r"(?<![\w:$])((?:crate|super|self|\w+)(?:::\w+)+)", code):
                p = m.group(1).split("::")
                if p[0] in ("crate", "super", "self") or p[0] in self.children[mod]:
                    paths.append((tuple(p), depth(m.start())))
            for p, d in paths:
                r = self.resolve(mod, p, inline=d)
                if r is None:
                    continue
                target, _ = r
                if target != mod:
                    out[mod].add(target)
        return out


def sccs(graph):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(comp)

    sys.setrecursionlimit(10000)
    for v in list(graph):
        if v not in index:
            visit(v)
    return out


def name(mod):
    return "::".join(("crate",) + mod)


def crate_dirs():
    dirs = [ROOT]
    for p in sorted(ROOT.glob("*/Cargo.toml")) + sorted(ROOT.glob("stages/*/Cargo.toml")):
        dirs.append(p.parent)
    return [d for d in dirs if (d / "src").is_dir()]


def main(argv):
    tests = "--tests" in argv
    show_edges = "--edges" in argv
    dirs = [Path(a).resolve() for a in argv if not a.startswith("--")] or crate_dirs()
    found = 0
    for d in dirs:
        crate = Crate(d / "src", tests)
        graph = crate.edges()
        rel = d.relative_to(ROOT) if d != ROOT else Path(".")
        cycles = [sorted(c) for c in sccs(graph) if len(c) > 1]
        n_edges = sum(len(v) for v in graph.values())
        print(f"{rel}: {len(graph)} modules, {n_edges} edges, {len(cycles)} cycle(s)")
        if show_edges:
            for m in sorted(graph):
                for t in sorted(graph[m]):
                    print(f"    {name(m)} -> {name(t)}")
        for c in cycles:
            found += 1
            members = set(map(tuple, c))
            print("  cycle: " + ", ".join(name(m) for m in c))
            for m in c:
                for t in sorted(graph[tuple(m)]):
                    if t in members:
                        print(f"    {name(tuple(m))} -> {name(t)}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
