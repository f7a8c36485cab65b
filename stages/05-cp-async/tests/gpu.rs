//! Stage 5 on the GPU against the oracle, over the shape grid of `harness::testing`.
harness::gpu_tests!(stage05_cp_async::STAGE);

/// Every compiled (warps, stages) variant, not only the default, is correct.
#[test]
#[ignore = "needs an NVIDIA GPU (compute capability 8.0+); `just test` runs it where one is present"]
fn every_variant_bf16_d128_causal() {
    for variant in stage05_cp_async::VARIANTS {
        // SAFETY (of set_var): the tests of this binary run one at a time (--test-threads=1
        // in the bundle), and this is the only test that touches the variable.
        unsafe { std::env::set_var("FLASHLAB_STAGE5", variant.name()) };
        harness::testing::assert_stage_on_grid(
            &stage05_cp_async::STAGE,
            harness::DType::Bf16,
            128,
            true,
        );
    }
    unsafe { std::env::remove_var("FLASHLAB_STAGE5") };
}

/// The lazy rescale on inputs whose scores jump, moderately (a rescale) and steeply.

#[test]
#[ignore = "needs an NVIDIA GPU (compute capability 8.0+); `just test` runs it where one is present"]
fn score_jumps_d128() {
    for name in ["w4m2k64s2bxrcfjv", "w4m2k64s2bxrcv", "w4m2k64s2bxrc"] {
        // SAFETY: as in every_variant_bf16_d128_causal; this test runs alone too.
        unsafe { std::env::set_var("FLASHLAB_STAGE5", name) };
        for dtype in [harness::DType::Bf16, harness::DType::F16] {
            for causal in [false, true] {
                harness::testing::assert_stage_on_score_jumps(&stage05_cp_async::STAGE, dtype, 128, causal);
            }
        }
    }
    unsafe { std::env::remove_var("FLASHLAB_STAGE5") };
}
