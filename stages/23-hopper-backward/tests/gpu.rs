//! Stage 23 on the GPU: dQ, dK and dV against the f64 backward over the shape grid, and the
//! deterministic order's same bits on every run (`harness::backward::testing`). Hopper
//! only: on any other GPU each test is reported ignored, with the reason.
harness::gpu_tests!(stage23_hopper_backward::STAGE);
