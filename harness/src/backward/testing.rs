//! The GPU tests every backward stage runs (`harness::gpu_tests!` picks them by workload):
//! the gradients against the oracle over the prefill shape grid, for each (dtype, head dim,
//! causal), and the deterministic order's promise, the same bits on every run.

use super::run::{BackwardOptions, BackwardRun};
use crate::BackwardStage;
use crate::DType;
use crate::testing::runner::{Checked, Needs, assert_no_failures, gpu_for, trial};
use crate::testing::shapes::{SHAPES, grid_problem};
use libtest_mimic::Trial;

/// Runs `stage` on every shape of the prefill grid (a single token, lengths that are not a
/// multiple of any tile, seqlen_q ≠ seqlen_k both ways, GQA and MQA, a longer sequence) and
/// panics with every failure's numbers.
pub fn assert_backward_on_grid(
    stage: &dyn BackwardStage,
    dtype: DType,
    head_dim: usize,
    causal: bool,
    deterministic: bool,
) -> Checked {
    let gpu = gpu_for(stage.info())?;
    let mut failures = Vec::new();
    for &shape in SHAPES {
        let p = grid_problem(shape, head_dim, dtype, causal);
        let opts = BackwardOptions {
            timing: None,
            deterministic,
            ..BackwardOptions::default()
        };
        match BackwardRun::new(stage, &p).and_then(|run| run.run(&gpu, &opts)) {
            Ok((report, _)) => {
                let check = report.check.expect("checking was asked for");
                if !check.passed {
                    failures.push(format!("{p} (seed {}): {}", report.seed, check.summary()));
                }
            }
            Err(e) => failures.push(format!("{p}: {e}")),
        }
    }
    assert_no_failures(stage.info(), &failures);
    Ok(())
}

/// Shapes with many key blocks adding into each query block's dQ, GQA's heads included.
pub const DETERMINISM_SHAPES: &[(usize, usize, usize, usize, usize)] =
    &[(1, 4, 2, 700, 900), (2, 2, 2, 1024, 1024)];

/// With the deterministic order, two runs on the same inputs give the same dQ, dK and dV
/// bit for bit, and pass the check.
pub fn assert_deterministic(stage: &dyn BackwardStage, dtype: DType, head_dim: usize) -> Checked {
    let gpu = gpu_for(stage.info())?;
    let mut failures = Vec::new();
    for &shape in DETERMINISM_SHAPES {
        for causal in [false, true] {
            let p = grid_problem(shape, head_dim, dtype, causal);
            let seed = crate::inputs::fresh_seed();
            let run = |check| {
                let opts = BackwardOptions {
                    seed: Some(seed),
                    check,
                    timing: None,
                    deterministic: true,
                    timeline: None,
                };
                BackwardRun::new(stage, &p).and_then(|r| r.run(&gpu, &opts))
            };
            match (run(true), run(false)) {
                (Ok((first, a)), Ok((_, b))) => {
                    let check = first.check.expect("checking was asked for");
                    if !check.passed {
                        failures.push(format!("{p} (seed {seed}): {}", check.summary()));
                    }
                    for (name, x, y) in [
                        ("dQ", &a.dq, &b.dq),
                        ("dK", &a.dk, &b.dk),
                        ("dV", &a.dv, &b.dv),
                    ] {
                        let differ = x.iter().zip(y).filter(|(x, y)| x != y).count();
                        if differ > 0 {
                            failures.push(format!(
                                "{p} (seed {seed}): {name} differs between two deterministic runs in {differ} elements"
                            ));
                        }
                    }
                }
                (Err(e), _) | (_, Err(e)) => failures.push(format!("{p}: {e}")),
            }
        }
    }
    assert_no_failures(stage.info(), &failures);
    Ok(())
}

/// A backward stage's tests: one per (dtype, head dim, causal) on the grid, the same grid
/// once more in the deterministic order (bf16, both masks), and the determinism test per
/// head dim.
pub fn backward_trials(stage: &'static dyn BackwardStage) -> Vec<Trial> {
    let needs = Needs::Stage(stage.info());
    let mut trials = Vec::new();
    for &dtype in stage.info().dtypes {
        for &head_dim in stage.info().head_dims {
            for causal in [false, true] {
                let suffix = if causal { "_causal" } else { "" };
                trials.push(trial(
                    format!("{}_d{head_dim}{suffix}", dtype.name()),
                    needs,
                    move || assert_backward_on_grid(stage, dtype, head_dim, causal, false),
                ));
            }
        }
    }
    let dtype = stage.info().dtypes[0];
    for &head_dim in stage.info().head_dims {
        trials.push(trial(
            format!("deterministic_grid_d{head_dim}"),
            needs,
            move || {
                for causal in [false, true] {
                    assert_backward_on_grid(stage, dtype, head_dim, causal, true)?;
                }
                Ok(())
            },
        ));
        trials.push(trial(
            format!("deterministic_bits_d{head_dim}"),
            needs,
            move || assert_deterministic(stage, dtype, head_dim),
        ));
    }
    trials
}
