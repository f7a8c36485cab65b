//! Stage 9 on the GPU against the oracle, over the shape grid of `harness::testing`.
harness::gpu_tests!(stage09_lean_softmax::STAGE);
