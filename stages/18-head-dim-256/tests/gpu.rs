//! Stage 18 on the GPU against the oracle, over the shape grid of `harness::testing` at
//! each of its head dims, 256 included. Hopper only: on any other GPU each test is
//! reported ignored, with the reason.
harness::gpu_tests!(stage18_head_dim_256::STAGE);
