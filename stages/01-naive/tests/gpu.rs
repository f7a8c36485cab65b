//! Stage 1 on the GPU against the oracle, over the shape grid of `harness::testing`.
harness::gpu_tests!(stage01_naive::STAGE);
