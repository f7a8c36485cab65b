//! The command line, defined once: clap derives parsing, `--help` and the error messages
//! from these types. The CLI knows the bench (its configuration and defaults, in
//! [`crate::bench`]) and turns its flags into it; the bench knows nothing of the CLI.

use crate::bench::decode::DecodeBenchConfig;
use crate::bench::{self, BenchConfig, Sweep};
use clap::{Args, Parser, Subcommand};
use harness::timing::TimingProtocol;
use harness::{DType, Problem};
use reference::Shape;
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "flashlab",
    version,
    about = "FlashAttention one kernel at a time: run, check and time each stage",
    after_help = "Exit status: 0 when every check passed, 1 when a check failed, 2 on an error (bad input, no GPU or driver, kernels not compiled)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// List the stages: number, name, idea, GPUs, head dims, dtypes.
    List {
        /// Print the table as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Check stage N against the CPU oracle, then time it.
    Stage(StageArgs),
    /// The GPU, and its practical speed of light (copy bandwidth, cuBLAS bf16 GEMM).
    Info {
        /// Print the facts and the speed of light as JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        timing: TimingArgs,
    },
    /// Registers, shared memory, stack and spills per kernel, from the ptxas report.
    Resources {
        /// Only this stage (default: all).
        stage: Option<u32>,
        /// Only this architecture, e.g. sm_90a (default: all compiled).
        #[arg(long)]
        arch: Option<String>,
        /// Print the rows as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Check and time every stage on a sweep of shapes; JSON and CSV (and plots).
    #[command(long_about = BENCH_ABOUT)]
    Bench(BenchArgs),
    /// Plots and the results table from a bench.json (or a decode.json); with --book,
    /// everything the book draws from the runs of record.
    Plots {
        /// The bench.json (or decode.json) to plot.
        #[arg(long, value_name = "FILE", default_value = "bench/out/bench.json")]
        from: PathBuf,
        /// Where to write tflops-d*.svg, sol-percent.svg, speedups.svg, results-table.md.
        #[arg(long, value_name = "DIR", default_value = "bench/out")]
        out: PathBuf,
        /// Draw what bench/records/book.txt lists into book/src/generated (run from the
        /// repository root), instead of --from into --out.
        #[arg(long, conflicts_with_all = ["from", "out"])]
        book: bool,
    },
    /// Two stages side by side on one shape and seed: time, TFLOPS, error, resources.
    Compare(CompareArgs),
    /// What FP8 costs in accuracy: O's error against exact attention for the bf16 math and
    /// for FP8 (E4M3) with per-tensor, per-head or per-block scales and incoherent
    /// processing, on normal and outlier inputs (emulated on the CPU; `--stages 19,20,21`
    /// also measures those stages' outputs on the GPU; `--accumulator-bits 14` models the FP8
    /// tensor core's accumulator instead).
    Accuracy(crate::accuracy::AccuracyArgs),
    /// Stage N's measured timeline: when each warpgroup's phases ran, as an SVG Gantt chart.
    #[command(long_about = TIMELINE_ABOUT)]
    Timeline(TimelineArgs),
    /// A kernel's main loop as ptxas scheduled it: its phases and their static cycles.
    #[command(long_about = SCHEDULE_ABOUT)]
    Schedule(crate::schedule::ScheduleArgs),
    /// Write stage N's embedded fatbin to a file (for cuobjdump; used by sass.sh).
    #[command(hide = true)]
    DumpFatbin {
        stage: u32,
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
    },
}

const BENCH_ABOUT: &str = "Check and time every stage on a sweep of shapes; JSON and CSV (and plots).

Shapes: seqlen x head dim x causal, bf16, queries and keys of equal length. Batch and heads follow one rule, recorded in the JSON: heads = --heads (16), batch = max(1, --tokens / seqlen) with --tokens 8192, so batch x heads x seqlen = 131072 query rows for every seqlen up to 8192 (262144 at 16384) and short sequences still fill the GPU.

Every stage row is checked against the CPU oracle (same seed for every stage) and timed with CUDA events (median; --timing says how the launches are queued); a row that fails its check is recorded as check-failed and not plotted. Rows the stage cannot run are recorded as skipped with the reason (head dim, dtype, or a workspace over --max-workspace-gib: stage 1's S matrix is 4*B*H*S^2 bytes, so it stops after seqlen 4096). The speed of light (cuBLAS bf16 GEMM, copy bandwidth) is measured once per run and every row gets its percentage.

--baselines runs bench/baselines.py (embedded in this binary) with python3 (or $FLASHLAB_PYTHON) when it imports torch: PyTorch SDPA's flash, cuDNN and memory-efficient kernels, and flash_attn's when installed, on the same shapes and under the same --timing protocol; without torch the baselines are skipped and the JSON says why.

Writes DIR/bench.json and DIR/bench.csv (with --plots also the SVGs and results-table.md). Exit status 1 when a stage row failed its check or errored.";

const SCHEDULE_ABOUT: &str = "A kernel's main loop as ptxas scheduled it, read from its SASS (cuobjdump -sass; no GPU needed).

Every instruction carries control bits ptxas wrote: how many cycles the warp waits before its next instruction (its stall count), and the scoreboards that hold it for results of variable latency. This reads them, finds the kernel's loops, takes the one with the tensor-core instructions, and follows a way around it: the way of fewest static cycles (no mask, no skipped work taken, no mbarrier wait retried), or with --profile the way the warps executed. The way is cut into phases at each synchronization (named barriers, wgmma fences and waits, mbarrier waits), and each phase's static cycles are the sum of its stall counts: the fewest cycles one warp takes to issue it when no scoreboard or barrier holds it. Nsight Compute counts a warp held by a stall count as stalled on `wait`.

With --profile (a Nsight Compute source page of the same binary, `ncu --import R --page source --csv --print-source sass`) each phase also gets the warp samples on its instructions, and a table shows the `wait` samples on the instruction after each stall count: the check that the stall counts are what holds the warps there.

The control field's layout is not documented by NVIDIA; it is the one measured on Volta by Jia et al. (2018), checked here against every stage's SASS and against the profiles of record (book: Tools, \"The schedule ptxas wrote\").";

const TIMELINE_ABOUT: &str = "Stage N's measured timeline: when each warpgroup's phases ran, as an SVG Gantt chart.

Runs the stage's timed kernel, then its timeline kernel (the same source built to record, timeline.cuh) on the same problem and inputs: lane 0 of each warpgroup of the first --blocks blocks records when each phase of each iteration started and ended (wait empty and load for a producer; wait full, QKᵀ and P·V from issue to completion, softmax, sync and the epilogue for a consumer). The timeline run is checked against the CPU oracle like any run, both are timed as `flashlab stage` times (--timing), and the difference is printed as the instrumentation's overhead. Then a summary per role and phase, and the chart: one lane per warpgroup, the products on thin rows above it, hover text on every bar, --tiles (or --all) choosing the part of the run drawn.

A backward stage (23) runs the forward it builds on first, untimed, then its three kernels, of which the main one records: its load warp (wait empty, load), its dQ writer warp (sync, dQ reduce), and its two MMA warpgroups, a step (a query block) at a time (wait full; Sᵀ/dPᵀ and dV/dK/dQ from issue to completion; Pᵀ recomputed; dSᵀ formed; the syncs; dQ's store, under dK at head dim 128; dK and dV staged in shared memory and stored as the epilogue). Its check is dQ, dK and dV against the f64 backward, and its times those of the three kernels.

Stages with timeline kernels are marked in the stage table (StageInfo::timeline); they are built for bf16 and head dims 64 and 128. Exit status 1 when the check failed (the chart is still written).";

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CausalSweep {
    Off,
    On,
    Both,
}

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Stages to run, e.g. 3,4,5 (default: every stage in the table this GPU can run; with
    /// --decode, every decode stage, the last one named getting the split sweep).
    #[arg(long, value_delimiter = ',', value_name = "N,...")]
    pub stages: Option<Vec<u32>>,
    /// Sequence lengths (default 512,1024,2048,4096,8192,16384; --quick: 1024,4096).
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "S,...",
        conflicts_with = "decode"
    )]
    pub seqlens: Option<Vec<usize>>,
    /// Head dims (default 64,128; --quick: 128).
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "D,...",
        conflicts_with = "decode"
    )]
    pub dims: Option<Vec<usize>>,
    /// Causal mask: off, on or both.
    #[arg(long, value_enum, default_value = "both", conflicts_with = "decode")]
    pub causal: CausalSweep,
    /// A small sweep: seqlens 1024,4096 and head dim 128 (flags given explicitly win).
    #[arg(long, conflicts_with = "decode")]
    pub quick: bool,
    /// Also time PyTorch SDPA (flash, cuDNN, efficient) and flash_attn on the same shapes.
    #[arg(long)]
    pub baselines: bool,
    /// Output folder for bench.json and bench.csv.
    #[arg(long, value_name = "DIR", default_value = "bench/out")]
    pub out: PathBuf,
    /// Also write the plots and results-table.md into the output folder.
    #[arg(long)]
    pub plots: bool,
    /// bf16 or f16 (the decode bench is bf16).
    #[arg(long, default_value = "bf16", conflicts_with = "decode")]
    pub dtype: DType,
    /// Shape rule: batch = max(1, TOKENS / seqlen).
    #[arg(long, default_value_t = bench::DEFAULT_TOKENS, conflicts_with = "decode")]
    pub tokens: usize,
    /// Shape rule: query heads (K/V heads are the same: MHA).
    #[arg(long, default_value_t = bench::DEFAULT_HEADS, conflicts_with = "decode")]
    pub heads: usize,
    /// Skip rows whose stage needs more fp32 workspace than this (stage 1's S matrix).
    #[arg(
        long,
        default_value_t = bench::DEFAULT_MAX_WORKSPACE_GIB,
        value_name = "GIB",
        conflicts_with = "decode"
    )]
    pub max_workspace_gib: f64,
    /// Input seed of every row (default: a fixed one, so runs are repeatable).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Print the rows the bench would run and skip, then stop (no GPU needed).
    #[arg(long)]
    pub dry_run: bool,
    /// Bench the decode stages instead: 32 query heads sharing 8 K/V heads of 128, one
    /// query row, each shape with the split heuristic, a sweep of split counts and each
    /// page size, as GB/s of K/V read against the streaming-read bandwidth (decode.json,
    /// decode-table.md; with --plots decode-bandwidth.svg and decode-splits.svg).
    #[arg(long)]
    pub decode: bool,
    /// Bench the backward stages instead: dQ, dK and dV from dO, each row's forward run
    /// first by the stage it builds on and not timed; TFLOPS with the backward's count (2.5x
    /// the forward's), and with --baselines the baselines' backward on the same shapes.
    #[arg(long, conflicts_with = "decode")]
    pub backward: bool,
    /// --decode: batch sizes.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "B,...",
        default_value = "1,8,32",
        requires = "decode"
    )]
    pub decode_batches: Vec<usize>,
    /// --decode: keys per sequence.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "N,...",
        default_value = "2048,8192,32768,131072",
        requires = "decode"
    )]
    pub decode_cache_lens: Vec<usize>,
    /// --decode: leave out shapes with more cache tokens than this in all.
    #[arg(long, value_name = "TOKENS", default_value_t = bench::decode::DEFAULT_MAX_TOKENS, requires = "decode")]
    pub decode_max_tokens: usize,
    /// --decode: the head dim of every shape (64, 128 or 256).
    #[arg(long, value_name = "D", default_value_t = bench::decode::HEAD_DIM, requires = "decode")]
    pub decode_dim: usize,
    #[command(flatten)]
    pub timing: TimingArgs,
}

impl BenchArgs {
    /// The bench configuration these flags ask for, defaults filled in.
    pub fn config(&self) -> BenchConfig {
        let seqlens = self.seqlens.clone().unwrap_or_else(|| {
            if self.quick {
                bench::QUICK_SEQLENS.to_vec()
            } else {
                bench::DEFAULT_SEQLENS.to_vec()
            }
        });
        let dims = self.dims.clone().unwrap_or_else(|| {
            if self.quick {
                bench::QUICK_DIMS.to_vec()
            } else {
                bench::DEFAULT_DIMS.to_vec()
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
                dtype: self.dtype,
                tokens: self.tokens,
                heads: self.heads,
            },
            stages: self.stages.clone(),
            baselines: self.baselines,
            out: self.out.clone(),
            plots: self.plots,
            seed: self.seed.unwrap_or(bench::DEFAULT_SEED),
            max_workspace_gib: self.max_workspace_gib,
            dry_run: self.dry_run,
            timing: self.timing.timing,
            pass: if self.backward {
                bench::Pass::Backward
            } else {
                bench::Pass::Forward
            },
        }
    }

    /// `--decode`'s configuration, defaults filled in.
    pub fn decode_config(&self) -> DecodeBenchConfig {
        DecodeBenchConfig {
            stages: self.stages.clone(),
            batches: self.decode_batches.clone(),
            cache_lens: self.decode_cache_lens.clone(),
            max_tokens: self.decode_max_tokens,
            head_dim: self.decode_dim,
            baselines: self.baselines,
            plots: self.plots,
            out: self.out.clone(),
            timing: self.timing.timing,
            seed: self.seed.unwrap_or(bench::DEFAULT_SEED),
            dry_run: self.dry_run,
        }
    }
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// The first stage (the "before").
    pub a: u32,
    /// The second stage (the "after").
    pub b: u32,
    #[command(flatten)]
    pub shape: ShapeArgs,
    /// Input seed of both runs (default: the bench's fixed seed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Print the comparison as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub timing: TimingArgs,
}

#[derive(Args, Debug)]
pub struct StageArgs {
    /// The stage number (see `flashlab list`).
    pub number: u32,
    #[command(flatten)]
    pub shape: ShapeArgs,
    /// Input seed; by default a fresh one each run (printed, so a failure can be replayed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Skip the comparison with the oracle.
    #[arg(long)]
    pub no_check: bool,
    /// Skip timing.
    #[arg(long)]
    pub no_time: bool,
    #[command(flatten)]
    pub timing: TimingArgs,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Write the run's tensors here as .npy, with a README.md on what each holds and how to
    /// replay the run in numpy: q, k, v, o (float32, BSHD) and lse (float32, [batch, heads,
    /// seqlen_q]); for a decode stage, k and v are the cache as the kernel saw it, with the
    /// lengths (seqlens_k) and a paged cache's block table beside them; for a backward
    /// stage, also d_o and the gradients dq, dk, dv.
    #[arg(long, value_name = "DIR")]
    pub save: Option<PathBuf>,
    #[command(flatten)]
    pub decode: DecodeArgs,
    /// Backward stages: add dQ's shares in a fixed order (key block by key block), so the
    /// same inputs give the same bits on every run; by default they land in whatever order
    /// the blocks reach them.
    #[arg(long)]
    pub deterministic: bool,
    /// FP8 stages: one scale per (batch, head) of Q and per (batch, K/V head) of K and V
    /// (FlashAttention-3's descale factors), or one per tensor.
    #[arg(long, value_enum, default_value_t = Fp8Scales::Head)]
    pub fp8_scales: Fp8Scales,
}

/// `--fp8-scales`: how finely the FP8 stages' quantization scales their inputs.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fp8Scales {
    /// One scale per (batch, head).
    #[default]
    Head,
    /// One scale for each of Q, K and V.
    Tensor,
}

impl Fp8Scales {
    pub fn granularity(self) -> reference::fp8_attention::Granularity {
        use reference::fp8_attention::Granularity;
        match self {
            Fp8Scales::Head => Granularity::PerHead,
            Fp8Scales::Tensor => Granularity::PerTensor,
        }
    }
}

/// What a decode stage (`flashlab list` marks them) takes besides the shape: there the
/// query length is --seqlen-q (default 1) and the cache length --seqlen-k or --seqlen.
#[derive(Args, Debug, Clone, Default)]
pub struct DecodeArgs {
    /// Decode stages: one cache length per sequence, e.g. 1000,4097,131073 (the batch is
    /// their number; default: --seqlen-k, else --seqlen, for every sequence).
    #[arg(long, value_delimiter = ',', value_name = "N,...")]
    pub cache_lens: Option<Vec<usize>>,
    /// Decode stages: a paged cache, pages of this many tokens (a power of two, at least
    /// 16), handed out in a shuffled order; default: a contiguous cache.
    #[arg(long, value_name = "TOKENS")]
    pub page_size: Option<usize>,
    /// Decode stages: split each sequence's keys across this many blocks (default: the
    /// split heuristic's choice for this GPU).
    #[arg(long, value_name = "N")]
    pub splits: Option<usize>,
}

impl DecodeArgs {
    pub fn given(&self) -> bool {
        self.cache_lens.is_some() || self.page_size.is_some() || self.splits.is_some()
    }

    /// The decode problem of `shape` and these flags.
    pub fn problem(&self, shape: &ShapeArgs) -> Result<harness::DecodeProblem, String> {
        let seqlens_k = match &self.cache_lens {
            Some(lens) => {
                if shape.batch != 1 && shape.batch != lens.len() {
                    return Err(format!(
                        "--batch {} with {} --cache-lens: give one cache length per sequence (the batch is their number)",
                        shape.batch,
                        lens.len()
                    ));
                }
                lens.clone()
            }
            None => vec![shape.seqlen_k.unwrap_or(shape.seqlen); shape.batch],
        };
        Ok(harness::DecodeProblem {
            batch: seqlens_k.len(),
            heads: shape.heads,
            kv_heads: shape.kv_heads.unwrap_or(shape.heads),
            seqlen_q: shape.seqlen_q.unwrap_or(1),
            seqlens_k,
            head_dim: shape.dim,
            causal: shape.causal,
            dtype: shape.dtype,
            scale: shape.scale,
            layout: match self.page_size {
                Some(page_size) => harness::KvLayout::Paged { page_size },
                None => harness::KvLayout::Contiguous,
            },
            splits: self.splits,
        })
    }
}

#[derive(Args, Debug)]
pub struct TimelineArgs {
    /// The stage number (one with timeline kernels).
    pub number: u32,
    #[command(flatten)]
    pub shape: ShapeArgs,
    /// Input seed of both runs; by default a fresh one (printed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Blocks to record and draw: the grid's first K (linear block index 0 to K-1), the
    /// first the launch places, normally each on an SM of its own.
    #[arg(long, value_name = "K", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=32))]
    pub blocks: u32,
    /// The K/V tiles to draw, A..B (B excluded): from the first start to the last end of
    /// their phases in any recorded warpgroup, whatever else ran meanwhile included. A
    /// backward stage's iterations are its steps: the query blocks a block walks.
    #[arg(long, value_name = "A..B", default_value = "0..6")]
    pub tiles: TileRange,
    /// Draw the whole run instead of --tiles.
    #[arg(long, conflicts_with = "tiles")]
    pub all: bool,
    /// Where to write the chart (default bench/out/timeline-N.svg).
    #[arg(long, value_name = "FILE.svg")]
    pub out: Option<PathBuf>,
    /// Also write every recorded event (ns and cycles), the clock fits and the summary as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Skip timing: no overhead is measured, and the events are the first launch's.
    #[arg(long)]
    pub no_time: bool,
    #[command(flatten)]
    pub timing: TimingArgs,
}

/// `--tiles A..B`: tiles A to B - 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileRange {
    pub first: u32,
    pub end: u32,
}

impl std::str::FromStr for TileRange {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("`{s}` is not a range of tiles A..B (B excluded), e.g. 0..6");
        let (a, b) = s.split_once("..").ok_or_else(bad)?;
        let first: u32 = a.trim().parse().map_err(|_| bad())?;
        let end: u32 = b.trim().parse().map_err(|_| bad())?;
        if end <= first {
            return Err(format!(
                "tiles {first}..{end} is empty: B must be greater than A"
            ));
        }
        Ok(TileRange { first, end })
    }
}

impl TimelineArgs {
    /// The part of the run to draw.
    pub fn window(&self) -> protocol_viz::timeline::Window {
        if self.all {
            protocol_viz::timeline::Window::All
        } else {
            protocol_viz::timeline::Window::Tiles {
                first: self.tiles.first,
                end: self.tiles.end,
            }
        }
    }

    pub fn out(&self) -> PathBuf {
        self.out
            .clone()
            .unwrap_or_else(|| PathBuf::from(format!("bench/out/timeline-{}.svg", self.number)))
    }
}

/// `--timing`, on every command that times something.
#[derive(Args, Debug, Clone, Copy)]
pub struct TimingArgs {
    /// How timed launches are queued: gated (default) or ungated.
    ///
    /// `gated` queues every timed launch behind a kernel that holds the stream, so each
    /// CUDA event pair times the GPU's work alone. `ungated` times each launch on an idle
    /// stream, the host's launch time included: the protocol before the gate, kept to
    /// measure what the gate changes.
    #[arg(
        long,
        value_name = "PROTOCOL",
        default_value = "gated",
        value_parser = timing_protocol(),
    )]
    pub timing: TimingProtocol,
}

/// The protocol's names as clap's possible values, so `--help` lists them and anything
/// else is refused with the list.
fn timing_protocol() -> impl clap::builder::TypedValueParser<Value = TimingProtocol> {
    use clap::builder::{PossibleValuesParser, TypedValueParser as _};
    PossibleValuesParser::new(TimingProtocol::ALL.map(TimingProtocol::name))
        .try_map(|name| name.parse::<TimingProtocol>())
}

/// A size flag's value: at least 1, refused by clap naming the flag the user typed
/// (`invalid value '0' for '--seqlen <SEQLEN>'`), where `Problem::validate` could only
/// name the problem's field (`seqlen_q`).
fn size(value: &str) -> Result<usize, String> {
    match value.parse::<usize>() {
        Ok(0) => Err("every size must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

#[derive(Args, Debug, Clone)]
pub struct ShapeArgs {
    #[arg(long, default_value_t = 1, value_parser = size)]
    pub batch: usize,
    #[arg(long, default_value_t = 16, value_parser = size)]
    pub heads: usize,
    /// K/V heads for GQA/MQA (must divide --heads; default: --heads).
    #[arg(long, value_parser = size)]
    pub kv_heads: Option<usize>,
    /// Sequence length of both queries and keys.
    #[arg(long, default_value_t = 4096, value_parser = size)]
    pub seqlen: usize,
    /// Query length, when it differs from the keys' (overrides --seqlen for Q).
    #[arg(long, value_parser = size)]
    pub seqlen_q: Option<usize>,
    /// Key/value length (overrides --seqlen for K and V).
    #[arg(long, value_parser = size)]
    pub seqlen_k: Option<usize>,
    /// Head dimension.
    #[arg(long, default_value_t = 128, value_parser = size)]
    pub dim: usize,
    /// Causal mask, aligned bottom-right as in FlashAttention.
    #[arg(long)]
    pub causal: bool,
    /// bf16 or f16.
    #[arg(long, default_value = "bf16")]
    pub dtype: DType,
    /// Softmax scale (default 1/sqrt(dim)).
    #[arg(long)]
    pub scale: Option<f32>,
}

impl ShapeArgs {
    pub fn problem(&self) -> Problem {
        Problem {
            // A literal, not `Shape::new`, which panics: `Problem::validate` says what is
            // wrong with bad flags.
            shape: Shape {
                batch: self.batch,
                heads: self.heads,
                kv_heads: self.kv_heads.unwrap_or(self.heads),
                seqlen_q: self.seqlen_q.unwrap_or(self.seqlen),
                seqlen_k: self.seqlen_k.unwrap_or(self.seqlen),
                head_dim: self.dim,
            },
            causal: self.causal,
            dtype: self.dtype,
            scale: self.scale,
        }
    }
}
