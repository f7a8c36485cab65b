//! The book's checks that need no tools: they run with every `cargo test`.
//!
//! - every `{{#include path:anchor}}` names an existing file and an anchor it defines,
//!   and starts its line (indented in a list item, it ends the item and its code fence);
//! - every image a chapter shows, and every figure it links (the whole figure behind a
//!   readable part), exists: `generated/` ones are drawn by `layout-viz book` and
//!   `protocol-viz book` (their manifests) or, under `generated/bench/`, by `flashlab plots` from the committed
//!   run of record (`flashlab::bench::plots::file_names`); the Results chapter shows
//!   every plot of that list and includes its table;
//! - stage 4's code is stage 3's but for the `tile_offset` line (its chapter says so), and
//!   each later tensor-core stage is one idea away from the stage it builds on: its
//!   kernel's diff, comments and indentation aside, stays small, and is the committed
//!   `lesson.diff` (so a copy of the parent's code stays the parent's);
//! - no stage kernel has inline PTX (it lives in the wrapper headers);
//! - every stage in the table has its chapter, `stages/NN-<slug>.md`, listed in
//!   SUMMARY.md, and no chapter exists for a stage that is not in the table;
//! - every `just stage N` / `flashlab stage N` in the book names a real stage;
//! - every `Book: "…"` pointer in a stage's sources or the kernel headers names a heading,
//!   or a chapter and one of its sections ("A GPU primer: tensor cores");
//! - every test the book names (a table row starting with `` `some_test` ``) exists, in
//!   the workspace's test folders or a stage's `tests/`.
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
            // Generated files exist only after `just book`: hold them to the list of what
            // the generators write instead.
            if let Ok(name) = normalize(&file).strip_prefix(book_src().join("generated")) {
                if selector.is_some() || !generated_files().contains(&name.display().to_string()) {
                    problems.push(format!(
                        "{}: {{{{#include {link}}}}}: no generator writes {} (without an anchor)",
                        rel(&chapter),
                        rel(&file)
                    ));
                }
                continue;
            }
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
                    // `// ANCHOR: x` in code, `# ANCHOR: x` in scripts, `<!-- ANCHOR: x -->`
                    // in a Markdown table a command wrote.
                    l.strip_prefix("//")
                        .or_else(|| l.strip_prefix('#'))
                        .or_else(|| l.strip_prefix("<!--").and_then(|l| l.strip_suffix("-->")))
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

/// mdBook pastes an included file as it is, lines unindented: inside an indented list
/// item (or a block quote) the excerpt's second line ends the item, and with it the code
/// fence the include sat in, so the rest of the chapter renders as one code block. Every
/// `{{#include}}` must therefore start its line, outside any list or quote.
#[test]
fn every_include_starts_its_line() {
    let mut problems = Vec::new();
    for (chapter, text) in chapters() {
        let mut fence: Option<(usize, String)> = None; // the open fence: its line and marker
        for (i, line) in text.lines().enumerate() {
            let trimmed = line.trim_start();
            let marker: String = trimmed.chars().take_while(|&c| c == '`').collect();
            if marker.len() >= 3 {
                match &fence {
                    Some((_, open)) if marker.len() >= open.len() => fence = None,
                    None => fence = Some((i, marker)),
                    _ => {}
                }
            }
            if include_links(line).is_empty() {
                continue;
            }
            let before = &line[..line.find("{{#").unwrap()];
            if !before.is_empty() {
                let context = match &fence {
                    Some((open, _)) => format!(" (its code fence opens on line {})", open + 1),
                    None => String::new(),
                };
                problems.push(format!(
                    "{}:{}: `{}` has {:?} before it{context}; move the excerpt out of the list item or quote, unindented",
                    rel(&chapter),
                    i + 1,
                    trimmed,
                    before
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "includes that would end their list item and code fence early:\n  {}",
        problems.join("\n  ")
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

/// The `href`s of links to SVG figures: a figure shown in part (by chunks, a few warps)
/// links its whole self.
fn figure_links(text: &str) -> Vec<String> {
    text.match_indices("<a href=\"")
        .filter_map(|(i, m)| text[i + m.len()..].split('"').next())
        .filter(|href| href.ends_with(".svg"))
        .map(str::to_string)
        .collect()
}

/// The book's list of what it draws from the runs of record (bench/records/book.txt),
/// the one `flashlab plots --book` follows for `just book`.
fn book_list() -> Vec<flashlab::bench::records::BookEntry> {
    flashlab::bench::records::book_list(&root()).unwrap_or_else(|e| panic!("{e:#}"))
}

/// The runs of record the book plots, as (JSON, folder under book/src/generated). A
/// `bench.json` is a prefill run (`flashlab bench`), a `decode.json` a decode one
/// (`flashlab bench --decode`).
fn records() -> Vec<(String, String)> {
    let records: Vec<(String, String)> = book_list()
        .iter()
        .filter_map(|e| Some((e.plotted()?.to_str()?.to_string(), e.to.clone())))
        .collect();
    assert!(
        records.len() >= 3,
        "bench/records/book.txt plots fewer runs of record than expected: {records:?}"
    );
    records
}

/// Every run of record and experiment a chapter names by path (`bench/records/…`,
/// `bench/experiments/…`) is in the tree: a run that moves or retires takes its quotes along.
#[test]
fn every_record_and_experiment_a_chapter_names_exists() {
    let mut missing = Vec::new();
    for (path, text) in chapters() {
        for prefix in ["bench/records/", "bench/experiments/"] {
            for (i, _) in text.match_indices(prefix) {
                let end = text[i..]
                    .find(|c: char| c.is_whitespace() || "`)(,;\"'}|".contains(c))
                    .map_or(text.len(), |e| i + e);
                // An include's `:anchor` is not part of the path.
                let named = text[i..end]
                    .split(':')
                    .next()
                    .unwrap()
                    .trim_end_matches('.');
                if !root().join(named).exists() {
                    missing.push(format!("{}: {named}", rel(&path)));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "chapters name records or experiments that are not in the tree (moved? retired: \
         bench/records/README.md):\n  {}",
        missing.join("\n  ")
    );
}

/// The prefill runs of record, read.
fn bench_records() -> Vec<(flashlab::bench::BenchResults, String)> {
    records()
        .into_iter()
        .filter(|(from, _)| from.ends_with("bench.json"))
        .map(|(from, dir)| {
            let results = flashlab::bench::BenchResults::read(&root().join(&from))
                .unwrap_or_else(|e| panic!("{from}: {e:#}"));
            (results, dir)
        })
        .collect()
}

/// The decode runs of record, as (JSON, folder).
fn decode_records() -> Vec<(String, String)> {
    records()
        .into_iter()
        .filter(|(from, _)| from.ends_with("decode.json"))
        .collect()
}

/// The seqlens a prefill run holds.
fn seqlens(results: &flashlab::bench::BenchResults) -> BTreeSet<usize> {
    results
        .rows
        .iter()
        .map(|r| r.problem.shape.seqlen_q)
        .collect()
}

/// The run of record drawn as the ladder at a glance: the one prefill run of a single
/// seqlen whose stages span branches of the tree (a run of several seqlens is a sweep,
/// drawn against seqlen); its folder under book/src/generated.
fn ladder_record_dir() -> String {
    let dirs: Vec<String> = bench_records()
        .into_iter()
        .filter(|(r, _)| seqlens(r).len() == 1 && flashlab::bench::ladder::draws_ladder(r))
        .map(|(_, dir)| dir)
        .collect();
    assert_eq!(
        dirs.len(),
        1,
        "one run of record of one seqlen, stages of two branches, for the ladder: {dirs:?}"
    );
    dirs[0].clone()
}

/// What `flashlab plots` writes into book/src/generated from the runs of record, as paths
/// relative to book/src/generated.
fn bench_plot_files() -> Vec<String> {
    let mut files = Vec::new();
    for (results, dir) in bench_records() {
        files.extend(
            flashlab::bench::plots::file_names(&results)
                .into_iter()
                .map(|f| format!("{dir}/{f}")),
        );
    }
    files.extend(decode_plot_files());
    files
}

/// What `flashlab plots` writes from the decode runs of record.
fn decode_plot_files() -> Vec<String> {
    let mut files = Vec::new();
    for (record, dir) in decode_records() {
        flashlab::bench::decode::DecodeResults::read(&root().join(&record))
            .unwrap_or_else(|e| panic!("{record}: {e:#}"));
        files.extend(
            flashlab::bench::decode::PLOT_FILES
                .iter()
                .map(|f| format!("{dir}/{f}")),
        );
        files.push(format!("{dir}/decode-table.md"));
    }
    files
}

/// What the Results chapter shows of the runs of record: the figures against seqlen and
/// the table of every sweep (a run of several seqlens), the ladder's charts and table of
/// the ladder's run, and every decode figure and table.
fn results_plot_files() -> Vec<String> {
    let mut files = Vec::new();
    for (results, dir) in bench_records() {
        let names = if seqlens(&results).len() > 1 {
            let dims: BTreeSet<usize> = results
                .rows
                .iter()
                .map(|r| r.problem.shape.head_dim)
                .collect();
            let dims: Vec<usize> = dims.into_iter().collect();
            flashlab::bench::plots::sweep_file_names(&dims)
        } else if dir == ladder_record_dir() {
            flashlab::bench::ladder::LADDER_FILES
                .map(String::from)
                .to_vec()
        } else {
            Vec::new()
        };
        files.extend(names.into_iter().map(|f| format!("{dir}/{f}")));
    }
    files.extend(decode_plot_files());
    files
}

/// What `just book` writes into book/src/generated: layout-viz's and protocol-viz's
/// figures, and the plots and table of the run of record.
fn generated_files() -> BTreeSet<String> {
    let mut files: BTreeSet<String> = layout_viz::book::manifest()
        .figures
        .into_iter()
        .chain(protocol_viz::book::manifest().figures)
        .map(|f| f.file)
        .collect();
    files.extend(bench_plot_files());
    files.extend(measured_timelines());
    files
}

/// The SVGs `just book` copies as they are from the runs of record (the measured
/// timelines, drawn on the GPU machine by `flashlab timeline`), as the book list names
/// them.
fn measured_timelines() -> Vec<String> {
    use flashlab::bench::records::BookSource;
    let mut names = Vec::new();
    for entry in book_list() {
        let BookSource::Svgs(dir) = &entry.source else {
            continue;
        };
        names.extend(
            fs::read_dir(root().join(dir))
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".svg"))
                .map(|n| format!("{}/{n}", entry.to)),
        );
    }
    assert!(!names.is_empty(), "bench/records/book.txt copies no SVGs");
    names.sort();
    names
}

#[test]
fn results_chapter_shows_every_plot_of_the_run_of_record() {
    let text = fs::read_to_string(book_src().join("results.md")).unwrap();
    let shown: BTreeSet<String> = images(&text)
        .into_iter()
        .chain(include_links(&text))
        .filter_map(|l| l.strip_prefix("generated/").map(str::to_string))
        .collect();
    let missing: Vec<String> = results_plot_files()
        .into_iter()
        .filter(|f| !shown.contains(f))
        .collect();
    assert!(
        missing.is_empty(),
        "book/src/results.md does not show (or include) {} that `just plots` writes",
        missing.join(", ")
    );
}

/// The Introduction and Results open with the ladder at a glance: their first section
/// includes the ladder's table and shows its chart, both drawn from the ladder's run.
#[test]
fn the_introduction_and_results_open_with_the_ladder_at_a_glance() {
    let dir = ladder_record_dir();
    for chapter in ["introduction.md", "results.md"] {
        let text = fs::read_to_string(book_src().join(chapter)).unwrap();
        let mut sections = text.split("\n## ").skip(1);
        let first = sections.next().unwrap_or("");
        assert!(
            first.starts_with("The ladder at a glance\n"),
            "{chapter}: the first section is not \"The ladder at a glance\""
        );
        let table = format!("generated/{dir}/ladder-table.md");
        let chart = format!("generated/{dir}/ladder.svg");
        assert!(
            include_links(first).contains(&table),
            "{chapter}: its first section does not include {table}"
        );
        assert!(
            first.contains("<figure") && images(first).contains(&chart),
            "{chapter}: its first section does not show {chart} in a <figure>"
        );
    }
}

/// Stage 4's chapter calls it "stage 3 with one change": hold the code (comment lines
/// dropped) to that, so the chapter's claim and its `diff` stay true.
#[test]
fn stage4_is_stage3_but_for_tile_offset() {
    let code = |path: &str| -> Vec<String> {
        fs::read_to_string(root().join(path))
            .unwrap()
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .map(str::to_string)
            .collect()
    };
    let three = code("stages/03-tensor-cores/kernels/tensor_cores.cu");
    let four = code("stages/04-swizzle/kernels/swizzle.cu");
    assert_eq!(three.len(), four.len(), "stage 3 and 4 differ in length");
    let differing: Vec<(String, String)> = three
        .into_iter()
        .zip(four)
        .filter(|(a, b)| a != b)
        .collect();
    let expected = [
        ("tile_offset_rowmajor", "tile_offset_swizzled"),
        ("tensor_core_attention(", "swizzled_attention("),
        (
            "using flashlab::tensor_core_attention",
            "using flashlab::swizzled_attention",
        ),
        (
            "FLASHLAB_EXPORT_ALL(tensor_cores",
            "FLASHLAB_EXPORT_ALL(swizzle",
        ),
    ];
    let ok = differing.len() == expected.len()
        && differing
            .iter()
            .zip(expected)
            .all(|((a, b), (x, y))| a.contains(x) && b.contains(y));
    assert!(
        ok,
        "stage 4 differs from stage 3 in more than tile_offset (and the body's and export's names); update book/src/stages/04-swizzle.md:\n{differing:#?}"
    );
}

/// The directory of the stage numbered `n`, found through the stage table.
fn stage_dir(n: u32) -> PathBuf {
    let info = flashlab::stages::find(n).unwrap().info();
    root().join(format!("stages/{:02}-{}", info.number, info.slug))
}

/// The kernel sources (`kernels/*.cu` but probes) of the stage numbered `n`, in name order.
fn stage_kernel_files(n: u32) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(stage_dir(n).join("kernels"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "cu"))
        .filter(|p| !p.to_string_lossy().ends_with("_probe.cu"))
        .collect();
    files.sort();
    files
}

/// The kernel of the stage numbered `n`, comment lines dropped and indentation trimmed:
/// what a reader's `diff <(grep -v '^\s*//' a) <(grep -v '^\s*//' b)` compares,
/// whitespace aside.
fn stage_kernel_code(n: u32) -> Vec<String> {
    stage_kernel_files(n)
        .iter()
        .flat_map(|f| {
            fs::read_to_string(f)
                .unwrap()
                .lines()
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .filter(|l| !l.trim_start().starts_with("//"))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

/// The steps of the ladder whose diff is their lesson: (parent, stage) for each stage from
/// 4 on that builds on a stage of the same workload. (The first decode stage grows from
/// stage 9's `mma.sync` pieces, not from a decode kernel: its chapter says which.)
fn lesson_steps() -> Vec<(u32, u32)> {
    let stages = flashlab::stages::STAGES;
    stages
        .iter()
        .filter(|s| s.info().number >= 4)
        .filter_map(|s| {
            let parent = stages
                .iter()
                .find(|p| Some(p.info().number) == s.info().builds_on)?;
            (parent.workload().kind() == s.workload().kind())
                .then_some((parent.info().number, s.info().number))
        })
        .collect()
}

/// Changed lines allowed between a tensor-core stage and the stage it builds on, removed
/// plus added, comments and whitespace aside: one idea, not a rewrite (stage 4 to 5 is
/// about 70; the shared parts of the Hopper stages live in `flashlab/hopper/`, so their
/// steps show only what they change).
const ONE_IDEA_LINES: usize = 150;

/// Steps whose one idea touches every product, each with its own cap (so that growth is
/// still caught) and the reason: (parent, stage, cap, why).
const WIDER_STEPS: &[(u32, u32, usize, &str)] = &[(
    22,
    25,
    270,
    "stage 25 gives each of the backward's five products new warp tiles, so every product's loop changes",
)];

/// Each stage from 4 on is the stage it builds on plus one idea: its chapter's diff is the
/// lesson.
#[test]
fn each_stage_differs_from_the_one_it_builds_on_by_one_idea() {
    let mut problems = Vec::new();
    let steps = lesson_steps();
    assert!(
        steps.len() >= 10,
        "only {} steps found: {steps:?}",
        steps.len()
    );
    for &(parent, stage) in &steps {
        let (a, b) = (stage_kernel_code(parent), stage_kernel_code(stage));
        let (a, b): (Vec<&str>, Vec<&str>) = (
            a.iter().map(String::as_str).collect(),
            b.iter().map(String::as_str).collect(),
        );
        let diff = similar::TextDiff::from_slices(&a, &b);
        let changed = diff
            .iter_all_changes()
            .filter(|c| c.tag() != similar::ChangeTag::Equal)
            .count();
        assert!(
            changed > 0,
            "stages {parent} and {stage} have the same kernel"
        );
        let cap = WIDER_STEPS
            .iter()
            .find(|w| (w.0, w.1) == (parent, stage))
            .map_or(ONE_IDEA_LINES, |w| w.2);
        if changed > cap {
            problems.push(format!(
                "stage {parent} -> {stage}: {changed} changed lines (at most {cap}): \
                 split the step, or move what the stages share into a header first"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "a stage should be one idea away from the stage it builds on:\n  {}",
        problems.join("\n  ")
    );
}

/// The unified diff of a stage's kernel sources from its parent's, paths relative to the
/// repository: the lesson as `diff -u` shows it.
fn lesson_diff(parent: u32, stage: u32) -> String {
    let text = |n: u32| -> (String, String) {
        let files = stage_kernel_files(n);
        let names: Vec<String> = files.iter().map(|f| rel(f)).collect();
        // The book's include markers are for the book, not the lesson: left out.
        let body: String = files
            .iter()
            .flat_map(|f| {
                fs::read_to_string(f)
                    .unwrap()
                    .lines()
                    .filter(|l| !l.trim_start().starts_with("// ANCHOR"))
                    .map(|l| format!("{l}\n"))
                    .collect::<Vec<_>>()
            })
            .collect();
        (names.join(" "), body)
    };
    let ((a_name, a), (b_name, b)) = (text(parent), text(stage));
    similar::TextDiff::from_lines(&a, &b)
        .unified_diff()
        .context_radius(3)
        .header(&a_name, &b_name)
        .to_string()
}

/// A stage keeps a copy of its parent's kernel so that `diff` shows its one idea; the copy
/// is held to the parent by the step's diff, committed as the stage's `lesson.diff` (which
/// its chapter shows). A fix made to a parent and not to its children, or the other way
/// round, changes a diff and fails here. After a deliberate change, rewrite the diffs
/// with `FLASHLAB_BLESS=1 cargo test --release --test book lesson` and read them before committing.
#[test]
fn each_lesson_diff_is_the_committed_one() {
    let bless = std::env::var_os("FLASHLAB_BLESS").is_some();
    let mut problems = Vec::new();
    for (parent, stage) in lesson_steps() {
        let path = stage_dir(stage).join("lesson.diff");
        let fresh = lesson_diff(parent, stage);
        if bless {
            fs::write(&path, &fresh).unwrap();
            continue;
        }
        match fs::read_to_string(&path) {
            Ok(committed) if committed == fresh => {}
            Ok(_) => problems.push(format!(
                "{}: stage {stage}'s kernel no longer differs from stage {parent}'s as committed: a change reached one copy and not the other",
                rel(&path)
            )),
            Err(e) => problems.push(format!("{}: {e}", rel(&path))),
        }
    }
    assert!(
        problems.is_empty(),
        "{}\n(if the change is meant for both or is the lesson itself: FLASHLAB_BLESS=1 cargo test --release --test book lesson, then read the diffs)",
        problems.join("\n")
    );
}

/// A part a stage takes from a stage other than its parent, kept in its kernel so that its
/// lesson diff shows it: (stage, anchor, the stage it comes from, why). The copy is held to
/// its source word for word, so a fix reaches both or fails here.
const BORROWED_ANCHORS: &[(u32, &str, u32, &str)] = &[(
    31,
    "transpose_v",
    30,
    "stage 31 is stage 28 with stage 30's transposing warps",
)];

/// The text between `// ANCHOR: name` and `// ANCHOR_END: name` in a stage's kernel sources.
fn kernel_anchor(stage: u32, name: &str) -> Option<String> {
    let (start, end) = (format!("// ANCHOR: {name}"), format!("// ANCHOR_END: {name}"));
    stage_kernel_files(stage).iter().find_map(|f| {
        let text = fs::read_to_string(f).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let a = lines.iter().position(|l| l.trim() == start)?;
        let b = a + lines[a..].iter().position(|l| l.trim() == end)?;
        Some(lines[a + 1..b].join("\n"))
    })
}

#[test]
fn each_borrowed_anchor_is_its_sources_word_for_word() {
    let mut problems = Vec::new();
    for &(stage, name, from, why) in BORROWED_ANCHORS {
        match (kernel_anchor(stage, name), kernel_anchor(from, name)) {
            (Some(copy), Some(source)) if copy == source => {}
            (Some(_), Some(_)) => problems.push(format!(
                "stage {stage}'s `{name}` is no longer stage {from}'s ({why}): make the change in both"
            )),
            (copy, source) => problems.push(format!(
                "`{name}`: stage {stage} has it: {}, stage {from} has it: {}",
                copy.is_some(),
                source.is_some()
            )),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Inline PTX lives once, in the wrapper headers of `kernel-headers/include/flashlab/`: a kernel
/// calls a named wrapper, so each instruction family is explained in one place.
#[test]
fn no_inline_ptx_in_stage_kernels() {
    let mut problems = Vec::new();
    for s in flashlab::stages::STAGES {
        let n = s.info().number;
        let dir = stage_dir(n).join("kernels");
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let text = fs::read_to_string(&path).unwrap();
            for (i, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                if code.contains("asm(") || code.contains("asm volatile") {
                    problems.push(format!("{}:{}: {}", rel(&path), i + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "inline PTX outside kernel-headers/include/flashlab (give it a wrapper there):\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn every_image_exists_after_the_book_figures_are_drawn() {
    let generated = generated_files();
    let mut problems = Vec::new();
    let mut used = 0;
    for (chapter, text) in chapters() {
        let dir = chapter.parent().unwrap();
        for src in images(&text).into_iter().chain(figure_links(&text)) {
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
                            "{}: {src}: neither `layout-viz book`, `protocol-viz book` nor `flashlab plots` draws it (they draw: {})",
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
            "just timeline ",
            "flashlab timeline ",
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

/// A pointer written "Chapter: section" ("A GPU primer: tensor cores"): a chapter whose
/// title starts with the part before the last ": " has a heading that is the part after
/// it, case aside.
fn names_a_section(name: &str) -> bool {
    let Some((chapter, section)) = name.rsplit_once(": ") else {
        return false;
    };
    chapters().values().any(|text| {
        let mut lines = text.lines();
        let title = lines.next().unwrap_or("").trim_start_matches('#').trim();
        title.starts_with(chapter)
            && lines.filter(|l| l.starts_with("##")).any(|l| {
                l.trim_start_matches('#')
                    .trim()
                    .eq_ignore_ascii_case(section)
            })
    })
}

#[test]
fn book_pointers_in_stage_sources_name_a_heading() {
    let headings = headings();
    let mut problems = Vec::new();
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    for entry in fs::read_dir(root().join("stages")).unwrap() {
        let dir = entry.unwrap().path();
        dirs.extend(["src", "kernels"].map(|sub| dir.join(sub)));
    }
    let headers = flashlab_kernel_headers::include_dir_for(&root()).join("flashlab");
    dirs.extend([headers.clone(), headers.join("hopper")]);
    for dir in dirs {
        if let Ok(list) = fs::read_dir(dir) {
            files.extend(list.map(|e| e.unwrap().path()).filter(|p| p.is_file()));
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
                        .trim_start_matches('/')
                        .trim()
                })
                .collect::<Vec<_>>()
                .join(" ");
            let name = name.as_str();
            if !headings.iter().any(|h| h.starts_with(name)) && !names_a_section(name) {
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
    let mut dirs: Vec<PathBuf> = [
        "reference/tests",
        "reference/src",
        "tests",
        "harness/src",
        "layout-viz/tests",
        "protocol-viz/tests",
    ]
    .iter()
    .map(|d| root().join(d))
    .collect();
    for entry in fs::read_dir(root().join("stages")).unwrap() {
        dirs.push(entry.unwrap().path().join("tests"));
    }
    for dir in dirs {
        if let Ok(list) = fs::read_dir(dir) {
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
