//! Stage 5 on the GPU against the oracle, over the shape grid of `harness::testing`.
harness::gpu_tests!(stage05_cp_async::STAGE);
