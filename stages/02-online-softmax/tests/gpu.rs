//! Stage 2 on the GPU against the oracle, over the shape grid of `harness::testing`.
harness::gpu_tests!(stage02_online_softmax::STAGE);
