//! The GPU tests every decode stage runs: its kernels against the oracle over one grid of
//! decode problems. A stage's `tests/gpu.rs` is one line,
//! `harness::decode_gpu_tests!(my_stage::STAGE);`. The tests are `#[ignore]`d with the
//! reason where there is no GPU, as the prefill stages' are ([`crate::testing`]).

use super::run::{DecodeOptions, run_decode};
use super::{DecodeProblem, KvLayout};
use crate::testing::gpu_for;
use crate::{DType, Stage};

/// One decode problem of the grid: (batch, heads, kv_heads, seqlen_q, cache lengths (one
/// for all or one per sequence), causal, layout, splits).
pub struct Case {
    pub heads: usize,
    pub kv_heads: usize,
    pub seqlen_q: usize,
    pub seqlens_k: &'static [usize],
    pub causal: bool,
    pub layout: KvLayout,
    pub splits: Option<usize>,
}

const fn case(heads: usize, kv_heads: usize, seqlen_q: usize, seqlens_k: &'static [usize]) -> Case {
    Case {
        heads,
        kv_heads,
        seqlen_q,
        seqlens_k,
        causal: false,
        layout: KvLayout::Contiguous,
        splits: None,
    }
}

const fn paged(c: Case, page_size: usize) -> Case {
    Case {
        layout: KvLayout::Paged { page_size },
        ..c
    }
}

const fn split(c: Case, splits: usize) -> Case {
    Case {
        splits: Some(splits),
        ..c
    }
}

const fn causal(c: Case) -> Case {
    Case { causal: true, ..c }
}

/// GQA groups of 1 (MHA), 4, 8 (MQA) and 16 (two row tiles with two tokens), the
/// heuristic's splits and forced ones (one; more than a short sequence has tiles, so some
/// splits are empty), lengths of one key and off every tile boundary, several lengths in
/// one launch, speculative decoding with and without the causal mask, and more splits of
/// a full 16-row tile than stage 15's merge holds in shared memory at once (12 at both
/// head dims: it merges them a chunk at a time), the last chunk empty for one sequence.
pub const SHAPES: &[Case] = &[
    case(4, 4, 1, &[1]),
    case(32, 8, 1, &[1000]),
    case(8, 1, 1, &[4097]),
    case(32, 2, 2, &[300]),
    split(case(32, 8, 1, &[1000]), 1),
    split(case(8, 2, 1, &[200, 1, 77]), 7),
    case(16, 4, 1, &[1, 17, 1000, 4097, 300]),
    case(8, 2, 4, &[513, 64]),
    causal(case(8, 2, 4, &[513, 3])),
    causal(split(case(32, 8, 16, &[1000, 2000]), 3)),
    paged(case(16, 4, 1, &[17, 1000, 4097]), 64),
    split(case(8, 2, 4, &[4097, 100]), 20),
];

/// Every page size, shuffled tables, last pages partly filled, with splits that cut pages.
pub const PAGED: &[Case] = &[
    paged(case(8, 2, 1, &[1, 17, 1000, 4097, 256]), 16),
    paged(split(case(8, 2, 1, &[1000, 4097]), 5), 16),
    paged(case(32, 8, 1, &[65, 640, 3000]), 64),
    paged(causal(case(8, 2, 3, &[700, 129])), 64),
    paged(case(8, 2, 1, &[255, 256, 257, 5000]), 256),
    paged(split(case(16, 4, 2, &[1000, 31]), 9), 256),
];

/// The odd lengths, up to one past 128k keys.
pub const ODD_LENGTHS: &[Case] = &[
    case(8, 2, 1, &[1]),
    case(8, 2, 1, &[17]),
    case(8, 2, 1, &[1000]),
    case(8, 2, 1, &[4097]),
    case(8, 2, 1, &[131073]),
    paged(case(8, 2, 1, &[131073]), 256),
];

/// Runs `stage` on every case for one dtype and head dim and panics with every failure.
pub fn assert_decode_cases(stage: &dyn Stage, dtype: DType, head_dim: usize, cases: &[Case]) {
    let Some(gpu) = gpu_for(stage.info()) else {
        return;
    };
    let mut failures = Vec::new();
    for c in cases {
        let batch = c.seqlens_k.len();
        let problem = DecodeProblem {
            seqlens_k: c.seqlens_k.to_vec(),
            causal: c.causal,
            dtype,
            layout: c.layout,
            splits: c.splits,
            ..DecodeProblem::uniform(batch, c.heads, c.kv_heads, c.seqlen_q, 1, head_dim)
        };
        let opts = DecodeOptions {
            timing: None,
            ..DecodeOptions::default()
        };
        match run_decode(stage, &gpu, &problem, &opts) {
            Ok((report, _)) => {
                let check = report.check.expect("checking was asked for");
                if !check.passed {
                    failures.push(format!(
                        "{problem}, {} splits (seed {}): {}",
                        report.splits,
                        report.seed,
                        check.summary()
                    ));
                }
            }
            // Head dim 256's ring of K/V tiles (200 KiB) is more shared memory than an
            // A100's block may have: nothing of this dim can run here.
            Err(e @ crate::Error::SharedMemoryOverLimit { .. }) => {
                crate::testing::skip(e);
                return;
            }
            Err(e) => failures.push(format!("{problem}: {e}")),
        }
    }
    assert!(
        failures.is_empty(),
        "stage {} failed on:\n{}",
        stage.info().label(),
        failures.join("\n")
    );
}

/// The `#[ignore]`d GPU tests of a decode stage.
#[macro_export]
macro_rules! decode_gpu_tests {
    ($stage:expr) => {
        $crate::decode_gpu_tests!(@one $stage, bf16_d64, Bf16, 64, SHAPES);
        $crate::decode_gpu_tests!(@one $stage, bf16_d128, Bf16, 128, SHAPES);
        $crate::decode_gpu_tests!(@one $stage, f16_d64, F16, 64, SHAPES);
        $crate::decode_gpu_tests!(@one $stage, f16_d128, F16, 128, SHAPES);
        $crate::decode_gpu_tests!(@one $stage, paged_bf16_d128, Bf16, 128, PAGED);
        $crate::decode_gpu_tests!(@one $stage, paged_f16_d64, F16, 64, PAGED);
        $crate::decode_gpu_tests!(@one $stage, odd_lengths_bf16_d128, Bf16, 128, ODD_LENGTHS);
        $crate::decode_gpu_tests!(@one $stage, bf16_d256, Bf16, 256, SHAPES);
        $crate::decode_gpu_tests!(@one $stage, f16_d256, F16, 256, SHAPES);
        $crate::decode_gpu_tests!(@one $stage, paged_bf16_d256, Bf16, 256, PAGED);
    };
    (@one $stage:expr, $name:ident, $dtype:ident, $dim:expr, $cases:ident) => {
        #[test]
        #[ignore = "needs an NVIDIA GPU (compute capability 8.0+); `just test` runs it where one is present"]
        fn $name() {
            $crate::decode::testing::assert_decode_cases(
                &$stage,
                $crate::DType::$dtype,
                $dim,
                $crate::decode::testing::$cases,
            );
        }
    };
}
