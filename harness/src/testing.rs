//! The GPU test every stage runs (its kernels against the oracle over one shape grid, and
//! on inputs whose scores jump), and the runner of every test binary whose tests find out
//! only as they run whether this machine lets them check what they are for ([`Trial`],
//! [`trial`], [`Checked`], [`Needs`], [`run`]: `runner.rs`, re-exported here; a test that
//! did not check what it is for is reported as *ignored*, with its reason, never as
//! passed).
//!
//! A stage's `tests/gpu.rs` is one line, `harness::gpu_tests!(my_stage::STAGE);`, and its
//! Cargo.toml says `[[test]] name = "gpu" harness = false`. The line expands to a `main`
//! with the tests of the stage's workload ([`trials`]): for a prefill stage, one test per
//! (dtype, head dim, causal) combination of the stage's and one per dtype on inputs whose scores jump;
//! for a decode stage, [`crate::decode::testing`]'s grid.

pub(crate) mod runner;
pub(crate) mod shapes;

pub use shapes::SHAPES;

use crate::run::{PrefillRun, RunOptions};
use crate::{DType, PrefillStage, Problem, Stage, Workload};
pub use libtest_mimic::Trial;
use reference::fp8_attention::Granularity;
pub(crate) use runner::assert_no_failures;
pub use runner::{
    Checked, IntoChecked, Needs, Skipped, expect_panic, gpu_for, run, run_probe, trial,
};

/// Runs `stage` on every shape of the grid for one (dtype, head dim, causal), an FP8 stage
/// with its scales at `fp8_scales` (the others take `PerHead`), and panics with every
/// failure's numbers, so one run shows all that is wrong; `Err` where this GPU cannot run
/// the stage ([`gpu_for`]).
pub fn assert_stage_on_grid(
    stage: &dyn PrefillStage,
    dtype: DType,
    head_dim: usize,
    causal: bool,
    fp8_scales: Granularity,
) -> Checked {
    assert_stage_on(
        stage,
        dtype,
        head_dim,
        causal,
        SHAPES,
        &[("normal inputs", None)],
        fp8_scales,
    )
}

/// One sequence of 8192 keys, for the stages whose products accumulate with fewer bits than
/// f32 (the FP8 stages: an E4M3 wgmma's accumulator drops low bits on each addition, and
/// over 8192 keys of inputs whose mean is not zero stage 20's first kernel's largest error
/// was 4.1e-2 against a bound of 2.1e-2; book: "The accumulator's precision").
pub const LONG_SHAPES: &[(usize, usize, usize, usize, usize)] = &[(1, 2, 1, 8192, 8192)];

/// Shapes long enough for several KV tiles before and after the jump.
pub const JUMP_SHAPES: &[(usize, usize, usize, usize, usize)] =
    &[(1, 2, 2, 1024, 1024), (1, 2, 1, 300, 1100)];

/// Like [`assert_stage_on_grid`], on inputs whose scores jump upwards part of the way
/// along the keys, moderately (a rescale) and steeply (overflow unless the max moves
/// first): the test of every path that depends on how the running max grows.
pub fn assert_stage_on_score_jumps(
    stage: &dyn PrefillStage,
    dtype: DType,
    head_dim: usize,
    causal: bool,
) -> Checked {
    use crate::inputs::{moderate_score_jump, steep_score_jump};
    assert_stage_on(
        stage,
        dtype,
        head_dim,
        causal,
        JUMP_SHAPES,
        &[
            ("a moderate score jump", Some(moderate_score_jump)),
            ("a steep score jump", Some(steep_score_jump)),
        ],
        Granularity::PerHead,
    )
}

type Adjust = (
    &'static str,
    Option<fn(&Problem, &mut crate::inputs::HostInputs)>,
);

/// `stage` on each of `shapes` with each of `adjusts`' inputs, checked against the oracle;
/// the FP8 stages with their scales at `fp8_scales` (the 16-bit stages take `PerHead`).
fn assert_stage_on(
    stage: &dyn PrefillStage,
    dtype: DType,
    head_dim: usize,
    causal: bool,
    shapes: &[(usize, usize, usize, usize, usize)],
    adjusts: &[Adjust],
    fp8_scales: Granularity,
) -> Checked {
    let gpu = gpu_for(stage.info())?;
    let mut failures = Vec::new();
    for (&shape, &(inputs, adjust)) in shapes
        .iter()
        .flat_map(|s| adjusts.iter().map(move |a| (s, a)))
    {
        let problem = shapes::grid_problem(shape, head_dim, dtype, causal);
        let opts = RunOptions {
            seed: None,
            check: true,
            timing: None,
            adjust_inputs: adjust,
            timeline: None,
            fp8_scales,
        };
        match PrefillRun::new(stage, &problem).and_then(|run| run.run(&gpu, &opts)) {
            Ok((report, _)) => {
                let check = report.check.expect("checking was asked for");
                if !check.passed {
                    failures.push(format!(
                        "{problem}, {inputs} (seed {}): {}",
                        report.seed,
                        check.summary()
                    ));
                }
            }
            Err(e) => failures.push(format!("{problem}, {inputs}: {e}")),
        }
    }
    assert_no_failures(stage.info(), &failures);
    Ok(())
}

/// The tests of `stage`'s `tests/gpu.rs` ([`gpu_tests!`](crate::gpu_tests)), those of its
/// workload.
pub fn trials(stage: &'static dyn Stage) -> Vec<Trial> {
    match stage.workload() {
        Workload::Prefill(s) => stage_trials(s),
        Workload::Decode(s) => crate::decode::testing::decode_trials(s),
        Workload::Backward(s) => crate::backward::testing::backward_trials(s),
    }
}

/// A prefill stage's tests: one per (dtype, head dim of the stage, causal) on the shape
/// grid, and one per dtype on inputs whose scores jump, at every head dim of the stage.
pub fn stage_trials(stage: &'static dyn PrefillStage) -> Vec<Trial> {
    let needs = Needs::Stage(stage.info());
    let mut trials = Vec::new();
    for &dtype in stage.info().dtypes {
        for &head_dim in stage.info().head_dims {
            for causal in [false, true] {
                let causal_suffix = if causal { "_causal" } else { "" };
                trials.push(trial(
                    format!("{}_d{head_dim}{causal_suffix}", dtype.name()),
                    needs,
                    move || {
                        assert_stage_on_grid(stage, dtype, head_dim, causal, Granularity::PerHead)
                    },
                ));
            }
        }
    }
    for &dtype in stage.info().dtypes {
        trials.push(trial(
            format!("score_jumps_{}", dtype.name()),
            needs,
            move || {
                for &head_dim in stage.info().head_dims {
                    for causal in [false, true] {
                        assert_stage_on_score_jumps(stage, dtype, head_dim, causal)?;
                    }
                }
                Ok(())
            },
        ));
    }
    if crate::fp8::is_fp8(stage) {
        for &head_dim in stage.info().head_dims {
            trials.push(trial(
                format!("long_sequence_d{head_dim}"),
                needs,
                move || {
                    let (dtype, inputs) = (stage.info().dtypes[0], [("normal inputs", None)]);
                    assert_stage_on(
                        stage,
                        dtype,
                        head_dim,
                        false,
                        LONG_SHAPES,
                        &inputs,
                        Granularity::PerHead,
                    )
                },
            ));
            // Scales per tensor: the shape grid, whose GQA shapes give K and V slices of
            // several heads to share one scale, causal or not.
            trials.push(trial(
                format!("scales_per_tensor_d{head_dim}"),
                needs,
                move || {
                    let dtype = stage.info().dtypes[0];
                    for causal in [false, true] {
                        assert_stage_on_grid(
                            stage,
                            dtype,
                            head_dim,
                            causal,
                            Granularity::PerTensor,
                        )?;
                    }
                    Ok(())
                },
            ));
        }
    }
    trials
}

/// A stage's `tests/gpu.rs`: `harness::gpu_tests!(my_stage::STAGE);` is its `main`, which
/// runs [`trials`], prefill or decode alike. The test target needs `harness = false` in
/// the stage's Cargo.toml (`[[test]] name = "gpu" harness = false`).
#[macro_export]
macro_rules! gpu_tests {
    ($stage:expr) => {
        fn main() -> ::std::process::ExitCode {
            $crate::testing::run($crate::testing::trials(&$stage))
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stage::fakes::{DECODE, PREFILL};

    /// `gpu_tests!` is the same line for every stage: the workload picks the grid.
    #[test]
    fn each_workload_gets_its_own_tests() {
        let names = |stage: &'static dyn Stage| -> Vec<String> {
            trials(stage).iter().map(|t| t.name().to_string()).collect()
        };
        let prefill = names(&PREFILL);
        // The fake has bf16 alone: 2 head dims x 2 (causal or not), and the score jumps.
        assert_eq!(prefill.len(), 5);
        assert!(prefill.contains(&"bf16_d128_causal".to_string()));
        assert!(prefill.contains(&"score_jumps_bf16".to_string()));
        let decode = names(&DECODE);
        assert_eq!(decode.len(), 10);
        assert!(decode.contains(&"paged_bf16_d128".to_string()));
        assert!(decode.contains(&"odd_lengths_bf16_d128".to_string()));
    }
}
