//! Stage 13 on the GPU against the oracle, over the shape grid of `harness::testing`.
//! Hopper only: on any other GPU each test is reported ignored, with the reason.
harness::gpu_tests!(stage13_ping_pong::STAGE);
