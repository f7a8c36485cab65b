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
