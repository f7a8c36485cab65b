//! The GPU tests every decode stage runs: its kernels against the oracle over one grid of
//! decode problems. A stage's `tests/gpu.rs` is the prefill stages' one line,
//! `harness::gpu_tests!(my_stage::STAGE);` ([`crate::testing`]), which runs these for a
//! decode stage: ignored, with the reason, where they cannot check anything.

use super::run::{DecodeOptions, run_decode};
use super::{DecodeProblem, KvLayout};
use crate::testing::runner::{Checked, Needs, Skipped, assert_no_failures, gpu_for, trial};
use crate::{DType, DecodeStage, Error};
use libtest_mimic::Trial;

/// The most shared memory a block may opt into on an sm_90 GPU (H100, H200), the decode
/// stages' target: 227 KiB. Every configuration of the grid must fit in it.
pub const SM90_MAX_SMEM_PER_BLOCK: u32 = 227 * 1024;

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

/// Runs `stage` on every case for one dtype and head dim and panics with every failure;
/// `Err` where this GPU cannot run the stage ([`gpu_for`]), or could not run some of the
/// cases for want of shared memory (see below), when every case it ran passed.
pub fn assert_decode_cases(
    stage: &dyn DecodeStage,
    dtype: DType,
    head_dim: usize,
    cases: &[Case],
) -> Checked {
    let gpu = gpu_for(stage.info())?;
    let mut failures = Vec::new();
    let mut skipped = Vec::new();
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
            // The one reason besides `gpu_for`'s for a case to check nothing: it needs
            // more shared memory than this GPU gives a block (head dim 256's ring of K/V
            // tiles, 200 KiB, on an A100's 163 KiB), on a GPU that is not the target, for
            // a configuration that fits the target. On an sm_90 GPU, or past what one
            // gives, it fails: a change that pushes a kernel over an H100's limit is a
            // regression, never a skip.
            Err(
                e @ Error::SharedMemoryOverLimit {
                    static_bytes,
                    dynamic_bytes,
                    ..
                },
            ) => {
                let needed = u64::from(static_bytes) + u64::from(dynamic_bytes);
                if gpu.compute_capability != (9, 0) && needed <= u64::from(SM90_MAX_SMEM_PER_BLOCK)
                {
                    skipped.push(format!("{problem}: {e}"));
                } else {
                    failures.push(format!(
                        "{problem}: {e} (every decode configuration must fit an sm_90 GPU's {SM90_MAX_SMEM_PER_BLOCK} bytes)"
                    ));
                }
            }
            Err(e) => failures.push(format!("{problem}: {e}")),
        }
    }
    assert_no_failures(stage.info(), &failures);
    match skipped.first() {
        None => Ok(()),
        Some(first) => Err(Skipped(format!(
            "{} of {} cases need more shared memory per block than {} gives, and were not run; the other cases passed. The first: {first}",
            skipped.len(),
            cases.len(),
            gpu.name
        ))),
    }
}

/// The tests of a decode stage's `tests/gpu.rs` ([`gpu_tests!`](crate::gpu_tests)), by
/// name: (dtype, head dim, cases).
pub fn decode_trials(stage: &'static dyn DecodeStage) -> Vec<Trial> {
    use DType::{Bf16, F16};
    let grid: [(&str, DType, usize, &'static [Case]); 10] = [
        ("bf16_d64", Bf16, 64, SHAPES),
        ("bf16_d128", Bf16, 128, SHAPES),
        ("f16_d64", F16, 64, SHAPES),
        ("f16_d128", F16, 128, SHAPES),
        ("paged_bf16_d128", Bf16, 128, PAGED),
        ("paged_f16_d64", F16, 64, PAGED),
        ("odd_lengths_bf16_d128", Bf16, 128, ODD_LENGTHS),
        ("bf16_d256", Bf16, 256, SHAPES),
        ("f16_d256", F16, 256, SHAPES),
        ("paged_bf16_d256", Bf16, 256, PAGED),
    ];
    let needs = Needs::Stage(stage.info());
    grid.into_iter()
        .map(|(name, dtype, head_dim, cases)| {
            trial(name, needs, move || {
                assert_decode_cases(stage, dtype, head_dim, cases)
            })
        })
        .collect()
}
