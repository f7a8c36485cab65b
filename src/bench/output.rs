//! Rows in text: the CSV file, the progress lines on the terminal, and the markdown
//! results table (printed at the end of a run, and `results-table.md`).

use super::results::{Baselines, BenchResults, Row, RowKind, Status};
use super::sweep::shape_label;
use std::fmt::Write as _;
use std::io::IsTerminal;

impl BenchResults {
    /// One line per row; the GPU and commit repeated on each, so rows of several runs
    /// can be concatenated and still say where they came from. Fields are quoted only
    /// where they need it (RFC 4180), as the committed runs' `bench.csv` files are.
    pub fn to_csv(&self) -> String {
        let mut out = csv::Writer::from_writer(Vec::new());
        // Writing 22 fields a record into memory has no way to fail.
        const NO_IO: &str = "CSV into memory";
        out.write_record(CSV_COLUMNS).expect(NO_IO);
        for r in &self.rows {
            let opt = |x: Option<f64>| x.map(|v| v.to_string()).unwrap_or_default();
            let fields = [
                match r.kind {
                    RowKind::Stage => "stage".to_string(),
                    RowKind::Baseline => "baseline".to_string(),
                },
                r.name.clone(),
                r.stage.map(|s| s.to_string()).unwrap_or_default(),
                r.problem.shape.batch.to_string(),
                r.problem.shape.heads.to_string(),
                r.problem.shape.seqlen_q.to_string(),
                r.problem.shape.head_dim.to_string(),
                r.problem.causal.to_string(),
                r.problem.dtype.to_string(),
                r.status.name().to_string(),
                opt(r.median_ms),
                opt(r.min_ms),
                r.iterations.map(|i| i.to_string()).unwrap_or_default(),
                r.gflop.to_string(),
                opt(r.tflops),
                opt(r.sol_percent),
                opt(r.max_abs_error),
                opt(r.error_bound),
                r.check_passed.map(|b| b.to_string()).unwrap_or_default(),
                r.reason.clone().unwrap_or_default(),
                self.header.device.name.clone(),
                self.header.git_commit.clone(),
            ];
            out.write_record(&fields).expect(NO_IO);
        }
        String::from_utf8(out.into_inner().expect(NO_IO)).expect("every field is a String")
    }
}

pub const CSV_COLUMNS: [&str; 22] = [
    "kind",
    "name",
    "stage",
    "batch",
    "heads",
    "seqlen",
    "head_dim",
    "causal",
    "dtype",
    "status",
    "median_ms",
    "min_ms",
    "iterations",
    "gflop",
    "tflops",
    "sol_percent",
    "max_abs_error",
    "error_bound",
    "check_passed",
    "reason",
    "gpu",
    "git_commit",
];

/// A progress bar on a terminal; one line per row otherwise (logs, remote runs).
pub(crate) struct Progress {
    bar: Option<indicatif::ProgressBar>,
    total: u64,
    done: std::cell::Cell<u64>,
    what: &'static str,
}

impl Progress {
    pub(crate) fn new(total: u64, what: &'static str) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = indicatif::ProgressBar::new(total);
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "{prefix} [{bar:30}] {pos}/{len} {elapsed_precise} (eta {eta}) {wide_msg}",
            ) {
                bar.set_style(style.progress_chars("=> "));
            }
            bar.set_prefix(what);
            bar
        });
        Progress {
            bar,
            total,
            done: std::cell::Cell::new(0),
            what,
        }
    }

    pub(crate) fn start(&self, label: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(label.to_string());
        }
    }

    pub(crate) fn finish_row(&self, row: &Row) {
        self.done.set(self.done.get() + 1);
        let line = row_line(row);
        match &self.bar {
            Some(bar) => {
                bar.inc(1);
                if row.status != Status::Ok && row.status != Status::Skipped {
                    bar.println(line);
                }
            }
            None => eprintln!("[{} {}/{}] {line}", self.what, self.done.get(), self.total),
        }
    }

    pub(crate) fn done(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// One row in one line: `2-online-softmax b2 h16 s4096 d128: 5.5 TFLOPS (12.3 ms) ok`.
pub fn row_line(r: &Row) -> String {
    let shape = shape_label(&r.problem);
    match (r.status, r.tflops, r.median_ms) {
        (Status::Ok | Status::CheckFailed, Some(t), Some(ms)) => format!(
            "{} {shape}: {t:.1} TFLOPS ({ms:.3} ms) {}",
            r.name,
            if r.status == Status::Ok {
                "ok".to_string()
            } else {
                format!("CHECK FAILED: {}", r.reason.as_deref().unwrap_or(""))
            }
        ),
        (s, _, _) => format!(
            "{} {shape}: {} {}",
            r.name,
            s.name(),
            r.reason.as_deref().unwrap_or("")
        ),
    }
}

/// The markdown the results chapter includes: where the run was made, then one table
/// per (head dim, causal) with TFLOPS and % of the GEMM speed of light per column.
pub fn results_table(res: &BenchResults) -> String {
    let h = &res.header;
    let mut out = String::new();
    let mma_sync = h
        .speed_of_light
        .mma_sync_tflops
        .map(|t| format!(" (mma.sync alone, the ceiling of the mma.sync stages: {t:.0} TFLOPS)"))
        .unwrap_or_default();
    let sol = match h.speed_of_light.gemm_tflops {
        Some(t) => format!(
            "cuBLAS bf16 GEMM {t:.0} TFLOPS{mma_sync}, copy {:.0} GB/s",
            h.speed_of_light.copy_gb_per_s
        ),
        None => format!(
            "copy {:.0} GB/s; GEMM not measured ({})",
            h.speed_of_light.copy_gb_per_s,
            h.speed_of_light
                .gemm_skipped
                .as_deref()
                .unwrap_or("unknown")
        ),
    };
    let _ = writeln!(
        out,
        "Measured on **{}** (compute capability {}, {} SMs, SM clock up to {} MHz, memory {} MHz, driver {}) on {}, flashlab commit `{}`.\n",
        h.device.name,
        h.device.compute_capability,
        h.device.multiprocessors,
        h.device.sm_clock_mhz,
        h.device.memory_clock_mhz,
        h.device.driver_version,
        h.date_utc,
        short_commit(&h.git_commit),
    );
    let _ = writeln!(
        out,
        "Speed of light: {sol}. Shapes: {}. FLOPs: {}. Cells: TFLOPS (percent of the GEMM figure); `-` not run, `FAIL` failed its check, `err` failed to run (the JSON says why).\n",
        h.sweep.shape_rule, h.sweep.flop_rule
    );
    let baselines = match &h.baselines {
        Baselines::Ran { environment } => {
            let env = |key: &str| {
                environment
                    .get(key)
                    .and_then(|v| v.as_str())
                    .unwrap_or("?")
                    .to_string()
            };
            let mut missing: Vec<&str> = res
                .rows
                .iter()
                .filter(|r| r.kind == RowKind::Baseline)
                .map(|r| r.name.as_str())
                .filter(|n| {
                    res.rows
                        .iter()
                        .filter(|r| r.name == *n)
                        .all(|r| r.status == Status::Skipped)
                })
                .collect();
            missing.sort();
            missing.dedup();
            format!(
                "Baselines ran in the same bench run (PyTorch {}, CUDA {}){}",
                env("torch"),
                env("cuda"),
                if missing.is_empty() {
                    String::new()
                } else {
                    format!("; not available there: {}", missing.join(", "))
                }
            )
        }
        Baselines::Skipped { reason } => format!(
            "Baselines were skipped: {}",
            if reason.is_empty() {
                "no reason recorded"
            } else {
                reason
            }
        ),
        Baselines::NotRequested => "Baselines were not requested".to_string(),
    };
    let _ = writeln!(out, "{baselines}.\n");

    let mut names: Vec<(u8, u32, String)> = res.rows.iter().map(Row::order_key).collect();
    names.sort();
    names.dedup();
    let dims = distinct(res.rows.iter().map(|r| r.problem.shape.head_dim));
    let causals = distinct(res.rows.iter().map(|r| r.problem.causal));
    for &d in &dims {
        for &c in &causals {
            let rows: Vec<&Row> = res
                .rows
                .iter()
                .filter(|r| r.problem.shape.head_dim == d && r.problem.causal == c)
                .collect();
            if rows.is_empty() {
                continue;
            }
            // Stages always get a column (a skip is news); a baseline only where it ran.
            let cols: Vec<&(u8, u32, String)> = names
                .iter()
                .filter(|k| {
                    rows.iter()
                        .any(|r| r.name == k.2 && (k.0 == 0 || r.status != Status::Skipped))
                })
                .collect();
            let _ = writeln!(out, "#### Head dim {d}, {}\n", causal_title(c));
            let _ = write!(out, "| seqlen | batch x heads |");
            for k in &cols {
                let _ = write!(out, " {} |", k.2);
            }
            let _ = write!(out, "\n|---:|---:|");
            for _ in &cols {
                let _ = write!(out, "---:|");
            }
            out.push('\n');
            for s in distinct(rows.iter().map(|r| r.problem.shape.seqlen_q)) {
                let first = rows.iter().find(|r| r.problem.shape.seqlen_q == s);
                let bh = first
                    .map(|r| format!("{} x {}", r.problem.shape.batch, r.problem.shape.heads))
                    .unwrap_or_default();
                let _ = write!(out, "| {s} | {bh} |");
                for k in &cols {
                    let cell = rows
                        .iter()
                        .find(|r| r.problem.shape.seqlen_q == s && r.name == k.2)
                        .map(|r| cell(r))
                        .unwrap_or_else(|| "-".into());
                    let _ = write!(out, " {cell} |");
                }
                out.push('\n');
            }
            out.push('\n');
        }
    }
    out
}

fn cell(r: &Row) -> String {
    match r.status {
        Status::Ok => match (r.tflops, r.sol_percent) {
            (Some(t), Some(p)) if p < 10.0 => format!("{} ({p:.1}%)", sig3(t)),
            (Some(t), Some(p)) => format!("{} ({p:.0}%)", sig3(t)),
            (Some(t), None) => sig3(t),
            _ => r.status.table_mark().into(),
        },
        status => status.table_mark().into(),
    }
}

/// Three significant figures without exponent: 0.512, 5.47, 54.7, 547, 5470.
fn sig3(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else if x >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

pub(crate) fn short_commit(c: &str) -> String {
    let base = c.trim_end_matches("-dirty");
    let short: String = base.chars().take(12).collect();
    if base.len() < c.len() {
        format!("{short}-dirty")
    } else {
        short
    }
}

/// `causal` or `non-causal`, for titles.
pub(crate) fn causal_title(causal: bool) -> &'static str {
    if causal { "causal" } else { "non-causal" }
}

/// The distinct values, sorted.
pub(crate) fn distinct<T: Ord + Copy>(xs: impl Iterator<Item = T>) -> Vec<T> {
    let mut v: Vec<T> = xs.collect();
    v.sort();
    v.dedup();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn significant_figures() {
        assert_eq!(sig3(547.4), "547");
        assert_eq!(sig3(5.474), "5.47");
        assert_eq!(sig3(0.5123), "0.512");
    }

    #[test]
    fn commits_are_shortened_but_keep_dirty() {
        assert_eq!(short_commit("0123456789abcdef0123"), "0123456789ab");
        assert_eq!(short_commit("unknown"), "unknown");
        assert_eq!(short_commit("0123456789abcdef-dirty"), "0123456789ab-dirty");
    }
}
