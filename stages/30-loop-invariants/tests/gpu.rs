//! Stage 30 on the GPU against the oracle, over the shape grid of `harness::testing` at
//! each of its head dims (64, 128, 256). Hopper only: on any other GPU each test is
//! reported ignored, with the reason.
harness::gpu_tests!(stage30_loop_invariants::STAGE);
