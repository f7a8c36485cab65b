//! `flashlab bench --decode`: the decode stages on decode shapes, as a roofline. Each shape
//! runs the stage with the split heuristic's count, then with every split count of a sweep
//! (so the heuristic's choice stands beside the best one found), then with a paged cache of
//! each page size; PyTorch's SDPA flash and cuDNN kernels (native GQA) and FlashAttention-4
//! run on the same contiguous shapes (`bench/decode_baselines.py`). Every row is checked
//! against the oracle and timed with the L2 flushed before each launch; speed is GB/s of
//! unique K/V read, and its fraction of the streaming-read bandwidth `flashlab info`
//! measures. Beside them, each shape's read floor: a kernel that only reads the shape's
//! K/V bytes, timed the same way (`harness::sol::read_floor`). Writes DIR/decode.json and
//! DIR/decode-table.md, and with --plots decode-bandwidth.svg and decode-splits.svg.

use super::baselines::{Python, Script, probe, run_script};
use super::results::{GIT_COMMIT, utc_now};
use crate::stages::STAGES;
use anyhow::{Context as _, Result, anyhow, bail};
use harness::decode::run::{DecodeOptions, run_decode};
use harness::decode::{DecodeProblem, KvLayout, MAX_SPLITS};
use harness::gpu::DeviceFacts;
use harness::timing::TimingProtocol;
use harness::{DecodeStage, Gpu, Workload};
use plotters::prelude::*;
use serde::{Deserialize, Serialize};
use std::io::BufRead;
use std::path::{Path, PathBuf};

pub const SCRIPT: &str = include_str!("../../bench/decode_baselines.py");

/// The shape: a Llama-style GQA layer, 32 query heads sharing 8 K/V heads of 128
/// (`--decode-dim` for another head dim).
pub const HEADS: usize = 32;
pub const KV_HEADS: usize = 8;
pub const HEAD_DIM: usize = 128;
pub const DEFAULT_BATCHES: &[usize] = &[1, 8, 32];
pub const DEFAULT_CACHE_LENS: &[usize] = &[2048, 8192, 32768, 131072];
/// Shapes past this many cache tokens in all (1 GiB of K/V at this shape) are left out.
pub const DEFAULT_MAX_TOKENS: usize = 262_144;
pub const SPLIT_SWEEP: &[usize] = &[1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128];
pub const PAGE_SIZES: &[usize] = &[16, 64, 256];

#[derive(Clone, Debug)]
pub struct DecodeBenchConfig {
    /// The decode stages to run (`--stages`); all of them by default. The last one gets
    /// the sweep and the paged runs.
    pub stages: Option<Vec<u32>>,
    pub batches: Vec<usize>,
    pub cache_lens: Vec<usize>,
    pub max_tokens: usize,
    pub head_dim: usize,
    pub baselines: bool,
    pub plots: bool,
    pub out: PathBuf,
    pub timing: TimingProtocol,
    pub seed: u64,
    /// Print the shapes and runs, then stop (no GPU needed).
    pub dry_run: bool,
}

/// One shape of the sweep: every sequence `cache_len` keys, one new query row.
pub fn shapes(config: &DecodeBenchConfig) -> Vec<DecodeProblem> {
    let mut out = Vec::new();
    for &batch in &config.batches {
        for &len in &config.cache_lens {
            if batch * len <= config.max_tokens {
                out.push(DecodeProblem::uniform(
                    batch,
                    HEADS,
                    KV_HEADS,
                    1,
                    len,
                    config.head_dim,
                ));
            }
        }
    }
    out
}

/// What one row measured: a stage run (kind `heuristic`, `splits` or `paged`), a baseline,
/// or the shape's read floor (kind `read`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DecodeRow {
    /// `heuristic` (the split heuristic's count, contiguous), `splits` (a count of the
    /// sweep), `paged` (the heuristic's count on a paged cache), `baseline`, or `read`
    /// (the streaming read of the shape's K/V bytes; bench files before it have none).
    pub kind: String,
    pub name: String,
    pub batch: usize,
    pub heads: usize,
    pub kv_heads: usize,
    pub seqlen_q: usize,
    pub cache_len: usize,
    pub head_dim: usize,
    pub dtype: String,
    /// `contiguous` or `paged N`.
    pub layout: String,
    pub splits: Option<usize>,
    /// `ok`, `check-failed`, `error` or `skipped`.
    pub status: String,
    pub reason: Option<String>,
    pub median_ms: Option<f64>,
    pub gb_per_s: Option<f64>,
    /// GB/s over the streaming-read bandwidth of the header.
    pub read_fraction: Option<f64>,
    pub kv_bytes: f64,
    pub check_passed: Option<bool>,
    pub max_abs_error: Option<f64>,
    pub error_bound: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DecodeHeader {
    /// Always "decode": what `flashlab plots` tells this file from a bench.json by.
    pub kind: String,
    pub tool: String,
    pub git_commit: String,
    pub date_utc: String,
    pub command_line: String,
    pub device: DeviceFacts,
    pub read_gb_per_s: f64,
    pub copy_gb_per_s: f64,
    pub timing: String,
    pub cold_l2: bool,
    /// How the L2 was flushed: "plain loads" since the flush stopped using evict-first
    /// reads; absent in the runs before, whose flush left the last launch's K/V in the L2
    /// wherever they fit (book: Results, "A flush that did not flush").
    #[serde(default)]
    pub l2_flush: Option<String>,
    pub seed: u64,
    /// The baselines' environment line, or why they did not run.
    pub baselines: serde_json::Value,
    pub notes: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DecodeResults {
    pub header: DecodeHeader,
    pub rows: Vec<DecodeRow>,
}

impl DecodeResults {
    pub fn read(path: &Path) -> Result<DecodeResults> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        serde_json::from_str(&text)
            .with_context(|| format!("{} is not a flashlab decode bench JSON", path.display()))
    }

    /// Rows that were timed and passed.
    pub fn ok(&self) -> impl Iterator<Item = &DecodeRow> {
        self.rows
            .iter()
            .filter(|r| r.status == "ok" && r.gb_per_s.is_some())
    }

    /// The fastest timed, passing row at a shape among those `select` takes.
    fn best(
        &self,
        shape: (usize, usize),
        select: impl Fn(&DecodeRow) -> bool,
    ) -> Option<&DecodeRow> {
        self.ok()
            .filter(|r| (r.batch, r.cache_len) == shape && select(r))
            .max_by(|a, b| a.gb_per_s.unwrap().total_cmp(&b.gb_per_s.unwrap()))
    }

    /// The stages measured, by number ("stage 14" rows and so on), in order.
    fn stages(&self) -> Vec<String> {
        let mut names: Vec<&DecodeRow> = self.rows.iter().filter(|r| r.is_stage()).collect();
        names.sort_by_key(|r| {
            r.name
                .trim_start_matches("stage ")
                .parse::<u32>()
                .unwrap_or(0)
        });
        let mut out: Vec<String> = names.iter().map(|r| r.name.clone()).collect();
        out.dedup();
        out
    }

    /// The newest stage measured: the one the sweep, paged and plot columns show.
    fn newest_stage(&self) -> String {
        self.stages().pop().unwrap_or_else(|| "stage ?".into())
    }

    fn shapes(&self) -> Vec<(usize, usize)> {
        let mut s: Vec<(usize, usize)> = self.rows.iter().map(|r| (r.batch, r.cache_len)).collect();
        s.sort_unstable();
        s.dedup();
        s
    }
}

impl DecodeRow {
    /// A run of a flashlab stage, not a baseline or the read floor.
    pub fn is_stage(&self) -> bool {
        matches!(self.kind.as_str(), "heuristic" | "splits" | "paged")
    }
}

/// The name of the read floor's rows.
pub const READ_FLOOR: &str = "streaming read";

fn row_for(kind: &str, name: &str, p: &DecodeProblem) -> DecodeRow {
    DecodeRow {
        kind: kind.into(),
        name: name.into(),
        batch: p.batch,
        heads: p.heads,
        kv_heads: p.kv_heads,
        seqlen_q: p.seqlen_q,
        cache_len: p.capacity(),
        head_dim: p.head_dim,
        dtype: p.dtype.name().into(),
        layout: p.layout.to_string(),
        splits: p.splits,
        status: "skipped".into(),
        reason: None,
        median_ms: None,
        gb_per_s: None,
        read_fraction: None,
        kv_bytes: p.kv_bytes(),
        check_passed: None,
        max_abs_error: None,
        error_bound: None,
    }
}

fn run_row(
    stage: &dyn DecodeStage,
    gpu: &Gpu,
    config: &DecodeBenchConfig,
    kind: &str,
    p: &DecodeProblem,
    read: f64,
) -> DecodeRow {
    let mut row = row_for(kind, &format!("stage {}", stage.info().number), p);
    let opts = DecodeOptions {
        seed: Some(config.seed),
        check: true,
        timing: Some(config.timing),
        cold_l2: true,
        // Measured once a shape ([`read_floor_row`]), not once a row.
        read_floor: false,
    };
    match run_decode(stage, gpu, p, &opts) {
        Ok((report, _)) => {
            let check = report.check.expect("checked");
            row.splits = Some(report.splits);
            row.check_passed = Some(check.passed);
            row.max_abs_error = Some(check.o_max_abs);
            row.error_bound = Some(check.o_bound);
            row.median_ms = report.timing.map(|t| t.median_ms);
            row.gb_per_s = report.gb_per_s;
            row.read_fraction = report.gb_per_s.map(|g| g / read);
            row.status = if check.passed { "ok" } else { "check-failed" }.into();
            if !check.passed {
                row.reason = Some(check.summary());
            }
        }
        Err(e) => {
            row.status = "error".into();
            row.reason = Some(e.to_string());
        }
    }
    row
}

/// The read floor of shape `p`: the streaming read of its K/V bytes, timed as the stages
/// are. It writes nothing to check; an error is recorded on the row.
fn read_floor_row(
    gpu: &Gpu,
    config: &DecodeBenchConfig,
    p: &DecodeProblem,
    read: f64,
) -> DecodeRow {
    let mut row = row_for("read", READ_FLOOR, p);
    match harness::sol::read_floor(gpu, config.timing, p.kv_bytes() as usize) {
        Ok(t) => {
            let g = harness::timing::gb_per_s(p.kv_bytes(), t.median_ms);
            row.status = "ok".into();
            row.median_ms = Some(t.median_ms);
            row.gb_per_s = Some(g);
            row.read_fraction = Some(g / read);
        }
        Err(e) => {
            row.status = "error".into();
            row.reason = Some(e.to_string());
        }
    }
    row
}

/// The decode stages of the stage table, in its order: those `--stages` names, or all. A
/// number that is not a decode stage is refused, naming the decode stages.
fn decode_stages(config: &DecodeBenchConfig) -> Result<Vec<&'static dyn DecodeStage>> {
    let all: Vec<&'static dyn DecodeStage> = STAGES
        .iter()
        .filter_map(|s| match s.workload() {
            Workload::Decode(d) => Some(d),
            _ => None,
        })
        .collect();
    let Some(wanted) = &config.stages else {
        return Ok(all);
    };
    let numbers: Vec<String> = all.iter().map(|s| s.info().number.to_string()).collect();
    for n in wanted {
        if !all.iter().any(|s| s.info().number == *n) {
            let what = if STAGES.iter().any(|s| s.info().number == *n) {
                format!("stage {n} is a prefill stage")
            } else {
                format!("there is no stage {n}")
            };
            bail!(
                "--stages {n}: {what}; --decode runs the decode stages {} (`flashlab list`)",
                numbers.join(", ")
            );
        }
    }
    Ok(all
        .into_iter()
        .filter(|s| wanted.contains(&s.info().number))
        .collect())
}

/// Runs the decode bench; the exit code is 1 when a stage row failed its check or errored.
pub fn run(config: &DecodeBenchConfig) -> Result<i32> {
    // The head dims every decode stage builds, so that each stage has a row at every shape.
    let decode_stages = decode_stages(config)?;
    let dims: Vec<usize> = decode_stages
        .first()
        .map_or(&[][..], |s| s.info().head_dims)
        .iter()
        .copied()
        .filter(|d| decode_stages.iter().all(|s| s.info().head_dims.contains(d)))
        .collect();
    if !dims.contains(&config.head_dim) {
        bail!(
            "--decode-dim {}: the decode stages build head dims {dims:?}",
            config.head_dim
        );
    }
    let shapes = shapes(config);
    if shapes.is_empty() {
        bail!(
            "no decode shape has at most {} cache tokens in all: raise --decode-max-tokens",
            config.max_tokens
        );
    }
    if config.dry_run {
        print!("{}", describe(config, &decode_stages, &shapes));
        return Ok(0);
    }
    let gpu = Gpu::open().map_err(|e| {
        anyhow!(
            "{e}\n(`flashlab bench --decode --dry-run` shows the runs it would make without a GPU)"
        )
    })?;
    let device = gpu.facts()?;
    let stages: Vec<&dyn DecodeStage> = decode_stages
        .into_iter()
        .filter(|s| s.info().gpu.runs_on(gpu.compute_capability))
        .collect();
    if stages.is_empty() {
        bail!("no decode stage runs on this GPU");
    }
    let python = config.baselines.then(probe);
    eprintln!("measuring the copy and streaming-read bandwidth...");
    let sol = harness::sol::measure(&gpu, config.timing)?;
    let read = sol.read_gb_per_s.ok_or_else(|| {
        anyhow!(
            "the read ceiling was not measured: {}",
            sol.ceilings_skipped.clone().unwrap_or_default()
        )
    })?;
    eprintln!("read {read:.0} GB/s, copy {:.0} GB/s", sol.copy_gb_per_s);

    let mut rows = Vec::new();
    for (i, stage) in stages.iter().enumerate() {
        let tiles = stage.tiles();
        // The newest stage gets the sweep and the paged runs; the ones before it, the
        // heuristic's run beside it (the table's columns).
        let newest = i + 1 == stages.len();
        for p in &shapes {
            eprintln!("stage {} {p}", stage.info().number);
            rows.push(run_row(*stage, &gpu, config, "heuristic", p, read));
            if !newest {
                continue;
            }
            for &splits in SPLIT_SWEEP
                .iter()
                .filter(|&&s| s <= tiles.key_tiles(p).min(MAX_SPLITS))
            {
                let q = DecodeProblem {
                    splits: Some(splits),
                    ..p.clone()
                };
                rows.push(run_row(*stage, &gpu, config, "splits", &q, read));
            }
            for &page_size in PAGE_SIZES {
                let q = DecodeProblem {
                    layout: KvLayout::Paged { page_size },
                    ..p.clone()
                };
                rows.push(run_row(*stage, &gpu, config, "paged", &q, read));
            }
        }
    }
    for p in &shapes {
        eprintln!("read floor {p}");
        rows.push(read_floor_row(&gpu, config, p, read));
    }
    let baselines = match python {
        None => serde_json::json!({"status": "not requested"}),
        Some(Err(why)) => serde_json::json!({"status": "skipped", "reason": why}),
        Some(Ok(python)) => match run_baselines(&python, &shapes, config.timing) {
            Ok((meta, mut found)) => {
                for r in &mut found {
                    r.read_fraction = r.gb_per_s.map(|g| g / read);
                }
                rows.extend(found);
                meta
            }
            Err(e) => serde_json::json!({"status": "failed", "reason": format!("{e:#}")}),
        },
    };
    let results = DecodeResults {
        header: DecodeHeader {
            kind: "decode".into(),
            tool: format!("flashlab {}", env!("CARGO_PKG_VERSION")),
            git_commit: GIT_COMMIT.to_string(),
            date_utc: utc_now(),
            command_line: std::env::args().collect::<Vec<_>>().join(" "),
            device,
            read_gb_per_s: read,
            copy_gb_per_s: sol.copy_gb_per_s,
            timing: config.timing.name().into(),
            cold_l2: true,
            l2_flush: Some(L2_FLUSH.into()),
            seed: config.seed,
            baselines,
            notes: Vec::new(),
        },
        rows,
    };
    std::fs::create_dir_all(&config.out)
        .with_context(|| format!("creating {}", config.out.display()))?;
    let json = config.out.join("decode.json");
    std::fs::write(&json, serde_json::to_string_pretty(&results)?)
        .with_context(|| format!("writing {}", json.display()))?;
    let table = decode_table(&results);
    std::fs::write(config.out.join("decode-table.md"), &table)?;
    println!("{table}");
    eprintln!("wrote {}", json.display());
    if config.plots {
        for path in write_plots(&results, &config.out)? {
            eprintln!("wrote {}", path.display());
        }
    }
    let failed = results
        .rows
        .iter()
        .filter(|r| r.is_stage() && matches!(r.status.as_str(), "check-failed" | "error"))
        .count();
    Ok(if failed > 0 {
        eprintln!("{failed} decode rows failed");
        1
    } else {
        0
    })
}

/// What a decode bench would run: each shape, and per decode stage its heuristic run,
/// then for the newest decode stage the split sweep (counts up to the shape's key tiles)
/// and one run per page size.
pub fn describe(
    config: &DecodeBenchConfig,
    decode_stages: &[&dyn DecodeStage],
    shapes: &[DecodeProblem],
) -> String {
    let mut out = format!(
        "decode bench: {} shapes of at most {} cache tokens in all; per decode stage and shape, the heuristic's split count, and for the newest decode stage the sweep {:?} (up to the shape's key tiles) and pages of {:?}; per shape, the streaming read of its K/V bytes{}\n",
        shapes.len(),
        config.max_tokens,
        SPLIT_SWEEP,
        PAGE_SIZES,
        if config.baselines {
            "; baselines: SDPA flash, cuDNN, FlashAttention-4 (bench/decode_baselines.py)"
        } else {
            ""
        }
    );
    for (i, stage) in decode_stages.iter().enumerate() {
        let tiles = stage.tiles();
        for p in shapes {
            let sweep = SPLIT_SWEEP
                .iter()
                .filter(|&&s| s <= tiles.key_tiles(p).min(MAX_SPLITS))
                .count();
            let runs = if i + 1 == decode_stages.len() {
                1 + sweep + PAGE_SIZES.len()
            } else {
                1
            };
            out.push_str(&format!(
                "  stage {} {p}: {runs} run{}\n",
                stage.info().number,
                if runs == 1 { "" } else { "s" }
            ));
        }
    }
    out
}

fn run_baselines(
    python: &Python,
    shapes: &[DecodeProblem],
    timing: TimingProtocol,
) -> Result<(serde_json::Value, Vec<DecodeRow>)> {
    // The baselines take one cache length a shape (`seqlen_k` in the script: every
    // sequence's length), as the sweep's shapes have.
    if let Some(p) = shapes
        .iter()
        .find(|p| p.seqlens_k.iter().any(|&l| l != p.capacity()))
    {
        bail!(
            "the decode baselines take one cache length for every sequence of a shape; this shape has lengths {:?}",
            p.seqlens_k
        );
    }
    let shapes_json: Vec<serde_json::Value> = shapes
        .iter()
        .map(|p| {
            serde_json::json!({"batch": p.batch, "heads": p.heads, "kv_heads": p.kv_heads,
                "seqlen_q": p.seqlen_q, "seqlen_k": p.capacity(), "head_dim": p.head_dim, "dtype": p.dtype.name()})
        })
        .collect();
    // The decode script imports baselines.py's helpers: both go side by side.
    let script = Script {
        files: &[
            ("decode_baselines.py", SCRIPT),
            ("baselines.py", super::baselines::SCRIPT),
        ],
        replacement: None,
        backends: None,
    };
    let (meta, rows) = run_script(
        python,
        &script,
        &serde_json::to_string(&shapes_json)?,
        shapes.len(),
        timing,
        |out| {
            let (meta, rows) = read_baseline_lines(out);
            let n = rows.len();
            ((meta, rows), n)
        },
    )?;
    Ok((meta, rows))
}

/// decode_baselines.py's JSON Lines: its meta line, then one row per (shape, backend).
/// Lines that are not JSON (a library printing to stdout) are passed on to stderr.
pub fn read_baseline_lines(reader: impl BufRead) -> (serde_json::Value, Vec<DecodeRow>) {
    let (mut meta, mut rows) = (serde_json::Value::Null, Vec::new());
    for line in reader.lines() {
        let Ok(line) = line else { break };
        let Ok(value) = serde_json::from_str::<serde_json::Value>(&line) else {
            if !line.trim().is_empty() {
                eprintln!("decode_baselines.py: {line}");
            }
            continue;
        };
        if value["kind"] == "meta" {
            meta = value;
            continue;
        }
        let mut row = row_for(
            "baseline",
            value["name"].as_str().unwrap_or("?"),
            &DecodeProblem::uniform(
                value["batch"].as_u64().unwrap_or(0) as usize,
                value["heads"].as_u64().unwrap_or(0) as usize,
                value["kv_heads"].as_u64().unwrap_or(1) as usize,
                value["seqlen_q"].as_u64().unwrap_or(0) as usize,
                value["seqlen_k"].as_u64().unwrap_or(0) as usize,
                value["head_dim"].as_u64().unwrap_or(0) as usize,
            ),
        );
        row.splits = None;
        row.status = value["status"].as_str().unwrap_or("error").into();
        row.reason = value["reason"].as_str().map(String::from);
        row.median_ms = value["median_ms"].as_f64();
        row.gb_per_s = value["gb_per_s"].as_f64();
        row.check_passed = value["check_passed"].as_bool();
        row.max_abs_error = value["max_abs_error"].as_f64();
        row.error_bound = value["error_bound"].as_f64();
        rows.push(row);
    }
    (meta, rows)
}

/// The header's `l2_flush` for runs that flush with `l2_flush_read`.
pub const L2_FLUSH: &str = "plain loads";

// ANCHOR: table
/// The decode results as markdown: per shape, each stage with the heuristic's splits, the
/// newest stage's best split count of the sweep and its paged cache at each page size,
/// the baselines, and each stage's ratio to the best baseline (the issue asks for every
/// ratio). Where the run measured each shape's read floor, its column and the newest
/// stage's ratio to it follow.
pub fn decode_table(results: &DecodeResults) -> String {
    let read = results.header.read_gb_per_s;
    let has_floor = results.rows.iter().any(|r| r.kind == "read");
    let stages = results.stages();
    let newest = results.newest_stage();
    let number = |name: &str| name.trim_start_matches("stage ").to_string();
    // Every row of a run has the bench's one head dim.
    let head_dim = results.rows.first().map_or(HEAD_DIM, |r| r.head_dim);
    // A run from before the flush read with plain loads flushed with evict-first reads,
    // which left the last launch's K/V in the L2 where they fit: its shapes smaller than
    // the L2 are marked, the caption says why.
    let old_flush = results.header.cold_l2 && results.header.l2_flush.is_none();
    let l2_bytes = results.header.device.l2_mib * 1024.0 * 1024.0;
    let flush = if old_flush {
        format!(
            "the L2 flushed before each launch by evict-first reads, which left the last launch's K/V in it where they fit: † marks the shapes whose K/V are smaller than the {:.0} MiB L2, where the stages and the read floor (not the baselines) are overstated (book: Results, \"A flush that did not flush\")",
            results.header.device.l2_mib
        )
    } else {
        "the L2 flushed before each launch".to_string()
    };
    let mut out = format!(
        "Decode, {} ({}), 32 query heads, 8 K/V heads, D{head_dim}, one query row, bf16; GB/s of unique K/V read (% of the {read:.0} GB/s streaming read), {flush}.\n\n",
        results.header.device.name, results.header.date_utc
    );
    // With one stage the sweep and paged columns need no stage named.
    let of_newest = if stages.len() > 1 {
        format!(" ({})", number(&newest))
    } else {
        String::new()
    };
    let mut head = vec!["batch".to_string(), "cache".into()];
    head.extend(stages.iter().map(|s| format!("{s} (heuristic)")));
    head.push(format!("best split count{of_newest}"));
    head.push(format!("paged 16 / 64 / 256{of_newest}"));
    head.extend(["SDPA flash".into(), "cuDNN".into(), "FA4".into()]);
    if has_floor {
        head.push("streaming read, same bytes".into());
    }
    head.extend(
        stages
            .iter()
            .map(|s| format!("{} / best baseline", number(s))),
    );
    if has_floor {
        head.push(format!("{} / same-bytes read", number(&newest)));
    }
    out.push_str(&format!("| {} |\n", head.join(" | ")));
    out.push_str(&format!("|{}\n", "---|".repeat(head.len())));
    let cell = |r: Option<&DecodeRow>| match r.and_then(|r| r.gb_per_s) {
        Some(g) => format!("{g:.0} ({:.0}%)", 100.0 * g / read),
        None => "–".into(),
    };
    let splits = |r: Option<&DecodeRow>| {
        r.and_then(|r| r.splits)
            .map_or("?".into(), |s| s.to_string())
    };
    for shape in results.shapes() {
        let heuristic =
            |stage: &str| results.best(shape, |r| r.kind == "heuristic" && r.name == stage);
        let best = results.best(shape, |r| r.kind == "splits" && r.name == newest);
        let baseline = |name: &str| results.best(shape, |r| r.kind == "baseline" && r.name == name);
        let best_baseline = results.best(shape, |r| r.kind == "baseline");
        let floor = results.best(shape, |r| r.kind == "read");
        let ratio = |a: Option<&DecodeRow>, b: Option<&DecodeRow>| match (
            a.and_then(|r| r.gb_per_s),
            b.and_then(|r| r.gb_per_s),
        ) {
            (Some(a), Some(b)) => format!("{:.2}", a / b),
            _ => "–".into(),
        };
        let paged: Vec<String> = PAGE_SIZES
            .iter()
            .map(|ps| {
                let layout = format!("paged {ps}");
                results
                    .best(shape, |r| {
                        r.kind == "paged" && r.name == newest && r.layout == layout
                    })
                    .and_then(|r| r.gb_per_s)
                    .map_or("–".into(), |g| format!("{g:.0}"))
            })
            .collect();
        let fits_l2 = old_flush
            && results
                .rows
                .iter()
                .any(|r| (r.batch, r.cache_len) == shape && r.kv_bytes < l2_bytes);
        let cache = format!("{}{}", shape.1, if fits_l2 { " †" } else { "" });
        let mut cells = vec![shape.0.to_string(), cache];
        cells.extend(
            stages
                .iter()
                .map(|s| format!("{} ×{}", cell(heuristic(s)), splits(heuristic(s)))),
        );
        cells.push(format!("{} ×{}", cell(best), splits(best)));
        cells.push(paged.join(" / "));
        cells.extend([
            cell(baseline("sdpa-flash")),
            cell(baseline("sdpa-cudnn")),
            cell(baseline("flash-attn-4")),
        ]);
        if has_floor {
            cells.push(cell(floor));
        }
        cells.extend(stages.iter().map(|s| ratio(heuristic(s), best_baseline)));
        if has_floor {
            cells.push(ratio(heuristic(&newest), floor));
        }
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    // A baseline skipped for the same reason at every shape is said once.
    let mut skipped: Vec<(String, String, Vec<String>)> = Vec::new();
    for r in results
        .rows
        .iter()
        .filter(|r| r.kind == "baseline" && r.status != "ok")
    {
        let reason = r.reason.clone().unwrap_or_else(|| r.status.clone());
        let at = format!("batch {} cache {}", r.batch, r.cache_len);
        match skipped
            .iter_mut()
            .find(|(name, why, _)| *name == r.name && *why == reason)
        {
            Some((_, _, shapes)) => shapes.push(at),
            None => skipped.push((r.name.clone(), reason, vec![at])),
        }
    }
    if !skipped.is_empty() {
        let all = results.shapes().len();
        let said: Vec<String> = skipped
            .iter()
            .map(|(name, why, shapes)| {
                let at = if shapes.len() == all {
                    "every shape".to_string()
                } else {
                    shapes.join(", ")
                };
                format!("{name} at {at}: {why}")
            })
            .collect();
        out.push_str("\nBaselines that did not run: ");
        out.push_str(&said.join("; "));
        out.push('\n');
    }
    out
}
// ANCHOR_END: table

/// What [`write_plots`] writes, in order.
pub const PLOT_FILES: [&str; 2] = ["decode-bandwidth.svg", "decode-splits.svg"];

const WIDTH: u32 = 740;
const HEIGHT: u32 = 440;
// plotters writes an SVG font size as the size asked for over 1.24: 15 is drawn at 12 px.
const TEXT: u32 = 15;

fn draw_err<E: std::error::Error + Send + Sync + 'static>(
    e: DrawingAreaErrorKind<E>,
) -> anyhow::Error {
    anyhow!("drawing: {e}")
}

/// decode-bandwidth.svg (GB/s against cache length, one color per batch size: the stage
/// with the heuristic's splits as solid lines, the best baseline dashed, the read floor
/// of the same bytes dotted where the run measured it, the large streaming read as the
/// roofline) and decode-splits.svg (GB/s against the split count per shape,
/// the heuristic's choice ringed), 740 px wide with 13 px text: readable at the book's
/// column width.
pub fn write_plots(results: &DecodeResults, dir: &Path) -> Result<Vec<PathBuf>> {
    let read = results.header.read_gb_per_s;
    let newest = results.newest_stage();
    let batches: Vec<usize> = {
        let mut b: Vec<usize> = results.rows.iter().map(|r| r.batch).collect();
        b.sort_unstable();
        b.dedup();
        b
    };
    let y_max = (read * 1.1 / 500.0).ceil() * 500.0;
    let lens: Vec<usize> = results.shapes().iter().map(|s| s.1).collect();
    let (x_lo, x_hi) = (
        (*lens.iter().min().unwrap_or(&1024) as f64).log2() - 0.3,
        (*lens.iter().max().unwrap_or(&131072) as f64).log2() + 0.3,
    );
    let bandwidth = dir.join(PLOT_FILES[0]);
    let axes = Axes {
        caption: format!("Decode, {newest}: GB/s of K/V read against cache length"),
        x: x_lo..x_hi,
        x_labels: ((x_hi - x_lo).round() as usize) + 1,
        x_unit: 1024.0,
        x_suffix: "k",
        x_desc: "keys per sequence",
        y_max,
    };
    gb_per_s_chart(&bandwidth, &axes, |chart| {
        chart
            .draw_series(LineSeries::new(
                [(x_lo, read), (x_hi, read)],
                BLACK.stroke_width(1),
            ))
            .map_err(draw_err)?
            .label(format!("streaming read {read:.0}"))
            .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], BLACK.stroke_width(1)));
        for (i, &batch) in batches.iter().enumerate() {
            let color = super::style::stage_color(i as u32 + 1);
            let points = |select: &dyn Fn(&DecodeRow) -> bool| -> Vec<(f64, f64)> {
                let mut pts: Vec<(f64, f64)> = results
                    .shapes()
                    .into_iter()
                    .filter(|s| s.0 == batch)
                    .filter_map(|s| {
                        results
                            .best(s, select)
                            .and_then(|r| r.gb_per_s)
                            .map(|g| ((s.1 as f64).log2(), g))
                    })
                    .collect();
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                pts
            };
            let stage = points(&|r| r.kind == "heuristic" && r.name == newest);
            chart
                .draw_series(LineSeries::new(stage.clone(), color.stroke_width(2)))
                .map_err(draw_err)?
                .label(format!("{newest}, batch {batch}"))
                .legend(move |(x, y)| {
                    PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2))
                });
            chart
                .draw_series(stage.iter().map(|&p| Circle::new(p, 3, color.filled())))
                .map_err(draw_err)?;
            let base = points(&|r| r.kind == "baseline");
            if !base.is_empty() {
                chart
                    .draw_series(DashedLineSeries::new(
                        base.clone(),
                        6,
                        4,
                        color.stroke_width(1),
                    ))
                    .map_err(draw_err)?
                    .label(format!("best baseline, batch {batch}"))
                    .legend(move |(x, y)| {
                        PathElement::new([(x, y), (x + 20, y)], color.stroke_width(1))
                    });
                chart
                    .draw_series(
                        base.iter()
                            .map(|&p| Cross::new(p, 4, color.stroke_width(1))),
                    )
                    .map_err(draw_err)?;
            }
            let floor = points(&|r| r.kind == "read");
            if !floor.is_empty() {
                let series = chart
                    .draw_series(DashedLineSeries::new(floor, 2, 4, color.stroke_width(2)))
                    .map_err(draw_err)?;
                // One legend entry for the dotted lines of every batch.
                if i == 0 {
                    series
                        .label("read of the same bytes (dotted)")
                        .legend(|(x, y)| {
                            PathElement::new([(x, y), (x + 20, y)], BLACK.stroke_width(2))
                        });
                }
            }
        }
        Ok(())
    })?;

    let splits_path = dir.join(PLOT_FILES[1]);
    let max_splits = results
        .rows
        .iter()
        .filter(|r| r.kind == "splits" && r.name == newest)
        .filter_map(|r| r.splits)
        .max()
        .unwrap_or(128) as f64;
    let axes = Axes {
        caption: format!(
            "Decode, {newest}: GB/s against the split count (ringed: the heuristic's)"
        ),
        x: -0.2..max_splits.log2() + 0.2,
        x_labels: (max_splits.log2() as usize) + 1,
        x_unit: 1.0,
        x_suffix: "",
        x_desc: "splits per sequence",
        y_max,
    };
    gb_per_s_chart(&splits_path, &axes, |chart| {
        let shapes = results
            .shapes()
            .into_iter()
            .filter(|s| s.0 == 1 || s.1 == 8192);
        for (i, shape) in shapes.enumerate() {
            let color = super::style::stage_color(i as u32 + 1);
            let mut pts: Vec<(f64, f64)> = results
                .ok()
                .filter(|r| {
                    r.kind == "splits" && r.name == newest && (r.batch, r.cache_len) == shape
                })
                .filter_map(|r| Some(((r.splits? as f64).log2(), r.gb_per_s?)))
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            chart
                .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
                .map_err(draw_err)?
                .label(format!("batch {}, {}k keys", shape.0, shape.1 / 1024))
                .legend(move |(x, y)| {
                    PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2))
                });
            chart
                .draw_series(pts.iter().map(|&p| Circle::new(p, 2, color.filled())))
                .map_err(draw_err)?;
            if let Some(h) = results.best(shape, |r| r.kind == "heuristic" && r.name == newest) {
                if let (Some(s), Some(g)) = (h.splits, h.gb_per_s) {
                    chart
                        .draw_series([Circle::new(
                            ((s as f64).log2(), g),
                            7,
                            color.stroke_width(2),
                        )])
                        .map_err(draw_err)?;
                }
            }
        }
        Ok(())
    })?;
    Ok(vec![bandwidth, splits_path])
}

/// The x axis of a decode chart: a log2 scale whose whole powers are labelled, divided by
/// `x_unit` and suffixed; the y axis is GB/s from 0 to `y_max`.
struct Axes {
    caption: String,
    x: std::ops::Range<f64>,
    x_labels: usize,
    x_unit: f64,
    x_suffix: &'static str,
    x_desc: &'static str,
    y_max: f64,
}

type GbPerSChart<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// Writes one decode chart to `path`: the canvas, the axes of `axes`, what `draw` adds,
/// then the legend in the lower right.
fn gb_per_s_chart(
    path: &Path,
    axes: &Axes,
    draw: impl FnOnce(&mut GbPerSChart<'_, '_>) -> Result<()>,
) -> Result<()> {
    let root = SVGBackend::new(path, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE).map_err(draw_err)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(&axes.caption, ("sans-serif", 19))
        .margin(10)
        .x_label_area_size(44)
        .y_label_area_size(60)
        .build_cartesian_2d(axes.x.clone(), 0.0..axes.y_max)
        .map_err(draw_err)?;
    chart
        .configure_mesh()
        .x_labels(axes.x_labels)
        .x_label_formatter(&|x| {
            if (x - x.round()).abs() < 1e-6 {
                format!(
                    "{}{}",
                    (2f64.powf(x.round()) / axes.x_unit) as u64,
                    axes.x_suffix
                )
            } else {
                String::new()
            }
        })
        .y_labels(8)
        .y_label_formatter(&|y| format!("{y:.0}"))
        .x_desc(axes.x_desc)
        .y_desc("GB/s of unique K/V read")
        .label_style(("sans-serif", TEXT))
        .light_line_style(RGBColor(238, 238, 238))
        .draw()
        .map_err(draw_err)?;
    draw(&mut chart)?;
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .label_font(("sans-serif", TEXT))
        .background_style(WHITE.mix(0.9))
        .border_style(RGBColor(200, 200, 200))
        .draw()
        .map_err(draw_err)?;
    root.present().map_err(draw_err)?;
    Ok(())
}
