//! Stage 8 on the GPU against the oracle, over the shape grid of `harness::testing`.
harness::gpu_tests!(stage08_mask_split::STAGE);
