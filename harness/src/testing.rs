//! The GPU test every stage runs: its kernels against the oracle over one shape grid, and
//! on inputs whose scores jump.
//!
//! A stage's `tests/gpu.rs` is one line, `harness::gpu_tests!(my_stage::STAGE);`, which
//! expands to one test per (dtype, head dim, causal) combination and one per dtype on
//! inputs whose scores jump. They are `#[ignore]`d with the reason, so a machine without a
//! GPU shows them as ignored, never as passed; `just test` runs them with
//! `--include-ignored` when a GPU is present.

use crate::run::{RunOptions, run_stage};
use crate::{DType, Gpu, Problem, Stage};

/// (batch, heads, kv_heads, seqlen_q, seqlen_k): a single token, tile-aligned lengths,
/// lengths that are not a multiple of any tile, seqlen_q ≠ seqlen_k both ways (with
/// causal, more queries than keys leaves fully masked rows), GQA and MQA, and one
/// longer sequence that crosses many KV tiles.
pub const SHAPES: &[(usize, usize, usize, usize, usize)] = &[
    (1, 1, 1, 1, 1),
    (2, 3, 3, 64, 64),
    (1, 4, 2, 197, 197),
    (2, 2, 1, 113, 300),
    (1, 2, 2, 300, 113),
    (1, 2, 2, 1, 257),
    (1, 2, 1, 1024, 1024),
];

/// Runs `stage` on every shape of the grid for one (dtype, head dim, causal) and panics
/// with every failure's numbers, so one run shows all that is wrong.
pub fn assert_stage_on_grid(stage: &dyn Stage, dtype: DType, head_dim: usize, causal: bool) {
    assert_stage_on(
        stage,
        dtype,
        head_dim,
        causal,
        SHAPES,
        &[("normal inputs", None)],
    );
}

/// Shapes long enough for several KV tiles before and after the jump.
pub const JUMP_SHAPES: &[(usize, usize, usize, usize, usize)] =
    &[(1, 2, 2, 1024, 1024), (1, 2, 1, 300, 1100)];

/// Like [`assert_stage_on_grid`], on inputs whose scores jump upwards part of the way
/// along the keys, moderately (a rescale) and steeply (overflow unless the max moves
/// first): the test of every path that depends on how the running max grows.
pub fn assert_stage_on_score_jumps(stage: &dyn Stage, dtype: DType, head_dim: usize, causal: bool) {
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
    );
}

type Adjust = (
    &'static str,
    Option<fn(&Problem, &mut crate::inputs::HostInputs)>,
);

fn assert_stage_on(
    stage: &dyn Stage,
    dtype: DType,
    head_dim: usize,
    causal: bool,
    shapes: &[(usize, usize, usize, usize, usize)],
    adjusts: &[Adjust],
) {
    let Some(gpu) = gpu_for(stage.info()) else {
        return;
    };
    let mut failures = Vec::new();
    for (&(batch, heads, kv_heads, seqlen_q, seqlen_k), &(inputs, adjust)) in shapes
        .iter()
        .flat_map(|s| adjusts.iter().map(move |a| (s, a)))
    {
        let problem = Problem {
            shape: reference::Shape {
                batch,
                heads,
                kv_heads,
                seqlen_q,
                seqlen_k,
                head_dim,
            },
            causal,
            dtype,
            scale: None,
        };
        let opts = RunOptions {
            seed: None,
            check: true,
            timing: None,
            adjust_inputs: adjust,
            timeline: None,
        };
        match run_stage(stage, &gpu, &problem, &opts) {
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
    assert!(
        failures.is_empty(),
        "stage {} failed on:\n{}",
        stage.info().label(),
        failures.join("\n")
    );
}

/// The GPU, for a test of a stage's kernels; `None` after saying why (with [`skip`]) when
/// the GPU cannot run them (a Hopper stage elsewhere: said, not passed). No GPU at all
/// panics: GPU tests are `#[ignore]`d where there is none.
pub fn gpu_for(info: &crate::StageInfo) -> Option<Gpu> {
    let gpu = Gpu::open().unwrap_or_else(|e| panic!("{e}"));
    match gpu.check_stage(info) {
        Ok(()) => Some(gpu),
        Err(e) => {
            skip(e);
            None
        }
    }
}

/// Says that the running test could not check what it is for, and why, where a run of
/// `cargo test` shows it: straight to the process's stderr, past libtest's capture (which
/// prints a passing test's output only under `--nocapture`). The caller then returns, so
/// the test reports `ok`, and this line beside it tells that nothing was checked.
pub fn skip(reason: impl std::fmt::Display) {
    use std::io::Write as _;
    let thread = std::thread::current();
    // libtest names each test's thread after the test (except with one test thread).
    let test = thread.name().filter(|n| *n != "main").unwrap_or("a test");
    let _ = writeln!(std::io::stderr().lock(), "SKIPPED {test}: {reason}");
}

/// One `#[ignore]`d GPU test per (dtype, head dim, causal) for a stage.
#[macro_export]
macro_rules! gpu_tests {
    ($stage:expr) => {
        $crate::gpu_tests!(@one $stage, bf16_d64, Bf16, 64, false);
        $crate::gpu_tests!(@one $stage, bf16_d64_causal, Bf16, 64, true);
        $crate::gpu_tests!(@one $stage, bf16_d128, Bf16, 128, false);
        $crate::gpu_tests!(@one $stage, bf16_d128_causal, Bf16, 128, true);
        $crate::gpu_tests!(@one $stage, f16_d64, F16, 64, false);
        $crate::gpu_tests!(@one $stage, f16_d64_causal, F16, 64, true);
        $crate::gpu_tests!(@one $stage, f16_d128, F16, 128, false);
        $crate::gpu_tests!(@one $stage, f16_d128_causal, F16, 128, true);
        $crate::gpu_tests!(@jumps $stage, score_jumps_bf16, Bf16);
        $crate::gpu_tests!(@jumps $stage, score_jumps_f16, F16);
    };
    (@jumps $stage:expr, $name:ident, $dtype:ident) => {
        /// Scores that jump part of the way along the keys: every way the running max grows.
        #[test]
        #[ignore = "needs an NVIDIA GPU (compute capability 8.0+; the Hopper stages 9.0); `just test` runs it where one is present"]
        fn $name() {
            for head_dim in $crate::Stage::info(&$stage).head_dims.iter().copied() {
                for causal in [false, true] {
                    $crate::testing::assert_stage_on_score_jumps(&$stage, $crate::DType::$dtype, head_dim, causal);
                }
            }
        }
    };
    (@one $stage:expr, $name:ident, $dtype:ident, $dim:expr, $causal:expr) => {
        #[test]
        #[ignore = "needs an NVIDIA GPU (compute capability 8.0+; the Hopper stages 9.0); `just test` runs it where one is present"]
        fn $name() {
            $crate::testing::assert_stage_on_grid(&$stage, $crate::DType::$dtype, $dim, $causal);
        }
    };
}
