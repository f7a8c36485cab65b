//! The committed runs of record (`bench/records/`, laid out as its `README.md` says) and the
//! one list of what the book draws from them, `bench/records/book.txt`: `flashlab plots
//! --book` (which `just book` and `just plots` run) follows it, and `tests/book.rs` reads it
//! through [`book_list`] to know which figures the chapters must show.

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};

/// The runs of record, one folder per GPU model and workload (`h200-prefill`, ...), each
/// holding its runs, one folder each; from the repository root.
pub const RECORDS: &str = "bench/records";

/// The list of what the book draws from the runs of record; from the repository root.
pub const BOOK_LIST: &str = "bench/records/book.txt";

/// Where the book's generated files go; from the repository root.
pub const BOOK_GENERATED: &str = "book/src/generated";

/// What the book takes from one run of record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BookSource {
    /// `plots FILE FOLDER`: what `flashlab plots --from FILE` draws (a `bench.json`:
    /// the prefill figures and tables; a `decode.json`: the decode ones).
    Plots(PathBuf),
    /// `svgs FOLDER FOLDER`: the SVGs of a run's folder, copied as they are (the measured
    /// timelines, drawn on the GPU machine by `flashlab timeline`).
    Svgs(PathBuf),
}

/// One line of [`BOOK_LIST`]: a source in a run of record (from the repository root) and
/// the folder under [`BOOK_GENERATED`] it goes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BookEntry {
    pub source: BookSource,
    pub to: String,
}

impl BookEntry {
    /// The `bench.json` or `decode.json` this line plots, if it plots one.
    pub fn plotted(&self) -> Option<&Path> {
        match &self.source {
            BookSource::Plots(p) => Some(p),
            BookSource::Svgs(_) => None,
        }
    }
}

/// Parses the book list: one `plots FILE FOLDER` or `svgs FOLDER FOLDER` a line, `#` to
/// the end of a line a comment. Sources must lie under [`RECORDS`]; each generated folder
/// is named once.
pub fn parse_book_list(text: &str) -> Result<Vec<BookEntry>> {
    let mut entries: Vec<BookEntry> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        let [verb, from, to] = words[..] else {
            bail!(
                "{BOOK_LIST}:{}: expected `plots FILE FOLDER` or `svgs FOLDER FOLDER`, got `{line}`",
                n + 1
            );
        };
        if !from.starts_with(&format!("{RECORDS}/")) {
            bail!("{BOOK_LIST}:{}: `{from}` is not under {RECORDS}/", n + 1);
        }
        if to.is_empty() || to.contains("..") || to.starts_with('/') {
            bail!(
                "{BOOK_LIST}:{}: `{to}` is not a folder name under {BOOK_GENERATED}",
                n + 1
            );
        }
        let source = match verb {
            "plots" if from.ends_with("/bench.json") || from.ends_with("/decode.json") => {
                BookSource::Plots(PathBuf::from(from))
            }
            "plots" => bail!(
                "{BOOK_LIST}:{}: `{from}` is not a bench.json or decode.json",
                n + 1
            ),
            "svgs" => BookSource::Svgs(PathBuf::from(from)),
            _ => bail!("{BOOK_LIST}:{}: unknown `{verb}` (plots or svgs)", n + 1),
        };
        if entries.iter().any(|e| e.to == to) {
            bail!(
                "{BOOK_LIST}:{}: `{to}` is written by an earlier line",
                n + 1
            );
        }
        entries.push(BookEntry {
            source,
            to: to.to_string(),
        });
    }
    Ok(entries)
}

/// The book list of the repository at `root`.
pub fn book_list(root: &Path) -> Result<Vec<BookEntry>> {
    let path = root.join(BOOK_LIST);
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    parse_book_list(&text)
}

/// Every run folder of the records at `root` (`bench/records/<gpu>-<workload>/<run>/`),
/// sorted.
pub fn runs(root: &Path) -> Result<Vec<PathBuf>> {
    let records = root.join(RECORDS);
    let mut runs = Vec::new();
    for group in
        std::fs::read_dir(&records).with_context(|| format!("reading {}", records.display()))?
    {
        let group = group?.path();
        if !group.is_dir() {
            continue;
        }
        for run in std::fs::read_dir(&group)? {
            let run = run?.path();
            if run.is_dir() {
                runs.push(run);
            }
        }
    }
    runs.sort();
    Ok(runs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_parses_and_refuses_what_it_cannot_follow() {
        let list = "# comment\n\nplots bench/records/a/b/bench.json bench  # trailing\nsvgs bench/records/a/b/timelines timelines\n";
        let entries = parse_book_list(list).unwrap();
        assert_eq!(entries.len(), 2);
        assert_eq!(
            entries[0].plotted(),
            Some(Path::new("bench/records/a/b/bench.json"))
        );
        assert_eq!(entries[1].to, "timelines");
        for bad in [
            "plots bench/records/a/b/bench.json",
            "plots bench/out/bench.json bench",
            "plots bench/records/a/b/table.md bench",
            "draw bench/records/a/b/bench.json bench",
            "plots bench/records/a/b/bench.json ../escape",
            "plots bench/records/a/b/bench.json x\nsvgs bench/records/a/b/t x",
        ] {
            assert!(parse_book_list(bad).is_err(), "{bad}");
        }
    }
}
