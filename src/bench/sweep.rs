//! Which shapes a bench sweeps and which stage rows it runs and which it skips (and why):
//! plain data, tested without a GPU. What a row measured is [`super::results`]'s.

use crate::stages::STAGES;
use anyhow::{Context as _, Result, bail};
use harness::run::PrefillRun;
use harness::timing::TimingProtocol;
use harness::{DType, Problem, Stage};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::PathBuf;

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

/// How the sweep chooses batch and heads, in words (for `--help` and the JSON header).
/// With `tokens` at most the shortest seqlen the rule is batch 1 everywhere, and says so.
pub fn shape_rule(tokens: usize, heads: usize, seqlens: &[usize]) -> String {
    if seqlens.iter().all(|&s| s >= tokens) {
        return format!(
            "heads = {heads}, batch = max(1, {tokens} / seqlen) = 1 at every seqlen of the sweep"
        );
    }
    format!(
        "heads = {heads}, batch = max(1, {tokens} / seqlen): batch x heads x seqlen = {} query rows (twice that at seqlens above {tokens}), so short sequences still fill the GPU",
        tokens * heads
    )
}

/// `b2 h16 s4096 d128 causal`, for progress lines.
pub fn shape_label(p: &Problem) -> String {
    format!(
        "b{} h{} s{} d{}{}",
        p.shape.batch,
        p.shape.heads,
        p.shape.seqlen_q,
        p.shape.head_dim,
        if p.causal { " causal" } else { "" }
    )
}

/// What to sweep.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sweep {
    pub seqlens: Vec<usize>,
    pub dims: Vec<usize>,
    pub causal: Vec<bool>,
    pub dtype: DType,
    pub tokens: usize,
    pub heads: usize,
}

impl Sweep {
    /// Batch for `seqlen` under the shape rule.
    pub fn batch_for(&self, seqlen: usize) -> usize {
        (self.tokens / seqlen.max(1)).max(1)
    }

    /// Every shape, head dim outermost, then causal, then seqlen (the plots' order). Each
    /// is MHA with queries and keys of one length.
    pub fn shapes(&self) -> Vec<Problem> {
        let mut shapes = Vec::new();
        for &head_dim in &self.dims {
            for &causal in &self.causal {
                for &seqlen in &self.seqlens {
                    shapes.push(Problem {
                        causal,
                        dtype: self.dtype,
                        ..Problem::new(self.batch_for(seqlen), self.heads, seqlen, head_dim)
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
pub fn plan_row(stage: &dyn Stage, problem: &Problem, max_workspace_gib: f64) -> Plan {
    // A decode stage is refused here too, by name.
    let run = stage
        .workload()
        .prefill()
        .and_then(|s| PrefillRun::new(s, problem));
    let stage = match run {
        Ok(run) => run.stage(),
        Err(e) => return Plan::Skip(e.to_string()),
    };
    let workspace = stage.scratch_elements(problem) as f64 * 4.0 / (1u64 << 30) as f64;
    if workspace > max_workspace_gib {
        return Plan::Skip(format!(
            "needs {workspace:.1} GiB of fp32 workspace (stage 1's S matrix is 4·B·H·S² bytes), over --max-workspace-gib {max_workspace_gib}"
        ));
    }
    Plan::Run
}

/// Which pass of attention a row times.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pass {
    #[default]
    Forward,
    /// dQ, dK and dV from dO: five products to the forward's two
    /// ([`harness::backward::backward_flops`]).
    Backward,
}

impl Pass {
    pub fn is_forward(&self) -> bool {
        *self == Pass::Forward
    }

    /// FLOPs of `problem` in this pass.
    pub fn flops(self, problem: &Problem) -> f64 {
        match self {
            Pass::Forward => problem.flops(),
            Pass::Backward => harness::backward::backward_flops(problem),
        }
    }

    /// `Forward` or `Backward`, for titles.
    pub fn title(self) -> &'static str {
        match self {
            Pass::Forward => "Forward",
            Pass::Backward => "Backward",
        }
    }
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
    /// The forward, or the backward stages' gradients (`--backward`), with the baselines'
    /// backward on the same shapes.
    pub pass: Pass,
}

/// The stages a bench of `pass` runs: those named, or for the forward the whole table and
/// for the backward every backward stage.
pub fn select_stages_for(pass: Pass, numbers: Option<&[u32]>) -> Result<Vec<&'static dyn Stage>> {
    let all = select_stages(numbers)?;
    Ok(match (pass, numbers) {
        (Pass::Backward, None) => all
            .into_iter()
            .filter(|s| s.workload().kind() == harness::WorkloadKind::Backward)
            .collect(),
        _ => all,
    })
}

/// [`plan_row`] for a row of `pass`: a backward row needs a backward stage that takes the
/// problem (and whose forward does).
pub fn plan_row_for(
    pass: Pass,
    stage: &dyn Stage,
    problem: &Problem,
    max_workspace_gib: f64,
) -> Plan {
    match pass {
        Pass::Forward => plan_row(stage, problem, max_workspace_gib),
        Pass::Backward => match stage
            .workload()
            .backward()
            .and_then(|s| harness::backward::run::BackwardRun::new(s, problem))
        {
            Ok(_) => Plan::Run,
            Err(e) => Plan::Skip(e.to_string()),
        },
    }
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
    for shape in sweep.shapes() {
        shape
            .validate()
            .with_context(|| format!("shape {}", shape_label(&shape)))?;
    }
    Ok(())
}

/// Prints what a bench would run, without a GPU (`--dry-run`).
pub fn describe_plan(config: &BenchConfig) -> Result<String> {
    let stages = select_stages_for(config.pass, config.stages.as_deref())?;
    let mut out = String::new();
    writeln!(
        out,
        "shape rule: {}",
        shape_rule(
            config.sweep.tokens,
            config.sweep.heads,
            &config.sweep.seqlens
        )
    )?;
    let (mut run, mut skip) = (0, 0);
    for shape in config.sweep.shapes() {
        for stage in &stages {
            match plan_row_for(config.pass, *stage, &shape, config.max_workspace_gib) {
                Plan::Run => {
                    run += 1;
                    writeln!(
                        out,
                        "run   {:<20} {}",
                        stage_name(*stage),
                        shape_label(&shape)
                    )?;
                }
                Plan::Skip(why) => {
                    skip += 1;
                    writeln!(
                        out,
                        "skip  {:<20} {}: {why}",
                        stage_name(*stage),
                        shape_label(&shape)
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
