//! `flashlab bench`: every stage of the table on a sweep of shapes, each row checked
//! against the oracle and timed, optionally with PyTorch's and FlashAttention's kernels
//! timed on the same shapes in the same run; results as JSON and CSV, plots and a
//! markdown table from them.
//!
//! The sweep itself (which shapes, which rows are skipped and why), the row and header
//! types, and the JSON/CSV formats are plain data and are tested without a GPU; only
//! [`run`] needs one.

pub mod baselines;
pub mod compare;
pub mod plots;

use crate::stages::STAGES;
use anyhow::{Context as _, Result, anyhow, bail};
use harness::run::{RunOptions, run_stage};
use harness::timing::TimingProtocol;
use harness::{DType, Gpu, Problem, Stage};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

/// The default sequence lengths of the sweep.
pub const DEFAULT_SEQLENS: [usize; 6] = [512, 1024, 2048, 4096, 8192, 16384];
/// The default head dimensions.
pub const DEFAULT_DIMS: [usize; 2] = [64, 128];
/// `--quick`: two lengths, one head dim, causal and not.
pub const QUICK_SEQLENS: [usize; 2] = [1024, 4096];
pub const QUICK_DIMS: [usize; 1] = [128];
/// The shape rule: batch · seqlen ≈ `DEFAULT_TOKENS` (batch at least 1), `DEFAULT_HEADS`
/// heads, so every shape gives the GPU about the same number of (query, head) rows.
pub const DEFAULT_TOKENS: usize = 8192;
pub const DEFAULT_HEADS: usize = 16;
/// Rows whose stage needs more fp32 workspace than this are skipped (stage 1's S matrix).
pub const DEFAULT_MAX_WORKSPACE_GIB: f64 = 2.0;
/// The input seed of every row unless `--seed` says otherwise: every stage sees the same
/// Q, K and V for a shape, and a run can be replayed.
pub const DEFAULT_SEED: u64 = 0x5eed_f1a5;
/// Version of the JSON layout below; bump it when a field changes meaning.
pub const SCHEMA: u32 = 1;

/// The git commit the binary was built from (`build.rs`), `-dirty` when the tree had
/// uncommitted changes, or `unknown` when built outside a repository.
pub const GIT_COMMIT: &str = env!("FLASHLAB_GIT_COMMIT");

/// How the sweep chooses batch and heads, in words (for `--help` and the JSON header).
pub fn shape_rule(tokens: usize, heads: usize) -> String {
    format!(
        "heads = {heads}, batch = max(1, {tokens} / seqlen): batch x heads x seqlen = {} query rows (twice that at seqlens above {tokens}), so short sequences still fill the GPU",
        tokens * heads
    )
}

/// How every row was timed, stages and baselines alike (for the JSON header).
pub fn timing_rule(protocol: TimingProtocol) -> String {
    format!(
        "CUDA events around each launch; {} ms of warm-up, then enough launches for about {} ms ({} to {}); the median; {} protocol: {}",
        harness::timing::WARMUP_MS,
        harness::timing::TARGET_MS,
        harness::timing::MIN_ITERS,
        harness::timing::MAX_ITERS,
        protocol,
        protocol.describe()
    )
}

/// The FLOP convention of every row, stages and baselines alike.
pub const FLOP_RULE: &str = "4 * batch * heads * head_dim * visible (query, key) pairs: seqlen^2 without a mask, seqlen * (seqlen + 1) / 2 causal";

/// One shape of the sweep. Queries and keys have the same length, so PyTorch's top-left
/// causal mask equals flashlab's bottom-right one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shape {
    pub batch: usize,
    pub heads: usize,
    pub seqlen: usize,
    pub head_dim: usize,
    pub causal: bool,
    pub dtype: String,
}

impl Shape {
    pub fn problem(&self) -> Result<Problem> {
        let dtype: DType = self.dtype.parse().map_err(anyhow::Error::msg)?;
        let mut p = Problem::new(self.batch, self.heads, self.seqlen, self.head_dim);
        p.causal = self.causal;
        p.dtype = dtype;
        Ok(p)
    }

    /// `s4096 d128 causal`, for progress lines.
    pub fn label(&self) -> String {
        format!(
            "b{} h{} s{} d{}{}",
            self.batch,
            self.heads,
            self.seqlen,
            self.head_dim,
            if self.causal { " causal" } else { "" }
        )
    }
}

/// What to sweep.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sweep {
    pub seqlens: Vec<usize>,
    pub dims: Vec<usize>,
    pub causal: Vec<bool>,
    pub dtype: String,
    pub tokens: usize,
    pub heads: usize,
}

impl Sweep {
    /// Batch for `seqlen` under the shape rule.
    pub fn batch_for(&self, seqlen: usize) -> usize {
        (self.tokens / seqlen.max(1)).max(1)
    }

    /// Every shape, head dim outermost, then causal, then seqlen (the plots' order).
    pub fn shapes(&self) -> Vec<Shape> {
        let mut shapes = Vec::new();
        for &head_dim in &self.dims {
            for &causal in &self.causal {
                for &seqlen in &self.seqlens {
                    shapes.push(Shape {
                        batch: self.batch_for(seqlen),
                        heads: self.heads,
                        seqlen,
                        head_dim,
                        causal,
                        dtype: self.dtype.clone(),
                    });
                }
            }
        }
        shapes
    }
}

/// Whether a row is run, and if not, why.
#[derive(Clone, Debug, PartialEq)]
pub enum Plan {
    Run,
    Skip(String),
}

/// Decides a stage row without a GPU: the stage's head dims and dtypes, and its workspace.
pub fn plan_row(stage: &dyn Stage, shape: &Shape, max_workspace_gib: f64) -> Plan {
    let problem = match shape.problem() {
        Ok(p) => p,
        Err(e) => return Plan::Skip(e.to_string()),
    };
    if let Err(e) = stage.info().validate(&problem) {
        return Plan::Skip(e.to_string());
    }
    let workspace = stage.scratch_elements(&problem) as f64 * 4.0 / (1u64 << 30) as f64;
    if workspace > max_workspace_gib {
        return Plan::Skip(format!(
            "needs {workspace:.1} GiB of fp32 workspace (stage 1's S matrix is 4·B·H·S² bytes), over --max-workspace-gib {max_workspace_gib}"
        ));
    }
    Plan::Run
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RowKind {
    Stage,
    Baseline,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Checked, passed, timed.
    Ok,
    /// Timed, but its output failed the check: recorded, never plotted.
    CheckFailed,
    /// Not run; `reason` says why.
    Skipped,
    /// Run, but it failed (launch error, out of memory); `reason` says how.
    Error,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::CheckFailed => "check-failed",
            Status::Skipped => "skipped",
            Status::Error => "error",
        }
    }
}

/// One row of results: a stage or a baseline on one shape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub kind: RowKind,
    /// `2-online-softmax` for a stage, `sdpa-flash` etc. for a baseline.
    pub name: String,
    #[serde(default)]
    pub stage: Option<u32>,
    pub batch: usize,
    pub heads: usize,
    pub seqlen: usize,
    pub head_dim: usize,
    pub causal: bool,
    pub dtype: String,
    pub status: Status,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub median_ms: Option<f64>,
    #[serde(default)]
    pub min_ms: Option<f64>,
    #[serde(default)]
    pub iterations: Option<usize>,
    /// FLOPs of the shape under [`FLOP_RULE`], in units of 1e9.
    #[serde(default)]
    pub gflop: f64,
    #[serde(default)]
    pub tflops: Option<f64>,
    /// TFLOPS as a percentage of the measured cuBLAS bf16 GEMM.
    #[serde(default)]
    pub sol_percent: Option<f64>,
    /// Largest |O - O_reference| over the checked rows.
    #[serde(default)]
    pub max_abs_error: Option<f64>,
    #[serde(default)]
    pub error_bound: Option<f64>,
    #[serde(default)]
    pub check_passed: Option<bool>,
}

impl Row {
    /// An empty row for `name` on `shape`, with the shape's FLOPs filled in.
    pub fn new(kind: RowKind, name: &str, stage: Option<u32>, shape: &Shape) -> Row {
        let gflop = shape.problem().map(|p| p.flops() / 1e9).unwrap_or(0.0);
        Row {
            kind,
            name: name.to_string(),
            stage,
            batch: shape.batch,
            heads: shape.heads,
            seqlen: shape.seqlen,
            head_dim: shape.head_dim,
            causal: shape.causal,
            dtype: shape.dtype.clone(),
            status: Status::Skipped,
            reason: None,
            median_ms: None,
            min_ms: None,
            iterations: None,
            gflop,
            tflops: None,
            sol_percent: None,
            max_abs_error: None,
            error_bound: None,
            check_passed: None,
        }
    }

    pub fn skipped(mut self, reason: impl Into<String>) -> Row {
        self.status = Status::Skipped;
        self.reason = Some(reason.into());
        self
    }

    pub fn shape(&self) -> Shape {
        Shape {
            batch: self.batch,
            heads: self.heads,
            seqlen: self.seqlen,
            head_dim: self.head_dim,
            causal: self.causal,
            dtype: self.dtype.clone(),
        }
    }

    /// Whether the row goes into plots and tables: timed and its check passed.
    pub fn plottable(&self) -> bool {
        self.status == Status::Ok && self.tflops.is_some_and(f64::is_finite)
    }

    /// Recomputes FLOPs and TFLOPS from the shape (one convention for every source) and
    /// the percentage of the measured GEMM speed of light.
    pub fn fill_derived(&mut self, gemm_tflops: Option<f64>) {
        if let Ok(p) = self.shape().problem() {
            self.gflop = p.flops() / 1e9;
        }
        if let Some(ms) = self.median_ms.filter(|ms| *ms > 0.0) {
            self.tflops = Some(self.gflop * 1e9 / (ms * 1e-3) / 1e12);
        }
        self.sol_percent = match (self.tflops, gemm_tflops) {
            (Some(t), Some(g)) if g > 0.0 => Some(100.0 * t / g),
            _ => None,
        };
    }
}

/// The GPU, as recorded in the header (mirrors `harness::gpu::DeviceFacts`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Device {
    pub name: String,
    pub compute_capability: String,
    pub multiprocessors: u32,
    pub memory_gib: f64,
    pub l2_mib: f64,
    pub sm_clock_mhz: u32,
    pub memory_clock_mhz: u32,
    pub driver_version: String,
}

impl From<harness::gpu::DeviceFacts> for Device {
    fn from(f: harness::gpu::DeviceFacts) -> Device {
        Device {
            name: f.name,
            compute_capability: f.compute_capability,
            multiprocessors: f.multiprocessors,
            memory_gib: f.memory_gib,
            l2_mib: f.l2_mib,
            sm_clock_mhz: f.sm_clock_mhz,
            memory_clock_mhz: f.memory_clock_mhz,
            driver_version: f.driver_version,
        }
    }
}

/// The practical speed of light measured once per bench run (as `flashlab info` does).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpeedOfLight {
    pub copy_gb_per_s: f64,
    pub gemm_tflops: Option<f64>,
    pub gemm_size: usize,
    #[serde(default)]
    pub gemm_skipped: Option<String>,
    /// The mma.sync ceiling (`flashlab info`), the one stages 3-5 can approach.
    #[serde(default)]
    pub mma_sync_tflops: Option<f64>,
    #[serde(default)]
    pub l2_to_smem_tb_per_s: Option<f64>,
}

/// What was swept and how rows were made.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepInfo {
    #[serde(flatten)]
    pub sweep: Sweep,
    pub stages: Vec<u32>,
    pub shape_rule: String,
    pub flop_rule: String,
    pub timing_rule: String,
    pub seed: u64,
    pub max_workspace_gib: f64,
}

/// Whether the baselines ran, and with what.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BaselineInfo {
    pub requested: bool,
    /// `ran`, `skipped` or `not requested`.
    pub status: String,
    #[serde(default)]
    pub reason: Option<String>,
    /// What the script reported: torch, CUDA, cuDNN and flash_attn versions, the device.
    #[serde(default)]
    pub environment: Option<serde_json::Value>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub schema: u32,
    pub tool: String,
    pub git_commit: String,
    pub date_utc: String,
    pub command_line: String,
    pub device: Device,
    pub speed_of_light: SpeedOfLight,
    pub sweep: SweepInfo,
    pub baselines: BaselineInfo,
    #[serde(default)]
    pub notes: Vec<String>,
}

/// A bench run: `bench.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BenchResults {
    pub header: Header,
    pub rows: Vec<Row>,
}

impl BenchResults {
    pub fn read(path: &Path) -> Result<BenchResults> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let results: BenchResults = serde_json::from_str(&text)
            .with_context(|| format!("{} is not a flashlab bench JSON", path.display()))?;
        if results.header.schema != SCHEMA {
            bail!(
                "{} has schema {}; this flashlab reads schema {SCHEMA}",
                path.display(),
                results.header.schema
            );
        }
        Ok(results)
    }

    pub fn to_json(&self) -> Result<String> {
        Ok(serde_json::to_string_pretty(self)? + "\n")
    }

    /// One line per row; the GPU and commit repeated on each, so rows of several runs
    /// can be concatenated and still say where they came from.
    pub fn to_csv(&self) -> String {
        let mut out = CSV_COLUMNS.join(",");
        out.push('\n');
        for r in &self.rows {
            let opt = |x: Option<f64>| x.map(|v| v.to_string()).unwrap_or_default();
            let fields = [
                match r.kind {
                    RowKind::Stage => "stage".to_string(),
                    RowKind::Baseline => "baseline".to_string(),
                },
                r.name.clone(),
                r.stage.map(|s| s.to_string()).unwrap_or_default(),
                r.batch.to_string(),
                r.heads.to_string(),
                r.seqlen.to_string(),
                r.head_dim.to_string(),
                r.causal.to_string(),
                r.dtype.clone(),
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
            let line: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
            out.push_str(&line.join(","));
            out.push('\n');
        }
        out
    }

    /// Writes `bench.json` and `bench.csv` into `dir`; returns their paths.
    pub fn write(&self, dir: &Path) -> Result<(PathBuf, PathBuf)> {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let (json, csv) = (dir.join("bench.json"), dir.join("bench.csv"));
        std::fs::write(&json, self.to_json()?)
            .with_context(|| format!("writing {}", json.display()))?;
        std::fs::write(&csv, self.to_csv())
            .with_context(|| format!("writing {}", csv.display()))?;
        Ok((json, csv))
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

/// RFC 4180 quoting: fields with commas, quotes or line breaks are quoted, quotes doubled.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Splits CSV text into records of fields (RFC 4180: quoted fields may hold commas,
/// doubled quotes and line breaks). Used to read `bench.csv` back in tests and tools.
pub fn parse_csv(text: &str) -> Result<Vec<Vec<String>>> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    let mut at_field_start = true;
    while let Some(c) = chars.next() {
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => quoted = false,
                _ => field.push(c),
            }
            continue;
        }
        match c {
            '"' if at_field_start => {
                quoted = true;
                at_field_start = false;
            }
            ',' => {
                record.push(std::mem::take(&mut field));
                at_field_start = true;
            }
            '\r' => {}
            '\n' => {
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
                at_field_start = true;
            }
            _ => {
                field.push(c);
                at_field_start = false;
            }
        }
    }
    if quoted {
        bail!("CSV ends inside a quoted field");
    }
    if !field.is_empty() || !record.is_empty() {
        record.push(field);
        records.push(record);
    }
    Ok(records)
}

/// Today's date and time in UTC, `2025-01-31T12:00:00Z`, from the system clock alone.
pub fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    format_utc(secs)
}

/// Seconds since 1970 as an ISO 8601 UTC timestamp (proleptic Gregorian calendar).
pub fn format_utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Days since 1970-01-01 to a civil date: count 400-year eras from 0000-03-01.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

/// Everything `flashlab bench` was asked, after defaults.
#[derive(Clone, Debug)]
pub struct BenchConfig {
    pub sweep: Sweep,
    /// Stage numbers; `None` means every stage of the table this GPU can run.
    pub stages: Option<Vec<u32>>,
    pub baselines: bool,
    pub out: PathBuf,
    pub plots: bool,
    pub seed: u64,
    pub max_workspace_gib: f64,
    pub dry_run: bool,
    /// How every row, the speed of light and the baselines are timed.
    pub timing: TimingProtocol,
}

/// The stages a bench runs: those named (each must exist), or the whole table.
pub fn select_stages(numbers: Option<&[u32]>) -> Result<Vec<&'static dyn Stage>> {
    match numbers {
        None => Ok(STAGES.to_vec()),
        Some(list) => {
            if list.is_empty() {
                bail!("--stages is empty; name at least one stage (see `flashlab list`)");
            }
            let mut out: Vec<&'static dyn Stage> = Vec::new();
            for &n in list {
                let s = crate::stages::find(n).map_err(anyhow::Error::msg)?;
                if !out.iter().any(|o| o.info().number == n) {
                    out.push(s);
                }
            }
            Ok(out)
        }
    }
}

/// The stage row name: `2-online-softmax`.
pub fn stage_name(stage: &dyn Stage) -> String {
    format!("{}-{}", stage.info().number, stage.info().slug)
}

/// Checks the sweep for values no stage could run, before any GPU work.
pub fn validate_sweep(sweep: &Sweep) -> Result<()> {
    if sweep.seqlens.is_empty() || sweep.dims.is_empty() || sweep.causal.is_empty() {
        bail!("the sweep is empty: give at least one seqlen, one head dim and one causal setting");
    }
    if sweep.tokens == 0 || sweep.heads == 0 {
        bail!("--tokens and --heads must be at least 1");
    }
    sweep.dtype.parse::<DType>().map_err(anyhow::Error::msg)?;
    for shape in sweep.shapes() {
        shape
            .problem()?
            .validate()
            .with_context(|| format!("shape {}", shape.label()))?;
    }
    Ok(())
}

/// Prints what a bench would run, without a GPU (`--dry-run`).
pub fn describe_plan(config: &BenchConfig) -> Result<String> {
    let stages = select_stages(config.stages.as_deref())?;
    let mut out = String::new();
    writeln!(
        out,
        "shape rule: {}",
        shape_rule(config.sweep.tokens, config.sweep.heads)
    )?;
    let (mut run, mut skip) = (0, 0);
    for shape in config.sweep.shapes() {
        for stage in &stages {
            match plan_row(*stage, &shape, config.max_workspace_gib) {
                Plan::Run => {
                    run += 1;
                    writeln!(out, "run   {:<20} {}", stage_name(*stage), shape.label())?;
                }
                Plan::Skip(why) => {
                    skip += 1;
                    writeln!(
                        out,
                        "skip  {:<20} {}: {why}",
                        stage_name(*stage),
                        shape.label()
                    )?;
                }
            }
        }
    }
    writeln!(
        out,
        "{run} stage rows to run, {skip} skipped; baselines {}",
        if config.baselines {
            format!(
                "on {} shapes if python3 with torch is found",
                config.sweep.shapes().len()
            )
        } else {
            "not requested".into()
        }
    )?;
    Ok(out)
}

/// Runs the bench: returns the process exit code (1 when a stage row failed its check or
/// errored; the files are written either way).
pub fn run(config: &BenchConfig) -> Result<i32> {
    validate_sweep(&config.sweep)?;
    if config.dry_run {
        print!("{}", describe_plan(config)?);
        return Ok(0);
    }
    let requested = select_stages(config.stages.as_deref())?;
    let gpu = Gpu::open().map_err(|e| {
        anyhow!("{e}\n(`flashlab bench --dry-run` shows the rows it would run without a GPU)")
    })?;
    let device: Device = gpu.facts()?.into();
    eprintln!(
        "bench on {} (sm_{}{}, {} SMs, driver {}), commit {GIT_COMMIT}",
        device.name,
        gpu.compute_capability.0,
        gpu.compute_capability.1,
        device.multiprocessors,
        device.driver_version
    );

    // Stages this GPU cannot run, or that carry no kernels, are left out with a note.
    let mut notes = Vec::new();
    let mut stages = Vec::new();
    for s in requested {
        let info = s.info();
        if let Some(reason) = info.kernels.not_compiled_reason() {
            notes.push(format!(
                "stage {} left out: kernels not compiled ({reason})",
                info.label()
            ));
        } else if let Err(e) = gpu.check_stage(info) {
            notes.push(format!("stage {} left out: {e}", info.label()));
        } else {
            stages.push(s);
        }
    }
    for n in &notes {
        eprintln!("{n}");
    }

    // Find python and torch before the long part, so a missing torch is said up front.
    let probe = if config.baselines {
        Some(baselines::probe())
    } else {
        None
    };
    if let Some(Err(why)) = &probe {
        eprintln!("baselines will be skipped: {why}");
    }

    eprintln!(
        "measuring the speed of light (copy bandwidth, cuBLAS bf16 GEMM, mma.sync, L2 to shared memory)..."
    );
    let sol = harness::sol::measure(&gpu, config.timing)?;
    let sol = SpeedOfLight {
        copy_gb_per_s: sol.copy_gb_per_s,
        gemm_tflops: sol.gemm_tflops,
        gemm_size: sol.gemm_size,
        gemm_skipped: sol.gemm_skipped,
        mma_sync_tflops: sol.mma_sync_tflops,
        l2_to_smem_tb_per_s: sol.l2_to_smem_tb_per_s,
    };
    match sol.gemm_tflops {
        Some(t) => eprintln!(
            "speed of light: copy {:.0} GB/s, GEMM {t:.0} TFLOPS",
            sol.copy_gb_per_s
        ),
        None => eprintln!(
            "speed of light: copy {:.0} GB/s; GEMM not measured, so no % of SOL",
            sol.copy_gb_per_s
        ),
    }

    let shapes = config.sweep.shapes();
    let mut rows = Vec::new();
    let total = shapes.len() * stages.len();
    let progress = Progress::new(total as u64, "stages");
    for shape in &shapes {
        for stage in &stages {
            let name = stage_name(*stage);
            progress.start(&format!("{name} {}", shape.label()));
            let row = Row::new(RowKind::Stage, &name, Some(stage.info().number), shape);
            let row = match plan_row(*stage, shape, config.max_workspace_gib) {
                Plan::Skip(why) => row.skipped(why),
                Plan::Run => run_row(*stage, &gpu, shape, config.seed, config.timing, row),
            };
            progress.finish_row(&row);
            rows.push(row);
        }
    }
    progress.done();

    let baseline_info = match probe {
        None => BaselineInfo {
            requested: false,
            status: "not requested".into(),
            ..Default::default()
        },
        Some(Err(why)) => BaselineInfo {
            requested: true,
            status: "skipped".into(),
            reason: Some(why),
            environment: None,
        },
        Some(Ok(python)) => match baselines::run(&python, &shapes, config.timing) {
            Ok((env, baseline_rows)) => {
                rows.extend(baseline_rows);
                BaselineInfo {
                    requested: true,
                    status: "ran".into(),
                    reason: None,
                    environment: Some(env),
                }
            }
            Err(e) => {
                eprintln!("baselines failed: {e:#}");
                BaselineInfo {
                    requested: true,
                    status: "skipped".into(),
                    reason: Some(format!("{e:#}")),
                    environment: None,
                }
            }
        },
    };
    if baseline_info.status == "skipped" {
        eprintln!(
            "baselines skipped: {}",
            baseline_info.reason.as_deref().unwrap_or("")
        );
    }

    for r in &mut rows {
        r.fill_derived(sol.gemm_tflops);
    }
    let results = BenchResults {
        header: Header {
            schema: SCHEMA,
            tool: format!("flashlab {}", env!("CARGO_PKG_VERSION")),
            git_commit: GIT_COMMIT.to_string(),
            date_utc: utc_now(),
            command_line: std::env::args().collect::<Vec<_>>().join(" "),
            device,
            speed_of_light: sol,
            sweep: SweepInfo {
                sweep: config.sweep.clone(),
                stages: stages.iter().map(|s| s.info().number).collect(),
                shape_rule: shape_rule(config.sweep.tokens, config.sweep.heads),
                flop_rule: FLOP_RULE.to_string(),
                timing_rule: timing_rule(config.timing),
                seed: config.seed,
                max_workspace_gib: config.max_workspace_gib,
            },
            baselines: baseline_info,
            notes,
        },
        rows,
    };
    let (json, csv) = results.write(&config.out)?;
    println!("{}", plots::results_table(&results));
    eprintln!("wrote {} and {}", json.display(), csv.display());
    if config.plots {
        for path in plots::write_all(&results, &config.out)? {
            eprintln!("wrote {}", path.display());
        }
    }
    let bad: Vec<&Row> = results
        .rows
        .iter()
        .filter(|r| {
            r.kind == RowKind::Stage && matches!(r.status, Status::CheckFailed | Status::Error)
        })
        .collect();
    if bad.is_empty() {
        return Ok(0);
    }
    eprintln!("{} stage rows failed:", bad.len());
    for r in bad {
        eprintln!(
            "  {} {}: {} {}",
            r.name,
            r.shape().label(),
            r.status.name(),
            r.reason.as_deref().unwrap_or("")
        );
    }
    Ok(1)
}

/// Checks and times one stage on one shape.
fn run_row(
    stage: &dyn Stage,
    gpu: &Gpu,
    shape: &Shape,
    seed: u64,
    timing: TimingProtocol,
    mut row: Row,
) -> Row {
    let problem = match shape.problem() {
        Ok(p) => p,
        Err(e) => return row.skipped(e.to_string()),
    };
    let opts = RunOptions {
        seed: Some(seed),
        check: true,
        timing: Some(timing),
        adjust_inputs: None,
    };
    match run_stage(stage, gpu, &problem, &opts) {
        Ok((report, _outputs)) => {
            if let Some(t) = &report.timing {
                row.median_ms = Some(t.median_ms);
                row.min_ms = Some(t.min_ms);
                row.iterations = Some(t.iterations);
            }
            row.tflops = report.tflops;
            let passed = report.check.as_ref().is_some_and(|c| c.passed);
            if let Some(c) = &report.check {
                row.max_abs_error = Some(c.o_max_abs);
                row.error_bound = Some(c.o_bound);
                row.check_passed = Some(c.passed);
                if !c.passed {
                    row.reason = Some(c.summary());
                }
            }
            row.status = if passed {
                Status::Ok
            } else {
                Status::CheckFailed
            };
        }
        Err(e) => {
            row.status = Status::Error;
            row.reason = Some(e.to_string());
        }
    }
    row
}

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
    let shape = r.shape().label();
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

impl crate::cli::BenchArgs {
    /// The bench configuration these flags ask for, defaults filled in.
    pub fn config(&self) -> BenchConfig {
        use crate::cli::CausalSweep;
        let seqlens = self.seqlens.clone().unwrap_or_else(|| {
            if self.quick {
                QUICK_SEQLENS.to_vec()
            } else {
                DEFAULT_SEQLENS.to_vec()
            }
        });
        let dims = self.dims.clone().unwrap_or_else(|| {
            if self.quick {
                QUICK_DIMS.to_vec()
            } else {
                DEFAULT_DIMS.to_vec()
            }
        });
        let causal = match self.causal {
            CausalSweep::Off => vec![false],
            CausalSweep::On => vec![true],
            CausalSweep::Both => vec![false, true],
        };
        BenchConfig {
            sweep: Sweep {
                seqlens,
                dims,
                causal,
                dtype: self.dtype.name().to_string(),
                tokens: self.tokens,
                heads: self.heads,
            },
            stages: self.stages.clone(),
            baselines: self.baselines,
            out: self.out.clone(),
            plots: self.plots,
            seed: self.seed.unwrap_or(DEFAULT_SEED),
            max_workspace_gib: self.max_workspace_gib,
            dry_run: self.dry_run,
            timing: self.timing.timing,
        }
    }
}
