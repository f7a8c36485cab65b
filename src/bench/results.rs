//! What a bench run records, `bench.json`: the header (where, when, what was swept, the
//! speed of light, whether the baselines ran) and one row per stage or baseline on one
//! shape; the JSON layout, reading and writing.

use super::sweep::{Pass, Sweep, shape_rule};
use anyhow::{Context as _, Result, anyhow, bail};
use harness::gpu::DeviceFacts;
use harness::sol::SpeedOfLight;
use harness::timing::TimingProtocol;
use harness::{DType, Problem};
use reference::Shape;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Version of the JSON layout below; bump it when a field changes meaning.
pub const SCHEMA: u32 = 1;

/// The git commit the binary was built from (`build.rs`), `-dirty` when the tree had
/// uncommitted changes, or `unknown` when built outside a repository.
pub const GIT_COMMIT: &str = env!("FLASHLAB_GIT_COMMIT");

/// The FLOP convention of every row, stages and baselines alike.
pub const FLOP_RULE: &str = "4 * batch * heads * head_dim * visible (query, key) pairs: seqlen^2 without a mask, seqlen * (seqlen + 1) / 2 causal";
/// The backward's count: five products to the forward's two, 2.5 times [`FLOP_RULE`].
pub const BACKWARD_FLOP_RULE: &str = "backward: 10 * batch * heads * head_dim * visible (query, key) pairs (five products: S again, dP, dV, dK, dQ; 2.5x the forward's 4)";

/// How every row was timed, stages and baselines alike (for the JSON header).
pub fn timing_rule(protocol: TimingProtocol) -> String {
    format!(
        "CUDA events around each launch; {} ms of warm-up, then enough launches for about {} ms ({} to {}); the median; {} protocol: {}",
        harness::timing::warmup_ms(),
        harness::timing::TARGET_MS,
        harness::timing::MIN_ITERS,
        harness::timing::MAX_ITERS,
        protocol,
        protocol.describe()
    )
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

    /// What a results table shows for a row without a time to show: `FAIL` (failed its
    /// check), `err` (failed to run), `-` (not run, or no time). The tables' legends say so.
    pub fn table_mark(self) -> &'static str {
        match self {
            Status::CheckFailed => "FAIL",
            Status::Error => "err",
            Status::Ok | Status::Skipped => "-",
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
    /// The shape, mask and dtype: a sweep's MHA shape with queries and keys of one length,
    /// written as `batch, heads, seqlen, head_dim, causal, dtype` ([`sweep_shape`]).
    #[serde(flatten, with = "sweep_shape")]
    pub problem: Problem,
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
    /// The stage's preparation alone, not in `median_ms`: the FP8 stages' quantization of
    /// bf16 Q, K and V into codes and scales (`PrefillStage::prepare`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prepare_ms: Option<f64>,
    /// The forward, or the backward alone (`flashlab bench --backward`), whose FLOPs are
    /// 2.5 times the forward's. Absent in a forward row.
    #[serde(default, skip_serializing_if = "Pass::is_forward")]
    pub pass: Pass,
}

impl Row {
    /// An empty row for `name` on `problem`, with its FLOPs filled in.
    pub fn new(kind: RowKind, name: &str, stage: Option<u32>, problem: &Problem) -> Row {
        Row {
            kind,
            name: name.to_string(),
            stage,
            problem: *problem,
            status: Status::Skipped,
            reason: None,
            median_ms: None,
            min_ms: None,
            iterations: None,
            gflop: problem.flops() / 1e9,
            tflops: None,
            sol_percent: None,
            max_abs_error: None,
            error_bound: None,
            check_passed: None,
            prepare_ms: None,
            pass: Pass::Forward,
        }
    }

    pub fn skipped(mut self, reason: impl Into<String>) -> Row {
        self.status = Status::Skipped;
        self.reason = Some(reason.into());
        self
    }

    /// Whether the row goes into plots and tables: timed and its check passed.
    pub fn plottable(&self) -> bool {
        self.status == Status::Ok && self.tflops.is_some_and(f64::is_finite)
    }

    /// Recomputes FLOPs and TFLOPS from the shape (one convention for every source) and
    /// the percentage of the measured GEMM speed of light.
    /// The row for the backward pass of the same shape: its FLOPs are the backward's.
    pub fn backward(mut self) -> Row {
        self.pass = Pass::Backward;
        self.gflop = self.pass.flops(&self.problem) / 1e9;
        self
    }

    pub fn fill_derived(&mut self, gemm_tflops: Option<f64>) {
        self.gflop = self.pass.flops(&self.problem) / 1e9;
        if let Some(ms) = self.median_ms.filter(|ms| *ms > 0.0) {
            self.tflops = Some(self.gflop * 1e9 / (ms * 1e-3) / 1e12);
        }
        self.sol_percent = match (self.tflops, gemm_tflops) {
            (Some(t), Some(g)) if g > 0.0 => Some(100.0 * t / g),
            _ => None,
        };
    }

    /// Rows in column and legend order: stages by number, then baselines by name.
    pub fn order_key(&self) -> (u8, u32, String) {
        match self.kind {
            RowKind::Stage => (0, self.stage.unwrap_or(0), self.name.clone()),
            RowKind::Baseline => (1, 0, self.name.clone()),
        }
    }
}

/// A sweep shape as bench rows and `bench/baselines.py` spell it: one `seqlen` for
/// queries and keys (so PyTorch's top-left causal mask is flashlab's bottom-right one)
/// and one head count for Q and K/V.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SweepShapeFields {
    pub batch: usize,
    pub heads: usize,
    pub seqlen: usize,
    pub head_dim: usize,
    pub causal: bool,
    pub dtype: DType,
}

impl TryFrom<&Problem> for SweepShapeFields {
    type Error = anyhow::Error;
    fn try_from(p: &Problem) -> Result<SweepShapeFields> {
        let s = &p.shape;
        if s.kv_heads != s.heads || s.seqlen_q != s.seqlen_k || p.scale.is_some() {
            return Err(anyhow!(
                "{p}{}: the bench records only MHA shapes with queries and keys of one length and the default softmax scale",
                p.scale.map(|x| format!(" scale {x}")).unwrap_or_default()
            ));
        }
        Ok(SweepShapeFields {
            batch: s.batch,
            heads: s.heads,
            seqlen: s.seqlen_q,
            head_dim: s.head_dim,
            causal: p.causal,
            dtype: p.dtype,
        })
    }
}

impl From<SweepShapeFields> for Problem {
    fn from(f: SweepShapeFields) -> Problem {
        Problem {
            shape: Shape {
                batch: f.batch,
                heads: f.heads,
                kv_heads: f.heads,
                seqlen_q: f.seqlen,
                seqlen_k: f.seqlen,
                head_dim: f.head_dim,
            },
            causal: f.causal,
            dtype: f.dtype,
            scale: None,
        }
    }
}

/// `#[serde(with)]` for a row's problem, through [`SweepShapeFields`].
pub mod sweep_shape {
    use super::SweepShapeFields;
    use harness::Problem;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(p: &Problem, serializer: S) -> Result<S::Ok, S::Error> {
        SweepShapeFields::try_from(p)
            .map_err(serde::ser::Error::custom)?
            .serialize(serializer)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Problem, D::Error> {
        SweepShapeFields::deserialize(deserializer).map(Problem::from)
    }
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

impl SweepInfo {
    pub fn new(
        sweep: &Sweep,
        stages: Vec<u32>,
        timing: TimingProtocol,
        seed: u64,
        max_workspace_gib: f64,
        pass: Pass,
    ) -> SweepInfo {
        SweepInfo {
            sweep: sweep.clone(),
            stages,
            shape_rule: shape_rule(sweep.tokens, sweep.heads, &sweep.seqlens),
            flop_rule: match pass {
                Pass::Forward => FLOP_RULE,
                Pass::Backward => BACKWARD_FLOP_RULE,
            }
            .to_string(),
            timing_rule: timing_rule(timing),
            seed,
            max_workspace_gib,
        }
    }
}

/// Whether the baselines ran. In the JSON: `requested`, `status` (`ran`, `skipped` or
/// `not requested`), `reason` and `environment`, as [`BaselinesRecord`] spells them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(into = "BaselinesRecord", try_from = "BaselinesRecord")]
pub enum Baselines {
    NotRequested,
    /// With what the script reported: torch, CUDA, cuDNN and flash_attn versions, the
    /// device.
    Ran {
        environment: serde_json::Value,
    },
    /// Requested but not run (no python with torch), or the script failed: why.
    Skipped {
        reason: String,
    },
}

/// [`Baselines`] as the JSON writes it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BaselinesRecord {
    pub requested: bool,
    pub status: String,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub environment: Option<serde_json::Value>,
}

impl From<Baselines> for BaselinesRecord {
    fn from(b: Baselines) -> BaselinesRecord {
        let record = |status: &str, reason, environment| BaselinesRecord {
            requested: !matches!(b, Baselines::NotRequested),
            status: status.to_string(),
            reason,
            environment,
        };
        match &b {
            Baselines::NotRequested => record("not requested", None, None),
            Baselines::Ran { environment } => record("ran", None, Some(environment.clone())),
            Baselines::Skipped { reason } => record("skipped", Some(reason.clone()), None),
        }
    }
}

impl TryFrom<BaselinesRecord> for Baselines {
    type Error = String;
    fn try_from(r: BaselinesRecord) -> Result<Baselines, String> {
        match r.status.as_str() {
            "not requested" => Ok(Baselines::NotRequested),
            "ran" => Ok(Baselines::Ran {
                environment: r.environment.unwrap_or_default(),
            }),
            "skipped" => Ok(Baselines::Skipped {
                reason: r.reason.unwrap_or_default(),
            }),
            other => Err(format!(
                "baselines status `{other}` is not one flashlab writes: ran, skipped or not requested"
            )),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub schema: u32,
    pub tool: String,
    pub git_commit: String,
    pub date_utc: String,
    pub command_line: String,
    pub device: DeviceFacts,
    pub speed_of_light: SpeedOfLight,
    pub sweep: SweepInfo,
    pub baselines: Baselines,
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

/// `time` in UTC to the second, as the header's `date_utc`: `2025-01-31T12:00:00Z`.
pub fn format_utc(time: SystemTime) -> String {
    humantime::format_rfc3339_seconds(time).to_string()
}

/// Now, as [`format_utc`] writes it.
pub fn utc_now() -> String {
    format_utc(SystemTime::now())
}
