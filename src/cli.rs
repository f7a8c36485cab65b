//! The command line, defined once: clap derives parsing, `--help` and the error messages
//! from these types.

use clap::{Args, Parser, Subcommand};
use harness::{DType, Problem};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "flashlab",
    version,
    about = "FlashAttention one kernel at a time: run, check and time each stage"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// List the stages: number, name, idea, GPUs, head dims, dtypes.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Check stage N against the CPU oracle, then time it.
    Stage(StageArgs),
    /// The GPU, and its practical speed of light (copy bandwidth, cuBLAS bf16 GEMM).
    Info {
        #[arg(long)]
        json: bool,
    },
    /// Registers, shared memory, stack and spills per kernel, from the ptxas report.
    Resources {
        /// Only this stage (default: all).
        stage: Option<u32>,
        /// Only this architecture, e.g. sm_90a (default: all compiled).
        #[arg(long)]
        arch: Option<String>,
        #[arg(long)]
        json: bool,
    },
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
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Write q, k, v, o (float32, BSHD) and lse (float32, [batch, heads, seqlen_q]) as .npy here.
    #[arg(long, value_name = "DIR")]
    pub save: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct ShapeArgs {
    #[arg(long, default_value_t = 1)]
    pub batch: usize,
    #[arg(long, default_value_t = 16)]
    pub heads: usize,
    /// K/V heads for GQA/MQA (must divide --heads; default: --heads).
    #[arg(long)]
    pub kv_heads: Option<usize>,
    /// Sequence length of both queries and keys.
    #[arg(long, default_value_t = 4096)]
    pub seqlen: usize,
    /// Query length, when it differs from the keys' (overrides --seqlen for Q).
    #[arg(long)]
    pub seqlen_q: Option<usize>,
    /// Key/value length (overrides --seqlen for K and V).
    #[arg(long)]
    pub seqlen_k: Option<usize>,
    /// Head dimension.
    #[arg(long, default_value_t = 128)]
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
            batch: self.batch,
            heads: self.heads,
            kv_heads: self.kv_heads.unwrap_or(self.heads),
            seqlen_q: self.seqlen_q.unwrap_or(self.seqlen),
            seqlen_k: self.seqlen_k.unwrap_or(self.seqlen),
            head_dim: self.dim,
            causal: self.causal,
            dtype: self.dtype,
            scale: self.scale,
        }
    }
}
