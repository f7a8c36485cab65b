//! Stage 3 on the GPU against the oracle, over the shape grid of `harness::testing`.
harness::gpu_tests!(stage03_tensor_cores::STAGE);
