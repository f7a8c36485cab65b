//! Stage 6 on the GPU against the oracle, over the shape grid of `harness::testing`.
harness::gpu_tests!(stage06_fewer_instructions::STAGE);
