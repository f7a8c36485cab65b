//! Stage 25 on the GPU: dQ, dK and dV against the f64 backward over the shape grid, and the
//! deterministic order's same bits on every run (`harness::backward::testing`).
harness::gpu_tests!(stage25_backward_warp_tiles::STAGE);
