//! Stage 7 on the GPU against the oracle, over the shape grid of `harness::testing`.
harness::gpu_tests!(stage07_fa2_shape::STAGE);
