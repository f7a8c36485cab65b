//! The book's checks that need no tools: they run with every `cargo test`.
//!
//! - every `{{#include path:anchor}}` names an existing file and an anchor it defines;
//! - every image a chapter shows exists: `generated/` ones are drawn by `layout-viz book`
//!   (its manifest) or by `book/tools/plot.mjs` (one chart per `book/results/*.json`);
//! - every stage in the table has its chapter, `stages/NN-<slug>.md`, listed in
//!   SUMMARY.md, and no chapter exists for a stage that is not in the table;
//! - every `just stage N` / `flashlab stage N` in the book names a real stage;
//! - every `Book: "…"` pointer in a stage's sources names a heading of the book;
//! - every test the book names (a table row starting with `` `some_test` ``) exists.
//!
//! `just book-check` adds what needs tools: `mdbook build` and headless Chromium.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn book_src() -> PathBuf {
    root().join("book/src")
}

/// Every chapter source under book/src (not the generated or vendored folders).
fn chapters() -> BTreeMap<PathBuf, String> {
    fn walk(dir: &Path, out: &mut BTreeMap<PathBuf, String>) {
        for entry in fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if path.is_dir() && name != "generated" && name != "vendor" {
                walk(&path, out);
            } else if name.ends_with(".md") {
                let text = fs::read_to_string(&path).unwrap();
                out.insert(path, text);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(&book_src(), &mut out);
    assert!(out.len() > 3, "book/src has no chapters");
    out
}

fn rel(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The `{{#include …}}` and `{{#rustdoc_include …}}` links of a chapter, unescaped ones only.
fn include_links(text: &str) -> Vec<String> {
    let mut links = Vec::new();
    for (i, _) in text.match_indices("{{#") {
        if i > 0 && text.as_bytes()[i - 1] == b'\\' {
            continue; // `\{{#include}}` is mdBook's escape: shown literally
        }
        let rest = &text[i + 3..];
        let Some(end) = rest.find("}}") else { continue };
        let body = rest[..end].trim();
        if let Some(arg) = body
            .strip_prefix("include ")
            .or_else(|| body.strip_prefix("rustdoc_include "))
        {
            links.push(arg.trim().to_string());
        }
    }
    links
}

#[test]
fn every_include_resolves_to_a_file_and_anchor() {
    let mut problems = Vec::new();
    let mut count = 0;
    for (chapter, text) in chapters() {
        for link in include_links(&text) {
            count += 1;
            let (path, selector) = match link.split_once(':') {
                Some((p, s)) => (p, Some(s)),
                None => (link.as_str(), None),
            };
            let file = chapter.parent().unwrap().join(path);
            let Ok(source) = fs::read_to_string(&file) else {
                problems.push(format!(
                    "{}: {{{{#include {link}}}}}: no file {}",
                    rel(&chapter),
                    rel(&file)
                ));
                continue;
            };
            let Some(anchor) = selector else { continue };
            if anchor.chars().next().is_some_and(|c| c.is_ascii_digit()) {
                problems.push(format!(
                    "{}: {{{{#include {link}}}}}: line numbers drift when the code changes; add `// ANCHOR: name` lines instead",
                    rel(&chapter)
                ));
                continue;
            }
            let marker = |kind: &str| {
                source.lines().any(|l| {
                    let l = l.trim();
                    l.strip_prefix("//")
                        .or_else(|| l.strip_prefix('#'))
                        .map(str::trim)
                        .and_then(|l| l.strip_prefix(kind))
                        .is_some_and(|name| name.trim() == anchor)
                })
            };
            if !marker("ANCHOR:") || !marker("ANCHOR_END:") {
                problems.push(format!(
                    "{}: {{{{#include {link}}}}}: {} has no `ANCHOR: {anchor}` … `ANCHOR_END: {anchor}` pair",
                    rel(&chapter),
                    rel(&file)
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "unresolved includes:\n  {}",
        problems.join("\n  ")
    );
    assert!(
        count > 10,
        "only {count} includes found: is the book's source there?"
    );
}

/// Image references: `<img src="…">` and `![alt](…)`.
fn images(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices("<img ") {
        let tag = &text[i..i + text[i..].find('>').unwrap_or(text.len() - i)];
        if let Some(s) = tag.split("src=\"").nth(1) {
            out.push(s.split('"').next().unwrap().to_string());
        }
    }
    for (i, _) in text.match_indices("![") {
        if let Some(close) = text[i..].find("](") {
            let rest = &text[i + close + 2..];
            if let Some(end) = rest.find(')') {
                out.push(
                    rest[..end]
                        .split_whitespace()
                        .next()
                        .unwrap_or("")
                        .to_string(),
                );
            }
        }
    }
    out
}

/// What `just book` writes into book/src/generated: layout-viz's figures and the charts.
fn generated_files() -> BTreeSet<String> {
    let mut files: BTreeSet<String> = layout_viz::book::manifest()
        .figures
        .into_iter()
        .map(|f| f.file)
        .collect();
    for entry in fs::read_dir(root().join("book/results")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().to_string();
        if let Some(stem) = name.strip_suffix(".json") {
            files.insert(format!("results-{stem}.svg"));
        }
    }
    files
}

#[test]
fn every_image_exists_after_layout_viz_book() {
    let generated = generated_files();
    let mut problems = Vec::new();
    let mut used = 0;
    for (chapter, text) in chapters() {
        let dir = chapter.parent().unwrap();
        for src in images(&text) {
            if src.starts_with("http://") || src.starts_with("https://") {
                problems.push(format!(
                    "{}: {src}: the book must not load anything from the network",
                    rel(&chapter)
                ));
                continue;
            }
            let resolved = normalize(&dir.join(&src));
            match resolved.strip_prefix(book_src().join("generated")) {
                Ok(name) => {
                    used += 1;
                    if !generated.contains(&name.display().to_string()) {
                        problems.push(format!(
                            "{}: {src}: `layout-viz book` does not draw it (its manifest has: {})",
                            rel(&chapter),
                            generated.iter().cloned().collect::<Vec<_>>().join(", ")
                        ));
                    }
                }
                Err(_) if !resolved.exists() => {
                    problems.push(format!("{}: {src}: no such file", rel(&chapter)))
                }
                Err(_) => {}
            }
        }
    }
    assert!(
        problems.is_empty(),
        "missing images:\n  {}",
        problems.join("\n  ")
    );
    assert!(used > 5, "only {used} generated diagrams are used");
}

/// `a/b/../c` → `a/c`, without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The chapter files SUMMARY.md links, relative to book/src.
fn summary_links() -> Vec<String> {
    let summary = fs::read_to_string(book_src().join("SUMMARY.md")).unwrap();
    summary
        .lines()
        .filter_map(|l| {
            let start = l.find("](")? + 2;
            let end = start + l[start..].find(')')?;
            Some(l[start..end].to_string())
        })
        .filter(|l| !l.is_empty())
        .collect()
}

fn stage_chapter(number: u32, slug: &str) -> String {
    format!("stages/{number:02}-{slug}.md")
}

#[test]
fn every_stage_has_a_chapter_and_every_chapter_a_stage() {
    let links = summary_links();
    let mut problems = Vec::new();
    let expected: BTreeSet<String> = flashlab::stages::STAGES
        .iter()
        .map(|s| stage_chapter(s.info().number, s.info().slug))
        .collect();
    for s in flashlab::stages::STAGES {
        let info = s.info();
        let chapter = stage_chapter(info.number, info.slug);
        if !book_src().join(&chapter).exists() {
            problems.push(format!(
                "stage {} ({}) has no chapter: write book/src/{chapter} (titled `# Stage {}: …`, shaped like the stage 2 chapter) and list it in book/src/SUMMARY.md",
                info.number, info.slug, info.number
            ));
            continue;
        }
        if !links.contains(&chapter) {
            problems.push(format!(
                "book/src/SUMMARY.md does not list {chapter} (stage {})",
                info.number
            ));
        }
        let title = fs::read_to_string(book_src().join(&chapter)).unwrap_or_default();
        let prefix = format!("# Stage {}: ", info.number);
        if !title.lines().next().is_some_and(|l| l.starts_with(&prefix)) {
            problems.push(format!("book/src/{chapter} must start with `{prefix}…`"));
        }
    }
    for entry in fs::read_dir(book_src().join("stages")).unwrap() {
        let name = format!("stages/{}", entry.unwrap().file_name().to_string_lossy());
        if !expected.contains(&name) {
            problems.push(format!(
                "book/src/{name} is a chapter for a stage that is not in the table (src/stages.rs)"
            ));
        }
    }
    for link in &links {
        if link.starts_with("stages/") && !expected.contains(link) {
            problems.push(format!(
                "SUMMARY.md lists {link}, which is not a stage in the table"
            ));
        }
        if !book_src().join(link).exists() {
            problems.push(format!("SUMMARY.md links {link}, which does not exist"));
        }
    }
    // Every chapter is reachable from SUMMARY.md.
    for chapter in chapters().keys() {
        let name = chapter
            .strip_prefix(book_src())
            .unwrap()
            .display()
            .to_string();
        if name != "SUMMARY.md" && !links.contains(&name) {
            problems.push(format!("book/src/{name} is not listed in SUMMARY.md"));
        }
    }
    assert!(
        problems.is_empty(),
        "stage chapters:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn every_stage_command_in_the_book_names_a_real_stage() {
    let numbers: BTreeSet<u32> = flashlab::stages::STAGES
        .iter()
        .map(|s| s.info().number)
        .collect();
    let mut problems = Vec::new();
    let mut seen = 0;
    for (chapter, text) in chapters() {
        for pattern in [
            "just stage ",
            "flashlab stage ",
            "just sanitize ",
            "just resources ",
        ] {
            for (i, _) in text.match_indices(pattern) {
                let arg: String = text[i + pattern.len()..]
                    .chars()
                    .take_while(|c| !c.is_whitespace() && *c != '`' && *c != ')')
                    .collect();
                // `just stage N` in prose, `just stage 2 --causal`; skip placeholders.
                let Ok(n) = arg.parse::<u32>() else { continue };
                seen += 1;
                if !numbers.contains(&n) {
                    problems.push(format!(
                        "{}: `{pattern}{n}`: there is no stage {n}",
                        rel(&chapter)
                    ));
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "commands for missing stages:\n  {}",
        problems.join("\n  ")
    );
    assert!(seen > 5, "only {seen} stage commands found");
}

/// Headings of every chapter, without the `#`s.
fn headings() -> Vec<String> {
    chapters()
        .values()
        .flat_map(|t| {
            t.lines()
                .filter(|l| l.starts_with('#'))
                .map(|l| l.trim_start_matches('#').trim().to_string())
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn book_pointers_in_stage_sources_name_a_heading() {
    let headings = headings();
    let mut problems = Vec::new();
    let mut files = Vec::new();
    for entry in fs::read_dir(root().join("stages")).unwrap() {
        let dir = entry.unwrap().path();
        for sub in ["src", "kernels"] {
            if let Ok(list) = fs::read_dir(dir.join(sub)) {
                files.extend(list.map(|e| e.unwrap().path()));
            }
        }
    }
    for file in files {
        let Ok(text) = fs::read_to_string(&file) else {
            continue;
        };
        for (i, _) in text.match_indices("ook: \"") {
            if !matches!(text[..i].chars().last(), Some('B' | 'b')) {
                continue;
            }
            // A pointer may wrap onto the next comment line: join the words again.
            let raw = text[i + 6..].split('"').next().unwrap();
            let name = raw
                .lines()
                .map(|l| {
                    l.trim()
                        .trim_start_matches("//!")
                        .trim_start_matches("//")
                        .trim()
                })
                .collect::<Vec<_>>()
                .join(" ");
            let name = name.as_str();
            if !headings.iter().any(|h| h.starts_with(name)) {
                problems.push(format!(
                    "{}: book section \"{name}\" is not a heading of the book",
                    rel(&file)
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "stale book pointers:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn tests_the_book_names_exist() {
    let mut sources = String::new();
    for dir in [
        "reference/tests",
        "reference/src",
        "tests",
        "harness/src",
        "layout-viz/tests",
    ] {
        if let Ok(list) = fs::read_dir(root().join(dir)) {
            for e in list {
                sources += &fs::read_to_string(e.unwrap().path()).unwrap_or_default();
            }
        }
    }
    let mut problems = Vec::new();
    for (chapter, text) in chapters() {
        for line in text.lines() {
            let Some(rest) = line.strip_prefix("| `") else {
                continue;
            };
            let name = rest.split('`').next().unwrap();
            let is_test_name = name.contains('_')
                && name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
            if is_test_name && !sources.contains(&format!("fn {name}(")) {
                problems.push(format!("{}: test `{name}` does not exist", rel(&chapter)));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "the book names tests that are gone:\n  {}",
        problems.join("\n  ")
    );
}
