//! Stage 4 on the GPU against the oracle, over the shape grid of `harness::testing`.
harness::gpu_tests!(stage04_swizzle::STAGE);
