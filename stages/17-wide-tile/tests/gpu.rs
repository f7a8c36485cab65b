//! Stage 17 on the GPU against the oracle, over the shape grid of `harness::testing`.
//! Hopper only: on any other GPU each test is reported ignored, with the reason.
harness::gpu_tests!(stage17_wide_tile::STAGE);
