//! Stage 15 on the GPU against the oracle, over the decode grid of `harness::decode::testing`.
harness::gpu_tests!(stage15_fused_combine::STAGE);
